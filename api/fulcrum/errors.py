"""One error shape for the whole API."""

from django.db.models import ProtectedError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from fulcrum.concurrency import VersionConflict


def exception_handler(exc, context):
    """DRF's handler, plus 409 for deleting an object that others still use and for a
    write whose version is stale (with the current version)."""
    if isinstance(exc, ProtectedError):
        users = sorted({str(obj) for obj in exc.protected_objects})
        return Response(
            {"detail": f"still in use by: {', '.join(users)}"},
            status=status.HTTP_409_CONFLICT,
        )
    if isinstance(exc, VersionConflict):
        return Response({"detail": exc.detail, "version": exc.current}, status=exc.status_code)
    return drf_exception_handler(exc, context)
