"""Lists searched and sorted on the server (``?search=`` and ``?ordering=``), so that a console
showing one page of 10,000 services never downloads them all. DRF's filters, made strict as
the other query parameters are (``fulcrum.pagination``): a bad value is a 400 on its name.

A view lists what may be searched in ``search_fields`` (DRF's: model lookups, each word must
appear in one of them, case-insensitively) and what may be sorted in ``ordering_fields``:
{the column's name in the API: the model lookup it sorts by}.
"""

from rest_framework import filters, serializers
from rest_framework.exceptions import ValidationError

SEARCH_MAX = 200


class Search(filters.SearchFilter):
    """``?search=web 10.0.0``: the rows where every word appears in one of the view's
    ``search_fields``."""

    search_description = "Only the rows where every word appears in one of their searched fields (case-insensitive)."

    def get_search_terms(self, request):
        field = serializers.CharField(trim_whitespace=False, allow_blank=True, max_length=SEARCH_MAX)
        try:
            value = field.run_validation(request.query_params.get(self.search_param, ""))
        except serializers.ValidationError as error:
            raise ValidationError({self.search_param: error.detail}) from None
        return filters.search_smart_split(value)


class Ordering(filters.OrderingFilter):
    """``?ordering=vip,-port``: sorted by these columns of the view's ``ordering_fields``, each
    ascending, or descending after a ``-``; then by id, so that pages neither repeat nor skip a
    row. Without it, the model's own order."""

    def get_ordering(self, request, queryset, view):
        raw = request.query_params.get(self.ordering_param)
        if raw is None:
            return self.get_default_ordering(view)
        columns = view.ordering_fields
        ordering = []
        for term in raw.split(","):
            name = term.strip().removeprefix("-")
            if name not in columns:
                known = ", ".join(columns)
                raise ValidationError({self.ordering_param: [f"Unknown column {name!r}: one of {known}."]})
            ordering.append(("-" if term.strip().startswith("-") else "") + columns[name])
        return [*ordering, "pk"]

    def get_schema_operation_parameters(self, view):
        columns = ", ".join(view.ordering_fields)
        return [
            {
                "name": self.ordering_param,
                "required": False,
                "in": "query",
                "description": f"Comma-separated columns to sort by ({columns}); a leading - sorts one descending.",
                "schema": {"type": "string"},
            }
        ]
