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
from rest_framework.response import Response

VERSION_HELP = (
    "Raised by one on every change. Send it back (or If-Match) to change the object only if "
    "nobody else has changed it since; 409 otherwise."
)
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
        if not text.isdigit():
            raise ValidationError({"If-Match": ['Send the version you read, e.g. "3".']})
        return int(text)
    if serializer is not None:
        return serializer.validated_data.pop("version", None)
    return None


def bump(instance):
    """Raise ``instance``'s stored version by one and refresh it on the instance."""
    type(instance).objects.filter(pk=instance.pk).update(version=F("version") + 1)
    instance.refresh_from_db(fields=["version"])


class VersionedSerializerMixin:
    """Shows ``version`` and accepts it on writes (checked by the view, never stored)."""

    def get_fields(self):
        fields = super().get_fields()
        fields["version"] = serializers.IntegerField(required=False, min_value=1, help_text=VERSION_HELP)
        return fields

    def create(self, validated_data):
        validated_data.pop("version", None)
        return super().create(validated_data)

    def update(self, instance, validated_data):
        validated_data.pop("version", None)
        return super().update(instance, validated_data)


class VersionedViewSetMixin:
    """update / partial_update / destroy that honour the version the writer read, and an
    ETag on detail answers."""

    def _locked(self):
        instance = self.get_object()
        return type(instance).objects.select_for_update().get(pk=instance.pk)

    @staticmethod
    def _check(current, expected):
        if expected is not None and expected != current.version:
            raise VersionConflict(current.version)

    def retrieve(self, request, *args, **kwargs):
        response = super().retrieve(request, *args, **kwargs)
        if isinstance(response.data, dict) and "version" in response.data:
            response["ETag"] = f'"{response.data["version"]}"'
        return response

    @extend_schema(parameters=[IF_MATCH])
    @transaction.atomic
    def update(self, request, *args, **kwargs):
        partial = kwargs.pop("partial", False)
        instance = self._locked()
        serializer = self.get_serializer(instance, data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        self._check(instance, expected_version(request, serializer))
        self.perform_update(serializer)
        bump(serializer.instance)
        response = Response(self.get_serializer(serializer.instance).data)
        response["ETag"] = f'"{serializer.instance.version}"'
        return response

    @extend_schema(parameters=[IF_MATCH])
    def partial_update(self, request, *args, **kwargs):
        kwargs["partial"] = True
        return self.update(request, *args, **kwargs)

    @extend_schema(parameters=[IF_MATCH])
    @transaction.atomic
    def destroy(self, request, *args, **kwargs):
        instance = self._locked()
        self._check(instance, expected_version(request))
        self.perform_destroy(instance)
        return Response(status=status.HTTP_204_NO_CONTENT)
