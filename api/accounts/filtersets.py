"""Filters of the audit log (list and export share them)."""

from datetime import UTC, datetime, time

from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError

from accounts.choices import AuditStatus

AUDIT_FILTERS = [
    OpenApiParameter("actor", str, description="username (exact)"),
    OpenApiParameter("action", str, description="e.g. update, or several: create,update,delete"),
    OpenApiParameter("object_type", str, description="e.g. pool, virtual-service, user, api-token"),
    OpenApiParameter("object_name", str, description="the object's name (exact, any case)"),
    OpenApiParameter("since", str, description="ISO 8601 time or date: entries at or after it"),
    OpenApiParameter("until", str, description="ISO 8601 time or date: entries before it"),
    OpenApiParameter("status", str, description="ok, failed, or an HTTP status code"),
    OpenApiParameter("q", str, description="text in the path, object name, actor or detail"),
]


def _moment(name, raw):
    """An aware datetime from an ISO time or date (a date means its midnight, UTC)."""
    try:
        value = parse_datetime(raw)
        if value is None and parse_date(raw) is not None:
            value = datetime.combine(parse_date(raw), time.min)
    except ValueError:
        value = None
    if value is None:
        raise ValidationError({name: ["Expected an ISO 8601 time (2025-01-31T12:00:00Z) or date (2025-01-31)."]})
    return value if timezone.is_aware(value) else timezone.make_aware(value, UTC)


def _status(raw):
    if raw == AuditStatus.OK:
        return Q(status_code__lt=400) | Q(status_code__isnull=True)
    if raw == AuditStatus.FAILED:
        return Q(status_code__gte=400)
    if raw.isdigit() and len(raw) == 3:
        return Q(status_code=int(raw))
    raise ValidationError({"status": ["Expected ok, failed or an HTTP status code."]})


def filter_audit(queryset, params):
    """``queryset`` narrowed by the query parameters in ``AUDIT_FILTERS``; 400 for bad ones."""
    if params.get("actor"):
        queryset = queryset.filter(actor_name=params["actor"])
    if params.get("action"):
        queryset = queryset.filter(action__in=[a.strip() for a in params["action"].split(",") if a.strip()])
    if params.get("object_type"):
        queryset = queryset.filter(object_type=params["object_type"])
    if params.get("object_name"):
        queryset = queryset.filter(object_name__iexact=params["object_name"])
    if params.get("since"):
        queryset = queryset.filter(time__gte=_moment("since", params["since"]))
    if params.get("until"):
        queryset = queryset.filter(time__lt=_moment("until", params["until"]))
    if params.get("status"):
        queryset = queryset.filter(_status(params["status"]))
    if params.get("q"):
        text = params["q"]
        queryset = queryset.filter(
            Q(path__icontains=text)
            | Q(object_name__icontains=text)
            | Q(actor_name__icontains=text)
            | Q(detail__icontains=text)
        )
    return queryset
