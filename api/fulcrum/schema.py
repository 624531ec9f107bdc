"""The error answers every operation can give, declared once in openapi.yaml.

Views declare their successes and the errors only they give (a 409 with ``problems``);
this postprocessing hook adds the rest to every operation, each as a shared response
under components/responses, from what the operation takes: any request (400: a bad query
parameter; 403), credentials (401), a path id (404), a change or delete (409), a body (413,
415), a throttle (429). Every error answer has the ``Error`` shape fulcrum.errors and DRF
produce, except 409's ``ConflictError`` (``{detail, version}``). The schema extension at the
end marks the bodies of strict serializers ``additionalProperties: false``.
"""

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.settings import spectacular_settings

from compiler import catalog, rules

ERROR = "Error"
ERROR_REF = {"$ref": f"#/components/schemas/{ERROR}"}

FIELD_ERRORS_SCHEMA = {
    "description": "A field's messages; for a list or nested object, the messages per item index or "
    "sub-field (valid items give an empty object).",
    "anyOf": [
        {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "object", "additionalProperties": True}]}},
        {"type": "object", "additionalProperties": True},
    ],
}

ERROR_SCHEMA = {
    "type": "object",
    "description": "Why a request was refused. One of: `{detail}`; field errors `{field: [message]}` "
    "(`non_field_errors` for the object as a whole); `{detail, problems}` when the compiler or a node "
    "refused.",
    "properties": {
        "detail": {"type": "string", "description": "What went wrong, for a person."},
        "non_field_errors": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Problems of the object as a whole.",
        },
        "problems": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "message": {"type": "string"}},
                "required": ["path", "message"],
            },
            "description": "Each object the check refused, with why.",
        },
    },
    "additionalProperties": FIELD_ERRORS_SCHEMA,
}
# Its own shape: ``version`` is also a field name, whose errors are a list of messages.
CONFLICT = "ConflictError"
CONFLICT_SCHEMA = {
    "type": "object",
    "description": "Not changed: `{detail, version}` when the version sent is stale, `{detail}` when the "
    "object is still in use.",
    "properties": {
        "detail": {"type": "string", "description": "What went wrong, for a person."},
        "version": {"type": "integer", "description": "The current version: read the object again, repeat."},
    },
    "required": ["detail"],
}
SCHEMAS = {ERROR: ERROR_SCHEMA, CONFLICT: CONFLICT_SCHEMA}

# status code -> (component name under components/responses, description)
RESPONSES = {
    "400": (
        "BadRequest",
        "Bad input: field errors, or `detail` for a body that is not JSON or a bad parameter. Nothing changed.",
    ),
    "401": ("Unauthorized", "No credentials, or unknown, expired or revoked ones."),
    "403": ("Forbidden", "Not allowed: your role does not permit this, or wrong username or password."),
    "404": ("NotFound", "No such object."),
    "409": ("Conflict", "Not changed: the version sent is stale, or the object is still in use."),
    "413": ("PayloadTooLarge", "The request body is larger than the limit."),
    "415": ("UnsupportedMediaType", "The body is not sent as `application/json`."),
    "429": ("TooManyRequests", "Too many attempts: wait for the seconds in `Retry-After`."),
}
WRITES = {"put", "patch", "delete"}


def declare_error_responses(result, generator, **kwargs):
    """drf-spectacular postprocessing hook: add the error answers to every operation."""
    _register_components(generator.registry)
    views = {(path, method.lower()): callback.cls for path, _, method, callback in generator.endpoints}
    for path, operations in result["paths"].items():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            for code in error_statuses(method, operation, views.get((path, method))):
                _declare(responses, code)
            for code, response in responses.items():
                if code >= "400" and "$ref" not in response and "content" not in response:
                    response["content"] = {"application/json": {"schema": ERROR_REF}}
            operation["responses"] = dict(sorted(responses.items()))
    result["components"] = generator.registry.build(spectacular_settings.APPEND_COMPONENTS)
    return result


def _register_components(registry):
    for name, schema in SCHEMAS.items():
        registry.register_on_missing(
            ResolvedComponent(name=name, type=ResolvedComponent.SCHEMA, object=name, schema=schema)
        )
    for code, (name, description) in RESPONSES.items():
        schema = {"$ref": f"#/components/schemas/{CONFLICT if code == '409' else ERROR}"}
        response = {"description": description, "content": {"application/json": {"schema": schema}}}
        registry.register_on_missing(
            ResolvedComponent(name=name, type=ResolvedComponent.RESPONSE, object=name, schema=response)
        )


def error_statuses(method, operation, view):
    """The error status codes ``operation`` can answer, from what it takes."""
    where = {parameter["in"] for parameter in operation.get("parameters", [])}
    body = "requestBody" in operation
    codes = {"400", "403"}  # any request: fulcrum.limits refuses NUL in any query parameter
    if any(operation.get("security", [])):
        codes.add("401")
    if "path" in where:
        codes.add("404")
    if method in WRITES:
        codes.add("409")
    if body:
        codes |= {"413", "415"}
    if view is not None and getattr(view, "throttle_classes", None):
        codes.add("429")
    return sorted(codes)


def _declare(responses, code):
    """Add ``code`` as the shared response; one the view declared keeps its own shape, or Error's."""
    declared = responses.get(code)
    if declared is None:
        responses[code] = {"$ref": f"#/components/responses/{RESPONSES[code][0]}"}
        return
    content = declared.setdefault("content", {"application/json": {"schema": ERROR_REF}})
    schema = content.get("application/json", {}).get("schema")
    if schema is not None and schema != ERROR_REF:
        content["application/json"]["schema"] = {"anyOf": [schema, ERROR_REF]}


def error_page_statuses():
    """The error pages' status choices, for ENUM_NAME_OVERRIDES: they keep the name StatusEnum
    (the console's types use it) beside other fields named ``status`` with other choices."""
    return [(status, status) for status in rules.ERROR_PAGE_STATUSES]


class StrictSerializerExtension(OpenApiSerializerExtension):
    """A strict serializer's request body refuses unknown fields: openapi.yaml says so (not
    for those that leave them out, ``ignore_unknown``)."""

    target_class = "fulcrum.serializers._Strict"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        if direction == "request" and not self.target.ignore_unknown:
            schema["additionalProperties"] = False
        return schema


def declare_catalog(result, generator, **kwargs):
    """drf-spectacular postprocessing hook: the catalogue of choices (compiler.catalog: words,
    labels, layers) and the console's field patterns (compiler.rules), as ``x-fulcrum-catalog``,
    from which ``make openapi`` writes the console's module (fulcrum.console_catalog)."""
    result["x-fulcrum-catalog"] = {"choices": catalog.exported(), "patterns": rules.exported_patterns()}
    return result
