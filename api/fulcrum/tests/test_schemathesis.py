"""Schemathesis against the live API: every operation of the schema the server itself
serves at /api/v1/schema/ (test_openapi keeps it equal to the committed api/openapi.yaml),
called over real HTTP (pytest-django's threaded live server, real PostgreSQL, HAProxy and
keepalived checking what a revision publishes) with generated requests, valid and invalid.

Each answer must be: no 5xx; a status code the operation documents; the documented content
type; a body that matches the documented schema; invalid input refused (4xx); no success
without credentials. Node-agent operations authenticate as a node, the rest as an admin.
``positive_data_acceptance`` is off: many valid-looking bodies are rightly refused by
rules the schema cannot express (the compiler's checks, a VIP clash, an id that does not
exist), and each of those answers is still checked against the documented 400.

Phases: coverage (deterministic: each field's type and constraints violated one at a time),
fuzzing (FUZZ_EXAMPLES examples per operation, a fixed seed, derandomized) and a stateful
run that carries ids from one answer into the next request. About two and a half minutes
on two cores for ~85 operations; FULCRUM_FUZZ_EXAMPLES and FULCRUM_FUZZ_STATEFUL raise the
bounds for a longer local run. A failure prints the request as a curl command.
"""

import os

import hypothesis
import pytest
import requests
import schemathesis
from django.contrib.auth import get_user_model
from django.test import Client

from cluster.models import HaEvent, HaGroup, HaGroupNode, Node
from services.models import HealthCheck, Member, Pool, Rule, VirtualService

SEED = 20260704
FUZZ_EXAMPLES = int(os.environ.get("FULCRUM_FUZZ_EXAMPLES", "10"))
STATEFUL_EXAMPLES = int(os.environ.get("FULCRUM_FUZZ_STATEFUL", "20"))
NODE_SCHEME = "nodeToken"
# Left out: revoking a token can revoke the run's own (ids are listed, and 1 is easy to guess),
# after which every answer is a 401 that tests nothing (accounts' tests cover revocation).
# auth/logout stays in: it ends console sessions, not the token the run sends.
ENDS_THE_RUNS_CREDENTIALS = [("DELETE", "/api/v1/tokens/{id}/")]
# Left out of the stateful run only: a switchover asks the appliance's root side, which the
# test server has not (always 409), so it links nothing; in that run it only changed which
# sequences the derandomized search takes, into ones that depend on what earlier examples
# left in the live database (FlakyStrategyDefinition). test_every_operation still calls it.
NOT_STATEFUL = [("POST", "/api/v1/cluster/switchover/")]


def person_credentials(user):
    """(scheme word, secret) a script sends for ``user``: the one place that knows how people
    authenticate (a named API token with the person's own role)."""
    from accounts.models import ApiToken, role_of

    return "Bearer", ApiToken.issue(user, "schemathesis", role_of(user))[1]


def openapi_auth(schemes, credentials):
    """schemathesis' ``auth.openapi`` settings: the node's token for the agent protocol's
    scheme, the admin's for every other header scheme (console session cookies aside)."""
    auth = {}
    for name, scheme in schemes.items():
        word, secret = credentials["node" if name == NODE_SCHEME else "person"]
        if scheme["type"] == "http":
            auth[name] = {"bearer": secret}
        elif scheme.get("in") == "header":
            auth[name] = {"api_key": f"{word} {secret}"}
    return auth


@pytest.fixture
def credentials(db):
    admin = get_user_model().objects.create_superuser("fuzz-admin", password="fuzz-admin-password")
    node = Node(name="lb1", address="10.9.0.1")
    secret = node.rotate_token()
    node.save()
    return {"person": person_credentials(admin), "node": ("Node", secret)}


@pytest.fixture
def seeded(credentials):
    """Objects the generated requests find, so list and detail answers have real content
    (members with their live figures, rules, checks, a node's reported status, HA events)."""
    pool = Pool.objects.create(name="web", algorithm="dynamic-least-load")
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
    node = Node.objects.get(name="lb1")
    group = HaGroup.objects.create(name="ha1", vrid=51, vips=["10.9.0.100"])
    HaGroupNode.objects.create(group=group, node=node, priority=150)
    HaEvent.objects.create(node=node, group="ha1", at="2026-01-01T00:00:00Z", old_state="backup", new_state="master")
    status = {
        "networks": ["10.9.0.1/24"],
        "ipvs": [{"key": "tcp:10.9.0.10:80", "scheduler_wanted": "dllc", "scheduler_in_force": "wlc"}],
        "members": [
            {
                "pool": "web",
                "member": "s1",
                "layer": "haproxy",
                "load_milli": 250,
                "load_at": "2026-01-01T00:00:00Z",
                "connections": 3,
                "weight": 10,
                "feed": "haproxy agent-check",
                "message": "",
            }
        ],
        "vrrp": [{"group": "ha1", "state": "master", "priority": 150}],
    }
    word, secret = credentials["node"]
    answer = Client().post(
        "/api/v1/agent/status/", status, content_type="application/json", HTTP_AUTHORIZATION=f"{word} {secret}"
    )
    assert answer.status_code == 204, answer.content


@pytest.fixture
def api_schema(live_server, seeded, credentials):
    raw = requests.get(f"{live_server.url}/api/v1/schema/?format=json", timeout=30).json()
    config = schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "base-url": live_server.url,
            "generation": {
                "max-examples": FUZZ_EXAMPLES,
                "deterministic": True,
                "database": "none",
                # Unknown query parameters are ignored, as HTTP APIs do (caches, tracing add them);
                # unknown body fields are refused, and test_bad_input proves it per endpoint.
                "allow-extra-parameters": False,
            },
            # Valid-looking bodies are often refused by rules the schema cannot express (the
            # compiler's checks, a VIP clash, an id that does not exist); those answers are still
            # checked against the documented 400.
            "checks": {"positive_data_acceptance": {"enabled": False}},
            # The coverage phase sends, per field, each type and constraint violated on its own
            # (deterministic); its boundary values within the schema cost twice as long and find
            # what the fuzzing phase finds, so only its invalid half runs.
            "phases": {"coverage": {"generation": {"mode": "negative"}}},
            "auth": {"openapi": openapi_auth(raw["components"]["securitySchemes"], credentials)},
        }
    )
    return schemathesis.openapi.from_dict(raw, config=config)


def without_credential_enders(loaded):
    for method, path in ENDS_THE_RUNS_CREDENTIALS:
        loaded = loaded.exclude(method=method, path=path)
    return loaded


schema = without_credential_enders(schemathesis.pytest.from_fixture("api_schema"))


def assert_still_signed_in(response, credentials):
    """A 401 for the run's own credentials means an earlier example revoked or disabled them,
    and every later answer would be a 401 that tests nothing."""
    own = {f"{word} {secret}" for word, secret in credentials.values()}
    sent = response.request.headers.get("Authorization")
    assert not (response.status_code == 401 and sent in own), (
        f"{response.request.method} {response.request.url}: the run's own credentials stopped working"
    )


@schema.parametrize()
def test_every_operation(case, credentials):
    if case.operation.path == "/api/v1/agent/desired/" and case.query:
        case.query.pop("wait", None)  # a long poll would hold each example for up to 55 s
    assert_still_signed_in(case.call_and_validate(), credentials)


def test_stateful_links(api_schema, credentials):
    """Sequences that carry one answer into the next request (a created object's id into its
    read, change and delete), with the same checks on every step."""

    operations = without_credential_enders(api_schema)
    for method, path in NOT_STATEFUL:
        operations = operations.exclude(method=method, path=path)

    class Workflow(operations.as_state_machine()):
        def validate_response(self, response, case, **kwargs):
            super().validate_response(response, case, **kwargs)
            assert_still_signed_in(response, credentials)

    Workflow.run(
        settings=hypothesis.settings(
            max_examples=STATEFUL_EXAMPLES,
            stateful_step_count=6,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=list(hypothesis.HealthCheck),
        )
    )
