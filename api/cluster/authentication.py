"""Node agents authenticate with ``Authorization: Node <token>``."""

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from cluster import standby
from cluster.models import Node, hash_token


class NodeTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Node"

    def authenticate(self, request):
        words = authentication.get_authorization_header(request).split()
        if not words or words[0].decode(errors="replace") != self.keyword:
            return None
        if len(words) != 2:
            raise exceptions.AuthenticationFailed("Expected 'Authorization: Node <token>'.")
        node = Node.objects.filter(token_hash=hash_token(words[1].decode(errors="replace"))).first()
        if node is None:
            raise exceptions.AuthenticationFailed("Unknown node token.")
        if not standby.is_standby():  # a read-only copy, or fenced: the primary records its own
            Node.objects.filter(pk=node.pk).update(last_seen=timezone.now())
        return (None, node)

    def authenticate_header(self, request):
        return self.keyword


class IsNode:
    """Permission: the request was authenticated as a node."""

    def has_permission(self, request, view):
        return isinstance(request.auth, Node)

    def has_object_permission(self, request, view, obj):
        return self.has_permission(request, view)


class NodeTokenScheme(OpenApiAuthenticationExtension):
    """Describes node-token authentication in openapi.yaml."""

    target_class = NodeTokenAuthentication
    name = "nodeToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Node <token>`: the token shown once when the node was created.",
        }
