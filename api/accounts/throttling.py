"""Sign-in throttles: per client address (DRF's ``login`` rate) and per username.

The per-username limit counts failed sign-ins in the audit log, so it holds across
addresses and across API worker processes without another service: after
``FULCRUM_LOGIN_FAILURES`` failures within ``FULCRUM_LOGIN_WINDOW`` seconds (since the
last success), that username is refused with 429 until the oldest of those failures
leaves the window. A refused attempt does not check the password and does not count.
"""

import math
from datetime import timedelta

from django.conf import settings
from django.core.cache import caches
from django.utils import timezone
from rest_framework import permissions
from rest_framework.exceptions import Throttled
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from accounts.choices import AuditAction
from accounts.models import AuditEntry
from accounts.network import client_address


class LoginRateThrottle(ScopedRateThrottle):
    """DRF's scoped throttle keyed by the real client address (X-Forwarded-For only from
    trusted proxies: DRF's own ``get_ident`` believes any client's header), counted in the
    database-backed ``throttle`` cache that every API worker process shares."""

    cache = caches["throttle"]

    def get_ident(self, request):
        return client_address(request) or "unknown"


class OpenThrottledView(APIView):
    """Base for endpoints anyone may call without signing in (what they take is the
    credential: a password, a join code), throttled per client address at the rate of
    ``throttle_scope``."""

    permission_classes = [permissions.AllowAny]
    authentication_classes = []
    throttle_classes = [LoginRateThrottle]


class UsernameLocked(Throttled):
    default_detail = "Too many failed sign-ins for this username."

    def __init__(self, wait):
        super().__init__(wait=wait, detail=f"Too many failed sign-ins for this username; try again in {wait} s.")


def recent_failures(username):
    """Failed sign-ins for ``username`` in the window and since its last success, newest first."""
    since = timezone.now() - timedelta(seconds=settings.FULCRUM_LOGIN_WINDOW)
    entries = AuditEntry.objects.filter(actor_name=username, time__gte=since)
    success = entries.filter(action=AuditAction.SIGN_IN).order_by("-time").values_list("time", flat=True).first()
    failures = entries.filter(action=AuditAction.SIGN_IN_FAILED)
    if success is not None:
        failures = failures.filter(time__gt=success)
    return failures.order_by("-time").values_list("time", flat=True)


def check_username(username):
    """Raise 429 (with Retry-After) while ``username`` is locked."""
    limit = settings.FULCRUM_LOGIN_FAILURES
    failures = list(recent_failures(username)[:limit])
    if len(failures) < limit:
        return
    unlock = failures[-1] + timedelta(seconds=settings.FULCRUM_LOGIN_WINDOW)
    raise UsernameLocked(max(1, math.ceil((unlock - timezone.now()).total_seconds())))
