"""People's API tokens: ``Authorization: Bearer <token>``."""

from datetime import timedelta

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from accounts.network import client_address
from cluster import standby

# How stale last_used_at may get before a request writes it again (one write per minute
# per token, not one per request).
LAST_USED_RESOLUTION = timedelta(seconds=60)


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """A named API token. Unknown, revoked and expired tokens, and those of deactivated
    people, are refused with 401 (the ``WWW-Authenticate`` header makes refusals 401)."""

    keyword = "Bearer"

    def authenticate(self, request):
        # Imported here: DRF loads this class while models are still being imported.
        from accounts.models import ApiToken, hash_secret

        words = authentication.get_authorization_header(request).split()
        if not words or words[0].decode(errors="replace").lower() != self.keyword.lower():
            return None
        if len(words) != 2:
            raise exceptions.AuthenticationFailed("Expected 'Authorization: Bearer <token>'.")
        secret = words[1].decode(errors="replace")
        token = ApiToken.objects.select_related("owner__profile").filter(token_hash=hash_secret(secret)).first()
        if token is None:
            raise exceptions.AuthenticationFailed("Unknown API token.")
        if token.state != "active":
            raise exceptions.AuthenticationFailed(f"This API token is {token.state}.")
        if not token.owner.is_active:
            raise exceptions.AuthenticationFailed("The token's owner is deactivated.")
        self._mark_used(token, client_address(request))
        return (token.owner, token)

    @staticmethod
    def _mark_used(token, address):
        from accounts.models import ApiToken

        now = timezone.now()
        fresh = token.last_used_at and now - token.last_used_at < LAST_USED_RESOLUTION
        if fresh and token.last_used_from == address:
            return
        if standby.is_standby():  # a read-only copy: the primary records its own uses
            return
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now, last_used_from=address)
        token.last_used_at, token.last_used_from = now, address

    def authenticate_header(self, request):
        return f'{self.keyword} realm="api"'


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """Describes API tokens in openapi.yaml."""

    target_class = BearerTokenAuthentication
    name = "bearerToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A named API token (`ful_...`), from `POST /api/v1/auth/token/` or `/api/v1/tokens/`.",
        }
