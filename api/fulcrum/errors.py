"""One error shape for the whole API."""

import re

from django.db import IntegrityError, OperationalError
from django.db.models import ProtectedError
from django.http import JsonResponse
from django.views import defaults
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from fulcrum.concurrency import VersionConflict

# A transaction that collided with another writer (serialization failure, deadlock): the
# writes that retry (revisions.publish.retrying) gave up; the client may try again at once.
_COLLIDED = {"40001", "40P01"}
RETRY_AFTER_S = 1

# PostgreSQL's detail of a unique violation: "Key (name)=(web) already exists."
_DUPLICATE_KEY = re.compile(r"Key \((?P<columns>[^)]+)\)=\((?P<values>.*)\) already exists")


def exception_handler(exc, context):
    """DRF's handler, plus 409 for deleting an object that others still use and for a
    write whose version is stale (with the current version), 400 for a unique value
    that a concurrent writer took between the serializer's check and the insert, and 503
    with Retry-After for a write that collided with another (never a 500)."""
    if isinstance(exc, ProtectedError):
        users = sorted({str(obj) for obj in exc.protected_objects})
        return Response(
            {"detail": f"still in use by: {', '.join(users)}"},
            status=status.HTTP_409_CONFLICT,
        )
    if isinstance(exc, VersionConflict):
        return Response({"detail": exc.detail, "version": exc.current}, status=exc.status_code)
    if isinstance(exc, IntegrityError) and getattr(exc.__cause__, "sqlstate", None) == "23505":
        return _duplicate(exc.__cause__)
    if isinstance(exc, OperationalError) and getattr(exc.__cause__, "sqlstate", None) in _COLLIDED:
        return Response(
            {"detail": "Another change was being written at the same moment; nothing was changed. Try again."},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(RETRY_AFTER_S)},
        )
    return drf_exception_handler(exc, context)


def _duplicate(violation):
    """The 400 the serializer's uniqueness check gives, for the writer that lost the race."""
    found = _DUPLICATE_KEY.search(getattr(violation.diag, "message_detail", None) or "")
    if not found:
        return Response({"detail": "This object already exists."}, status=status.HTTP_400_BAD_REQUEST)
    columns = [c.strip().removesuffix("_id") for c in found["columns"].split(",")]
    message = f"Another object has this {' and '.join(columns)} already ({found['values']})."
    field = columns[0] if len(columns) == 1 else "non_field_errors"
    return Response({field: [message]}, status=status.HTTP_400_BAD_REQUEST)


def _json_under_api(django_view, status_code, detail):
    """A Django error handler that answers JSON under /api/ and Django's page elsewhere."""

    def handler(request, *args, **kwargs):
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": detail}, status=status_code)
        return django_view(request, *args, **kwargs)

    return handler


# Errors raised outside DRF's views (no route, a suspicious request, a crash) answer in the
# API's own shape too; fulcrum.urls names them as Django's handler400/403/404/500.
bad_request = _json_under_api(defaults.bad_request, 400, "Bad request.")
permission_denied = _json_under_api(defaults.permission_denied, 403, "Forbidden.")
not_found = _json_under_api(defaults.page_not_found, 404, "Not found.")
server_error = _json_under_api(defaults.server_error, 500, "Internal server error: see the API's log.")
