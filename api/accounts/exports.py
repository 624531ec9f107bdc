"""The audit log as a download: CSV or JSON Lines, streamed row by row."""

import csv
import json

from django.core.serializers.json import DjangoJSONEncoder
from django.http import StreamingHttpResponse
from django.utils import timezone
from rest_framework.exceptions import ValidationError

EXPORT_FORMATS = {"csv": "text/csv; charset=utf-8", "jsonl": "application/jsonl; charset=utf-8"}
COLUMNS = [
    "id",
    "time",
    "actor",
    "token",
    "address",
    "method",
    "path",
    "action",
    "object_type",
    "object_id",
    "object_name",
    "status",
    "changes",
    "related",
    "body",
    "detail",
]
JSON_COLUMNS = {"changes", "related", "body"}
# A spreadsheet runs a cell that starts with one of these as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _row(entry):
    return {
        "id": entry.id,
        "time": entry.time.isoformat(),
        "actor": entry.actor_name,
        "token": entry.token_name,
        "address": entry.address,
        "method": entry.method,
        "path": entry.path,
        "action": entry.action,
        "object_type": entry.object_type,
        "object_id": entry.object_id,
        "object_name": entry.object_name,
        "status": entry.status_code,
        "changes": entry.changes,
        "related": entry.related,
        "body": entry.body,
        "detail": entry.detail,
    }


def _cell(name, value):
    if name in JSON_COLUMNS:
        return json.dumps(value, cls=DjangoJSONEncoder, sort_keys=True)
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


class _Line:
    """A file-like object csv.writer writes one line into, for streaming."""

    def write(self, text):
        return text


def _csv_lines(entries):
    writer = csv.writer(_Line())
    yield writer.writerow(COLUMNS)
    for entry in entries:
        row = _row(entry)
        yield writer.writerow([_cell(name, row[name]) for name in COLUMNS])


def _jsonl_lines(entries):
    for entry in entries:
        yield json.dumps(_row(entry), cls=DjangoJSONEncoder, sort_keys=True) + "\n"


def export_response(queryset, fmt):
    """A streamed attachment of ``queryset`` (already filtered) in ``fmt``."""
    if fmt not in EXPORT_FORMATS:
        raise ValidationError({"format": [f"Expected one of: {', '.join(EXPORT_FORMATS)}."]})
    entries = queryset.iterator(chunk_size=500)
    lines = _csv_lines(entries) if fmt == "csv" else _jsonl_lines(entries)
    response = StreamingHttpResponse(lines, content_type=EXPORT_FORMATS[fmt])
    name = f"fulcrum-audit-{timezone.now():%Y%m%dT%H%M%SZ}.{fmt}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
