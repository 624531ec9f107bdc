"""Bad input anywhere gets a 4xx with a clear message and changes nothing.

Table-driven over every operation that takes a body, read from the schema the code
generates (so an endpoint added later is covered without being listed here): malformed
JSON, text that is not UTF-8, NaN, nesting too deep, a body that is not an object, the
wrong content type, a body over the size limit, unknown fields (top level and nested),
each field with a value of the wrong JSON type, NUL characters, values beyond the declared
bounds, and injection attempts in names. Each operation's batch runs between two
snapshots of the database (snapshots.freeze.freeze, every object's version, what agents
and publishing write, telemetry), which must be equal.

The size limit is also tried over real HTTP against gunicorn, as the appliance runs it,
with an announced length and with a chunked body; query parameters and path ids too.
"""

import json
from dataclasses import dataclass

import pytest
import requests
from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from accounts.choices import Role
from accounts.models import ApiToken
from accounts.tests.people import forget_throttles
from cluster.models import HaEvent, HaGroup, HaGroupNode, Node
from fulcrum.limits import body_limit
from fulcrum.tests.gunicorn import gunicorn_on_test_database
from revisions.models import NodeRevision, Revision
from services.models import HealthCheck, Member, Pool, Rule, VirtualService
from snapshots.freeze import freeze
from telemetry.models import HealthEvent, MemberHealth, TrafficSample

AGENT_PATHS = "/api/v1/agent/"

# Names end up in daemon configuration: each of these must be refused on the field.
BAD_NAMES = [
    "web\nbackend evil",
    "web\r\nx",
    "web}",
    "web{",
    "web#1",
    'we"b',
    "we'b",
    "we b",
    "web;reload",
    "../web",
    "-web",
    "",
    "x" * 64,
    "w\u0435b",  # a Cyrillic e
    "\uff57\uff45\uff42",  # "web" in fullwidth letters
    "w\u200beb",  # zero-width space
    "web\u202e",  # right-to-left override
]
WRONG_TYPE = {
    "string": 12345,
    "integer": "12",
    "number": "1.5",
    "boolean": "yes",
    "array": "not a list",
    "object": "not an object",
}
WRONG_ITEM = {"string": 12345, "integer": "12", "boolean": "yes"}


@dataclass(frozen=True)
class Operation:
    """One operation that takes a JSON body, with its request schema from the generated OpenAPI."""

    method: str
    path: str
    schema: dict
    components: dict
    responses: tuple  # the status codes it documents

    def __str__(self):
        return f"{self.method.upper()} {self.path}"

    def resolve(self, schema):
        while "$ref" in schema:
            schema = self.components[schema["$ref"].rsplit("/", 1)[1]]
        return schema

    @property
    def strict(self):
        return self.schema.get("additionalProperties") is False

    def properties(self):
        return {name: self.resolve(prop) for name, prop in self.schema.get("properties", {}).items()}

    def json_type(self, prop):
        """The JSON type a property takes (the first typed branch of oneOf/allOf/anyOf)."""
        prop = self.resolve(prop)
        for key in ("allOf", "oneOf", "anyOf"):
            for branch in prop.get(key, []):
                if kind := self.json_type(branch):
                    return kind
        if "type" in prop:
            return prop["type"]
        values = [v for v in prop.get("enum", []) if v not in ("", None)]
        if values:
            return "integer" if all(isinstance(v, int) for v in values) else "string"
        return None


def _operations():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    found = []
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body:
                schema = components[body["$ref"].rsplit("/", 1)[1]]
                found.append(Operation(method, path, schema, components, tuple(operation["responses"])))
    return found


OPERATIONS = _operations()


# ---- what a refused request must leave as it was


def database_state():
    """Every object the operator edits (the compiler's snapshot) and its version, plus what
    agents and publishing write."""
    versions = {
        model._meta.label: list(model.objects.order_by("pk").values_list("pk", "version"))
        for model in apps.get_models()
        if any(field.name == "version" for field in model._meta.concrete_fields)
    }
    return {
        "objects": freeze(0),
        "versions": versions,
        "revisions": list(Revision.objects.order_by("number").values_list("number", flat=True)),
        "node_revisions": list(NodeRevision.objects.order_by("pk").values_list("pk", "state", "message")),
        "nodes": list(
            Node.objects.order_by("pk").values(
                "name", "networks", "ipvs_status", "member_status", "vrrp_status", "applied_revision", "standby"
            )
        ),
        "ha_events": list(HaEvent.objects.order_by("pk").values_list("pk", flat=True)),
        "telemetry": [model.objects.count() for model in (TrafficSample, MemberHealth, HealthEvent)],
    }


# ---- fixtures: one object of each kind, an admin and a node


@pytest.fixture
def node_secret(db):
    node = Node(name="lb1", address="10.9.0.1")
    secret = node.rotate_token()
    node.save()
    return secret


@pytest.fixture
def clients(node_secret):
    admin = APIClient()
    admin.force_authenticate(get_user_model().objects.create_superuser("admin", password="admin-password-1"))
    node = APIClient()
    node.credentials(HTTP_AUTHORIZATION=f"Node {node_secret}")
    return {"person": admin, "node": node}


@pytest.fixture
def seeded(clients):
    pool = Pool.objects.create(name="web")
    Member.objects.create(pool=pool, name="s1", address="10.9.1.1", port=80)
    HealthCheck.objects.create(pool=pool, type="http", path="/health")
    service = VirtualService.objects.create(name="www", vip="10.9.0.10", port=80, default_pool=pool)
    Rule.objects.create(
        virtual_service=service,
        name="api",
        position=0,
        action="use_pool",
        pool=pool,
        conditions=[{"kind": "path_prefix", "values": ["/api"], "name": "", "negate": False}],
    )
    group = HaGroup.objects.create(name="ha1", vrid=51, vips=["10.9.0.100"])
    HaGroupNode.objects.create(group=group, node=Node.objects.get(name="lb1"), priority=150)
    for url, body in [
        ("/api/v1/certificates/generate/", {"name": "site", "common_name": "www.example.com"}),
        ("/api/v1/revisions/", {"message": "seed"}),
    ]:
        answer = clients["person"].post(url, body, format="json")
        assert answer.status_code == 201, answer.data


def concrete_path(client, path):
    """``path`` with ``{id}`` replaced by the id of the first object its collection lists."""
    if "{" not in path:
        return path
    collection, _, rest = path.partition("{")
    listed = client.get(collection)
    results = listed.json().get("results", []) if listed.status_code == 200 else []
    if not results:
        pytest.skip(f"no object under {collection} to send bodies to: seed one in this module")
    return f"{collection}{results[0]['id']}/{rest.partition('/')[2]}"


# ---- the table


@dataclass
class Case:
    """A bad request: ``body`` (bytes, or a value sent as JSON) and what the answer must say:
    ``status`` (0: any 4xx), the ``field`` it names, words it ``says``."""

    what: str
    body: object
    status: int = 400
    field: str = ""
    says: str = ""
    content_type: str = "application/json"

    def payload(self):
        return self.body if isinstance(self.body, bytes) else json.dumps(self.body).encode()


def transport_cases(path):
    """Bodies no operation may take, whatever its fields."""
    limit = body_limit(path)
    return [
        Case("malformed JSON", b'{"name": ', says="JSON parse error"),
        Case("not UTF-8", b'{"name": "\xff\xfe"}', says="not utf-8"),
        Case("NaN", b'{"name": NaN}', says="JSON parse error"),
        Case("a lone surrogate", b'{"\\ud800": "\\udfff"}', says="not valid Unicode"),
        Case("not a text charset", b"{}", status=415, content_type="application/json; charset=rot13", says="charset"),
        Case("nested too deeply", b"[" * 100_000 + b"]" * 100_000, says="nested too deeply"),
        Case("a list, not an object", [1, 2], says="Expected a dictionary"),
        Case("a string, not an object", "text", says="Expected a dictionary"),
        Case("text/plain", b"{}", status=415, content_type="text/plain", says="Unsupported media type"),
        Case("a form", b"name=web", status=415, content_type="application/x-www-form-urlencoded"),
        Case("over the size limit", b'{"name": "' + b"x" * limit + b'"}', status=413, says=f"{limit} bytes"),
    ]


def field_cases(operation):
    """Per field: the wrong JSON type, NUL, beyond the declared bounds; unknown fields (where the
    body refuses them); bad names."""
    cases = [Case("unknown field", {"surprise": 1}, field="surprise")] if operation.strict else []
    for name, prop in operation.properties().items():
        kind = operation.json_type(prop)
        if kind in WRONG_TYPE:
            cases.append(Case(f"{name}: wrong type", {name: WRONG_TYPE[kind]}, field=name))
        items = operation.resolve(prop.get("items", {}))
        if kind == "array" and operation.json_type(items) in WRONG_ITEM:
            wrong = WRONG_ITEM[operation.json_type(items)]
            cases.append(Case(f"{name}: item of the wrong type", {name: [wrong]}, field=name))
        if kind == "array" and items.get("properties") and items.get("additionalProperties") is False:
            cases.append(Case(f"{name}: unknown field inside", {name: [{"surprise": 1}]}, field=name, says="surprise"))
        if kind == "object" and prop.get("properties") and prop.get("additionalProperties") is False:
            cases.append(Case(f"{name}: unknown field inside", {name: {"surprise": 1}}, field=name, says="surprise"))
        if kind == "string":
            cases.append(Case(f"{name}: NUL", {name: "a\x00b"}, field=name))
            if "maxLength" in prop:
                cases.append(Case(f"{name}: too long", {name: "a" * (prop["maxLength"] + 1)}, field=name))
        if kind == "integer":
            cases += integer_cases(name, prop)
    if "name" in operation.properties() and not operation.path.startswith(AGENT_PATHS):
        cases += [Case(f"name {bad!r}", {"name": bad}, field="name") for bad in BAD_NAMES]
    return cases


def integer_cases(name, prop):
    if "maximum" in prop:
        cases = [Case(f"{name}: above maximum", {name: prop["maximum"] + 1}, field=name)]
        cases.append(Case(f"{name}: beyond any column", {name: 10**30}, field=name))
    else:
        # Unbounded ids (a related object) and agents' figures: refused or not found, never a crash.
        cases = [Case(f"{name}: beyond bigint", {name: 2**63}, status=0)]
    if "minimum" in prop:
        cases.append(Case(f"{name}: below minimum", {name: prop["minimum"] - 1}, field=name))
    return cases


def send(client, method, path, case):
    forget_throttles()  # sign-in throttles count every attempt
    return client.generic(method.upper(), path, case.payload(), content_type=case.content_type)


def mismatch(operation, case, answer):
    """Why ``answer`` is not the refusal ``case`` expects, or None."""
    if not answer.headers.get("Content-Type", "").startswith("application/json"):
        return f"{case.what}: {answer.status_code} {answer.headers.get('Content-Type')}, not JSON"
    if str(answer.status_code) not in operation.responses:
        return f"{case.what}: {answer.status_code} is not among the documented {operation.responses}"
    wanted = 400 <= answer.status_code < 500 if case.status == 0 else answer.status_code == case.status
    if not wanted:
        return f"{case.what}: {answer.status_code} {answer.content[:300]!r}"
    if case.field and case.field not in answer.json():
        return f"{case.what}: no error on {case.field!r}: {answer.content[:300]!r}"
    if case.says and case.says not in answer.content.decode():
        return f"{case.what}: the answer does not mention {case.says!r}: {answer.content[:300]!r}"
    return None


@pytest.mark.parametrize("operation", OPERATIONS, ids=str)
def test_bad_bodies_are_refused_and_change_nothing(operation, clients, seeded):
    client = clients["node" if operation.path.startswith(AGENT_PATHS) else "person"]
    path = concrete_path(clients["person"], operation.path)
    cases = transport_cases(path) + field_cases(operation)
    before = database_state()
    answers = ((case, send(client, operation.method, path, case)) for case in cases)
    problems = [problem for case, answer in answers if (problem := mismatch(operation, case, answer))]
    assert not problems, f"{operation}:\n" + "\n".join(problems)
    assert database_state() == before, f"{operation}: a refused request changed the database"


def referenced(schema, components, found=None):
    """The names of the components ``schema`` refers to, through each other too."""
    found = set() if found is None else found
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref" and (name := value.rsplit("/", 1)[1]) not in found:
                found.add(name)
                referenced(components[name], components, found)
            elif key != "$ref":
                referenced(value, components, found)
    elif isinstance(schema, list):
        for value in schema:
            referenced(value, components, found)
    return found


# What agents send, and the components it is made of.
AGENT_BODIES = {
    name
    for o in OPERATIONS
    if o.path.startswith(AGENT_PATHS)
    for name in referenced(o.schema, o.components) | {n for n, c in o.components.items() if c is o.schema}
}


@pytest.mark.parametrize("component", sorted({n for o in OPERATIONS for n in o.components if n.endswith("Request")}))
def test_every_request_body_refuses_unknown_fields(component):
    """Every body an operation takes comes from a strict serializer, nested ones included
    (the schema says ``additionalProperties: false`` for exactly those), but what agents send:
    a newer agent reports to an older API in a rolling upgrade (fulcrum.serializers.AgentReport),
    so there unknown fields are left out, the known ones checked all the same."""
    schema = OPERATIONS[0].components[component]
    assert (schema.get("additionalProperties") is False) is (component not in AGENT_BODIES), component


# ---- query parameters and path ids


@pytest.mark.parametrize(
    ("url", "parameter"),
    [
        ("/api/v1/pools/?limit=abc", "limit"),
        ("/api/v1/pools/?limit=0", "limit"),
        ("/api/v1/pools/?limit=1001", "limit"),
        ("/api/v1/pools/?offset=-1", "offset"),
        ("/api/v1/pools/?offset=1e99", "offset"),
        ("/api/v1/members/?pool=%C2%B2", "pool"),  # a superscript two: a digit to str.isdigit()
        ("/api/v1/members/?pool=1_000", "pool"),
        ("/api/v1/rules/?virtual_service=abc", "virtual_service"),
        ("/api/v1/ha-events/?after=1e99", "after"),
        ("/api/v1/ha-events/?after=%20", "after"),
        ("/api/v1/ha-events/?node=lb%001", "node"),
        ("/api/v1/ha-events/?group=%00", "group"),
        ("/api/v1/pools/?%00=1", "\x00"),
        ("/api/v1/metrics/services/?minutes=0", "minutes"),
        ("/api/v1/metrics/services/?minutes=61", "minutes"),
        ("/api/v1/metrics/services/?step=7", "step"),
        ("/api/v1/metrics/services/?service=1e3", "service"),
        ("/api/v1/metrics/members/", "pool"),
        ("/api/v1/metrics/members/?pool=%C2%B2", "pool"),
        ("/api/v1/health/?service=abc", "service"),
        ("/api/v1/health/?pool=1_000", "pool"),
        ("/api/v1/health-events/?member=1e99", "member"),
    ],
)
def test_bad_query_parameters_are_400_on_the_parameter(clients, url, parameter):
    answer = clients["person"].get(url)
    assert answer.status_code == 400, answer.content
    assert parameter in answer.json(), answer.json()


def test_agent_query_parameters_are_checked(clients):
    answer = clients["node"].get("/api/v1/agent/desired/?known=abc")
    assert (answer.status_code, list(answer.json())) == (400, ["known"])


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/pools/99999999999999999999999/",  # beyond bigint
        "/api/v1/pools/abc/",
        "/api/v1/pools/%00/",
        "/api/v1/pools/1.5/",  # no route at all
        "/api/v1/no-such-collection/",
    ],
)
def test_unknown_objects_are_404_json(clients, url):
    answer = clients["person"].get(url)
    assert answer.status_code == 404
    assert "detail" in answer.json()


def test_ids_and_filters_beyond_bigint_find_nothing(clients, seeded):
    for url in (
        "/api/v1/ha-events/?after=99999999999999999999999",
        "/api/v1/members/?pool=99999999999999999999999",
        "/api/v1/health/?service=99999999999999999999999",
        "/api/v1/health-events/?member=99999999999999999999999",
    ):
        answer = clients["person"].get(url)
        assert (answer.status_code, answer.json()["count"]) == (200, 0), url


@pytest.mark.parametrize("header", ["abc", "\u00b2", '"-1"', "9" * 5000])
def test_a_bad_if_match_is_400(clients, seeded, header):
    pool = Pool.objects.get(name="web")
    answer = clients["person"].patch(
        f"/api/v1/pools/{pool.pk}/", {"description": "x"}, format="json", HTTP_IF_MATCH=header
    )
    assert answer.status_code == 400
    assert "If-Match" in answer.json()
    pool.refresh_from_db()
    assert (pool.description, pool.version) == ("", 1)


def test_a_pool_no_service_uses_cannot_verify_tls_without_a_ca(clients):
    """Found by the fuzzer: such a pool is rendered as a backend all the same, and publishing
    crashed on the missing CA instead of refusing the pool."""
    answer = clients["person"].post("/api/v1/pools/", {"name": "tls", "tls": True}, format="json")
    assert answer.status_code == 400
    assert "tls_ca" in answer.json()
    assert not Pool.objects.filter(name="tls").exists()


def test_a_chunked_body_needs_a_server_that_decodes_it(clients):
    answer = clients["person"].generic(
        "POST", "/api/v1/pools/", b"", content_type="application/json", HTTP_TRANSFER_ENCODING="chunked"
    )
    assert answer.status_code == 411
    assert "Content-Length" in answer.json()["detail"]


# ---- the size limit over real HTTP, against gunicorn as the appliance runs it


@pytest.fixture(scope="module")
def gunicorn(django_db_setup, tmp_path_factory):
    """The API under gunicorn on a free loopback port, on the test database."""
    with gunicorn_on_test_database(tmp_path_factory.mktemp("gunicorn")) as url:
        yield url


def _chunks(data, size=64 * 1024):
    for start in range(0, len(data), size):
        yield data[start : start + size]


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_body_over_the_limit_is_413_json_over_http(gunicorn, transactional_db, node_secret, chunked):
    body = b'{"events": [], "pad": "' + b"x" * settings.BODY_LIMIT + b'"}'
    headers = {"Content-Type": "application/json", "Authorization": f"Node {node_secret}"}
    for url in (f"{gunicorn}/api/v1/agent/events/", f"{gunicorn}/api/v1/pools/"):
        answer = requests.post(url, data=_chunks(body) if chunked else body, headers=headers, timeout=30)
        assert answer.status_code == 413, (url, answer.status_code, answer.text[:300])
        assert answer.headers["Content-Type"] == "application/json"
        assert f"{settings.BODY_LIMIT} bytes" in answer.json()["detail"]
    assert not HaEvent.objects.exists()


def test_a_chunked_body_within_the_limit_is_read_over_http(gunicorn, transactional_db, node_secret):
    headers = {"Content-Type": "application/json", "Authorization": f"Node {node_secret}"}
    url = f"{gunicorn}/api/v1/agent/events/"
    event = {"at": "2026-01-01T00:00:00Z", "group": "ha1", "old_state": "backup", "new_state": "master"}
    refused = requests.post(
        url, data=_chunks(json.dumps({"events": [{**event, "new_state": "lost"}]}).encode()), headers=headers
    )
    assert refused.status_code == 400, refused.text
    assert list(refused.json()["events"]["0"]) == ["new_state"], refused.text
    taken = requests.post(url, data=_chunks(json.dumps({"events": [event]}).encode(), size=7), headers=headers)
    assert taken.status_code == 204, taken.text
    assert HaEvent.objects.get().new_state == "master"


def test_a_backup_restore_may_be_larger_than_other_bodies_over_http(gunicorn, transactional_db):
    admin = get_user_model().objects.create_superuser("restorer", password="x" * 12)
    headers = {
        "Content-Type": "application/json",
        "Authorization": f"Bearer {ApiToken.issue(admin, 't', Role.ADMIN)[1]}",
    }
    pad = "x" * (2 * settings.BODY_LIMIT)
    body = json.dumps({"document": {"format": "fulcrum-backup", "format_version": 1, "objects": {}}, "pad": pad})
    # Past the general limit, the restore still reads the body (and refuses the unknown field) ...
    answer = requests.post(f"{gunicorn}/api/v1/backup/restore/", data=body, headers=headers, timeout=30)
    assert answer.status_code == 400, answer.text[:300]
    assert answer.json() == {"pad": ["Unknown field."]}
    # ... where any other path answers 413.
    other = requests.post(f"{gunicorn}/api/v1/pools/", data=body, headers=headers, timeout=30)
    assert other.status_code == 413, other.text[:300]
