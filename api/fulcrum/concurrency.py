"""Optimistic concurrency for every stored object an operator edits.

Each such model has a ``version`` that every change raises by one. A reader gets it in the
body and as the ``ETag`` of a detail answer; a writer that sends it back (``If-Match:
"<version>"``, or ``"version": N`` in the body) changes the object only if nobody changed
it meanwhile, and otherwise gets 409 with the current version. A writer that sends
neither writes as before (last write wins), so scripts opt in.
"""

from django.db import models, transaction
from django.db.models import F
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, ValidationError

VERSION_HELP = (
    "Raised by one on every change. Send it back (or If-Match) to change the object only if "
    "nobody else has changed it since; 409 otherwise."
)
VERSION_MAX = 2_147_483_647  # the column's range (PositiveIntegerField)
IF_MATCH = OpenApiParameter(
    "If-Match",
    str,
    location=OpenApiParameter.HEADER,
    required=False,
    description='The version read ("3" or 3): 409 if the object changed since.',
)


def version_field():
    return models.PositiveIntegerField(default=1, editable=False, help_text=VERSION_HELP)


class VersionConflict(APIException):
    """409 with the current version (see fulcrum.errors)."""

    status_code = status.HTTP_409_CONFLICT
    default_code = "version_conflict"

    def __init__(self, current):
        self.current = current
        super().__init__(
            f"Changed by someone else since you read it: version {current} is current. "
            "Read it again and repeat your change."
        )


def expected_version(request, serializer=None):
    """The version the writer read: from If-Match, else the body's ``version``; None if neither."""
    header = request.headers.get("If-Match")
    if header is not None:
        text = header.strip().removeprefix("W/").strip('"')
        if not (text.isascii() and text.isdigit()) or len(text) > len(str(VERSION_MAX)):
            raise ValidationError({"If-Match": ['Send the version you read, e.g. "3".']})
        return int(text)
    if serializer is not None:
        return serializer.validated_data.pop("version", None)
    return None


def check_version(instance, expected):
    """Lock ``instance``'s row until the transaction ends; 409 if its stored version is not
    ``expected`` (None: the writer sent none, last write wins)."""
    current = type(instance).objects.select_for_update().only("version").get(pk=instance.pk).version
    if expected is not None and expected != current:
        raise VersionConflict(current)


def bump(instance):
    """Raise ``instance``'s stored version by one and refresh it on the instance."""
    type(instance).objects.filter(pk=instance.pk).update(version=F("version") + 1)
    instance.refresh_from_db(fields=["version"])


class VersionedSerializerMixin:
    """Shows ``version`` and accepts it on writes (checked by the view, never stored)."""

    def get_fields(self):
        fields = super().get_fields()
        fields["version"] = serializers.IntegerField(
            required=False, min_value=1, max_value=VERSION_MAX, help_text=VERSION_HELP
        )
        return fields

    def create(self, validated_data):
        validated_data.pop("version", None)
        return super().create(validated_data)

    def update(self, instance, validated_data):
        validated_data.pop("version", None)
        return super().update(instance, validated_data)


class VersionedViewSetMixin:
    """DRF's update and destroy, with the version the writer read checked under a row lock
    just before the change, and an ETag on detail answers."""

    def _check(self, instance, expected):
        check_version(instance, expected)

    @transaction.atomic
    def perform_update(self, serializer):
        self._check(serializer.instance, expected_version(self.request, serializer))
        super().perform_update(serializer)
        bump(serializer.instance)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        detail = getattr(self, "action", None) in ("retrieve", "update", "partial_update")
        if detail and response.status_code == 200 and isinstance(response.data, dict) and "version" in response.data:
            response["ETag"] = f'"{response.data["version"]}"'
        return response

    @extend_schema(parameters=[IF_MATCH])
    def update(self, request, *args, **kwargs):
        return super().update(request, *args, **kwargs)

    @extend_schema(parameters=[IF_MATCH])
    def partial_update(self, request, *args, **kwargs):
        return super().partial_update(request, *args, **kwargs)

    @extend_schema(parameters=[IF_MATCH])
    @transaction.atomic
    def destroy(self, request, *args, **kwargs):
        # Checked here, not in perform_destroy, which some views replace (rules, certificates).
        self._check(self.get_object(), expected_version(request))
        return super().destroy(request, *args, **kwargs)
