"""People with a role, for the accounts tests."""

from django.contrib.auth import get_user_model
from django.core.cache import cache, caches
from rest_framework.test import APIClient

from accounts.choices import Role
from accounts.models import ApiToken, Profile

PASSWORD = "correct horse battery"


def person(username, role=Role.VIEWER, password=PASSWORD, **extra):
    """A user with ``role`` (stored on the profile, as the users API does)."""
    user = get_user_model().objects.create_user(username, password=password, **extra)
    Profile.objects.filter(user=user).update(role=role)
    return get_user_model().objects.get(pk=user.pk)


def bearer(user, role=None, name="test", **kwargs):
    """A client that sends a new API token of ``user``'s; also returns the token row."""
    token, secret = ApiToken.issue(user, name, role or Profile.objects.get(user=user).role, **kwargs)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client, token, secret


def signed_in(username, password=PASSWORD, **client_kwargs):
    """A client with a console session (real sign-in, CSRF enforced unless told otherwise)."""
    client = APIClient(**{"enforce_csrf_checks": True, **client_kwargs})
    response = client.post("/api/v1/auth/login/", {"username": username, "password": password}, format="json")
    assert response.status_code == 200, response.data
    return client


def forget_throttles():
    """DRF's per-address throttle counts (the ``throttle`` cache, a table) and the process's
    cache, which outlive a test."""
    cache.clear()
    caches["throttle"].clear()
