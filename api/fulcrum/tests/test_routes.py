"""Every object and action the API serves is in api/openapi.yaml.

Walks Django's URL resolver under /api/v1/ on its own (not through drf-spectacular, which
writes the file) and fails on any route and method the committed schema does not list.
"""

import re
from pathlib import Path

import yaml
from django.urls import URLResolver, get_resolver

OPENAPI = Path(__file__).resolve().parents[2] / "openapi.yaml"
PREFIX = "api/v1/"
# Not operations: the schema itself and its documentation page, and DRF's router index
# (the browsable API's list of one router's collections).
NOT_OPERATIONS = {"schema", "docs", "api-root"}
SAFE_EXTRAS = {"options", "head"}  # answered by every view, never listed


def routes(patterns=None, prefix=""):
    """(route, URL pattern) for every URL pattern, its includes' prefixes joined."""
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from routes(pattern.url_patterns, route)
        else:
            yield route, pattern


def as_openapi_path(route):
    """``api/v1/^pools/(?P<pk>[^/.]+)/$`` -> ``/api/v1/pools/{}/``: variables unnamed."""
    route = route.replace("^", "").replace("$", "").replace("\\", "")
    route = re.sub(r"\(\?P<\w+>[^)]*\)|<(?:\w+:)?\w+>", "{}", route)
    return "/" + route


def methods(callback):
    """The HTTP methods a view answers, as openapi.yaml names them."""
    view = callback.cls
    allowed = set(view.http_method_names) - SAFE_EXTRAS
    if getattr(callback, "actions", None):  # a viewset route: the router's method -> action map
        return sorted(set(callback.actions) & allowed)
    return sorted(method for method in allowed if hasattr(view, method))


def served_operations():
    for route, pattern in routes():
        if not route.startswith(PREFIX) or pattern.name in NOT_OPERATIONS:
            continue
        if "format" in pattern.pattern.regex.groupindex:  # /pools.json: the same operations again
            continue
        for method in methods(pattern.callback):
            yield method, as_openapi_path(route)


def documented_operations():
    paths = yaml.safe_load(OPENAPI.read_text())["paths"]
    return {(method, re.sub(r"\{\w+\}", "{}", path)) for path, operations in paths.items() for method in operations}


def test_every_route_and_method_is_in_openapi_yaml():
    served = set(served_operations())
    assert served, "no route found under /api/v1/"
    missing = sorted(served - documented_operations(), key=lambda op: (op[1], op[0]))
    assert not missing, "served but not in api/openapi.yaml (run `make openapi`):\n" + "\n".join(
        f"  {method.upper()} {path}" for method, path in missing
    )


def test_the_walk_sees_what_the_routers_make():
    """The walk itself: a collection, an object, an action and a plain view are all found."""
    served = set(served_operations())
    for operation in [
        ("get", "/api/v1/pools/"),
        ("delete", "/api/v1/pools/{}/"),
        ("post", "/api/v1/members/{}/runtime/"),
        ("patch", "/api/v1/ipvs-sync/"),
    ]:
        assert operation in served
    assert ("put", "/api/v1/certificates/{}/") not in served  # the view refuses PUT
