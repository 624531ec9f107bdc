"""Pages of list answers (``?limit=&offset=``) and the query parameters views read: a bad
value is a 400 on the parameter's name, never silently replaced by a default."""

import re

from rest_framework import pagination
from rest_framework.exceptions import ValidationError

MAX_LIMIT = 1000
# ASCII digits only: int() would also take "1_000", " 7" and other scripts' digits.
WHOLE_NUMBER = re.compile(r"-?[0-9]{1,4000}")  # int() refuses longer


def int_param(request, name, default=None, minimum=None, maximum=None):
    """The query parameter ``name`` as an integer; ``default`` when it is absent."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not WHOLE_NUMBER.fullmatch(raw):
        raise ValidationError({name: ["Must be a whole number."]})
    value = int(raw)
    if minimum is not None and value < minimum:
        raise ValidationError({name: [f"Must be at least {minimum}."]})
    if maximum is not None and value > maximum:
        raise ValidationError({name: [f"Must be at most {maximum}."]})
    return value


def bool_param(request, name, default):
    """The query parameter ``name`` as true (true, 1) or false (false, 0); ``default`` when absent."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if raw.lower() not in ("true", "1", "false", "0"):
        raise ValidationError({name: ["Must be true or false."]})
    return raw.lower() in ("true", "1")


def page_of(request, items):
    """The slice of ``items`` that ``?limit=&offset=`` asks for (offset >= 0, limit 1..1000):
    all of them from ``offset`` without a limit."""
    limit = int_param(request, "limit", minimum=1, maximum=MAX_LIMIT)
    offset = int_param(request, "offset", 0, minimum=0)
    return items[offset : None if limit is None else offset + limit]


class LimitOffsetPagination(pagination.LimitOffsetPagination):
    """DRF's limit/offset pages, with ``limit`` 1..1000 and ``offset`` >= 0 enforced."""

    max_limit = MAX_LIMIT

    def get_limit(self, request):
        return int_param(request, self.limit_query_param, self.default_limit, minimum=1, maximum=self.max_limit)

    def get_offset(self, request):
        return int_param(request, self.offset_query_param, 0, minimum=0)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        bounds = {
            self.limit_query_param: {"minimum": 1, "maximum": self.max_limit},
            self.offset_query_param: {"minimum": 0},
        }
        for parameter in parameters:
            parameter["schema"].update(bounds.get(parameter["name"], {}))
        return parameters
