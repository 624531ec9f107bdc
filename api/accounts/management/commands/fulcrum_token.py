"""Make a named API token for a person and print only the secret (for scripts and tests)."""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from accounts import audit
from accounts.api.serializers import MAX_TOKEN_DAYS
from accounts.choices import Role
from accounts.models import ApiToken, role_of
from fulcrum.validators import validate_name


class Command(BaseCommand):
    help = "Make an API token for USERNAME and print it (the secret is not stored and cannot be shown again)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", required=True, help="what the token is for")
        parser.add_argument("--role", choices=Role.values, help="at most the person's role (default: theirs)")
        parser.add_argument("--expires-in-days", type=int, help=f"1..{MAX_TOKEN_DAYS}; default: never expires")

    def handle(self, username, name, role, expires_in_days, **options):
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"no active user {username!r}")
        try:
            validate_name(name)
        except ValidationError as err:
            raise CommandError(f"--name: {' '.join(err.messages)}") from None
        own = role_of(user)
        role = role or own
        if Role.rank(role) > Role.rank(own):
            raise CommandError(f"{username} is {own}: a token cannot have role {role}")
        if expires_in_days is not None and not 1 <= expires_in_days <= MAX_TOKEN_DAYS:
            raise CommandError(f"--expires-in-days must be 1..{MAX_TOKEN_DAYS}")
        token, secret = ApiToken.issue(user, name, role, ApiToken.expiry(expires_in_days))
        audit.record_event("create", actor_name="system (fulcrum_token)", obj=token, detail=f"for {username}")
        self.stdout.write(secret)
