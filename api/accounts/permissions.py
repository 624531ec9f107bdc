"""The role contract, as DRF permissions (the default for every view).

- viewer: safe methods only (GET, HEAD, OPTIONS);
- operator: safe methods, plus the actions a view lists in ``operator_actions`` (DRF action
  names on viewsets, e.g. ``{"runtime"}``; the lower-case HTTP method on plain views);
- admin: everything (a Django superuser is always admin).

A view with ``admin_only = True`` refuses everyone else, even for reading. A request made
with an API token acts with the token's role, never more than its owner's current role.
Node agents are not people: their views set their own permission classes.
"""

from rest_framework.permissions import SAFE_METHODS, BasePermission

from accounts.choices import Role


def request_role(request):
    """The role this request acts with (None when nobody is signed in)."""
    # Imported here: DRF loads this module while models are still being imported.
    from accounts.models import ApiToken, role_of

    role = role_of(getattr(request, "user", None))
    if role is not None and isinstance(getattr(request, "auth", None), ApiToken):
        return Role.lower(role, request.auth.role)
    return role


def view_action(request, view):
    """The DRF action name on a viewset, else the lower-case HTTP method."""
    return getattr(view, "action", None) or request.method.lower()


class RolePermission(BasePermission):
    """Admins may do everything, operators what the view allows them, viewers read."""

    message = "Your role does not allow this."

    def has_permission(self, request, view):
        role = request_role(request)
        if role is None:
            return False
        if role == Role.ADMIN:
            return True
        if getattr(view, "admin_only", False):
            return False
        if request.method in SAFE_METHODS:
            return True
        return role == Role.OPERATOR and view_action(request, view) in getattr(view, "operator_actions", ())


class IsOperatorOrAdmin(RolePermission):
    """For views viewers may not even read (the audit log)."""

    def has_permission(self, request, view):
        role = request_role(request)
        return (
            role is not None and Role.rank(role) >= Role.rank(Role.OPERATOR) and super().has_permission(request, view)
        )


class IsSignedIn(BasePermission):
    """Any person, whatever their role: for what concerns only themselves (their
    password, their tokens, signing out)."""

    def has_permission(self, request, view):
        return request_role(request) is not None
