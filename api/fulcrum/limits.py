"""What a request may be, checked before any view reads it: a body of at most BODY_LIMIT
bytes, or what BODY_LIMITS gives its path (413 with a JSON message, whether its length is
announced or it comes chunked), and query parameters without NUL characters (which
PostgreSQL cannot store or compare: a 400 here rather than a database error later).

Django's DATA_UPLOAD_MAX_MEMORY_SIZE is one limit for every path, checked only where
``request.body`` is read, with a bare 400; it is set to the largest of ours, as a backstop.
"""

import io

from django.conf import settings
from django.core.handlers.wsgi import LimitedStream
from django.http import JsonResponse
from rest_framework import status
from rest_framework.exceptions import APIException


def body_limit(path=""):
    """The largest body accepted at ``path``: BODY_LIMIT, or more where BODY_LIMITS says so
    (a backup restore carries every certificate)."""
    return settings.BODY_LIMITS.get(path, settings.BODY_LIMIT)


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"

    def __init__(self, limit):
        super().__init__(f"The request body is larger than {limit} bytes.")


class RequestLimitsMiddleware:
    """Refuse a body over the limit or NUL in the query. A chunked body within the limit is
    read here, so the view sees an ordinary body of known length; a server that leaves the
    chunks undecoded (no ``wsgi.input_terminated``, e.g. Django's development server) gets
    411 for one."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        refused = self._refuse_query(request) or self._refuse_body(request)
        return refused if refused is not None else self.get_response(request)

    @staticmethod
    def _refuse_query(request):
        for name, values in request.GET.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                return JsonResponse({name: ["Must not contain NUL characters."]}, status=status.HTTP_400_BAD_REQUEST)
        return None

    @staticmethod
    def _refuse_body(request):
        length = request.META.get("CONTENT_LENGTH")
        if length:
            if not (length.isascii() and length.isdigit()):
                return _error(status.HTTP_400_BAD_REQUEST, "Content-Length is not a number.")
            limit = body_limit(request.path)
            return _error(413, PayloadTooLarge(limit).detail) if int(length) > limit else None
        if "chunked" not in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            return None
        if not request.META.get("wsgi.input_terminated"):
            return _error(
                status.HTTP_411_LENGTH_REQUIRED, "Send Content-Length: this server cannot read a chunked body."
            )
        limit = body_limit(request.path)
        body = request.META["wsgi.input"].read(limit + 1)
        if len(body) > limit:
            return _error(413, PayloadTooLarge(limit).detail)
        # From here on the request is one of known length, as if it had said so.
        request.META["CONTENT_LENGTH"] = str(len(body))
        request._stream = LimitedStream(io.BytesIO(body), len(body))
        return None


def _error(code, detail):
    return JsonResponse({"detail": str(detail)}, status=code)
