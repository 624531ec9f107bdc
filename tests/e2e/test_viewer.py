"""Roles in the console (webui/e2e/viewer.spec.ts) against the real API: a viewer reads every
page and is offered no change; an operator is offered drain, standby and apply but no edit.
This file creates the people and the shl-viewer-* objects they look at, checks afterwards
that looking changed nothing, and deletes what it created."""

import pytest

pytestmark = pytest.mark.browser

PASSWORD = "shl-Roles-Passw0rd-22"
VIEWER, OPERATOR = "shl-viewer", "shl-operator"
POOL = SERVICE = "shl-viewer"
CERTIFICATE = "shl-viewer-cert"
VIP = "10.77.100.91"


def _person(stack, username, role):
    """Creates `username` with `role`, or resets an earlier run's to it."""
    people = stack.api.get("/api/v1/users/?limit=1000").json()["results"]
    known = next((p for p in people if p["username"] == username), None)
    if known is None:
        return stack.api.create("/api/v1/users/", username=username, role=role, password=PASSWORD)
    response = stack.api.patch(
        f"/api/v1/users/{known['id']}/", json={"role": role, "password": PASSWORD, "is_active": True}
    )
    assert response.status_code == 200, response.text
    return response.json()


def _objects(stack):
    """A pool with a member, a virtual service on it and a certificate: something on every page."""
    name, address = next(iter(stack.lab.servers.items()))
    pool = stack.api.create("/api/v1/pools/", name=POOL)
    stack.api.create("/api/v1/members/", pool=pool["id"], name=name, address=address, port=80)
    service = stack.api.create("/api/v1/virtual-services/", name=SERVICE, vip=VIP, port=80, default_pool=pool["id"])
    certificate = stack.api.create(
        "/api/v1/certificates/generate/",
        name=CERTIFICATE,
        common_name="viewer.example.test",
        key_type="ecdsa-p256",
        days=30,
    )
    return pool, service, certificate, name


def _state(stack):
    """What a role without rights must leave as it was: revisions, pending changes, the objects."""
    revisions = stack.api.get("/api/v1/revisions/").json()["count"]
    pending = stack.api.get("/api/v1/revisions/pending/").json()
    pools = {p["name"]: p for p in stack.api.get("/api/v1/pools/?limit=1000").json()["results"]}
    services = {s["name"]: s for s in stack.api.get("/api/v1/virtual-services/?limit=1000").json()["results"]}
    certificates = sorted(c["name"] for c in stack.api.get("/api/v1/certificates/?limit=1000").json()["results"])
    return revisions, pending, pools[POOL], services[SERVICE], certificates


def test_viewer_sees_everything_and_changes_nothing_operator_operates(stack, playwright):
    people = [_person(stack, VIEWER, "viewer"), _person(stack, OPERATOR, "operator")]
    pool, service, certificate, member = _objects(stack)
    try:
        before = _state(stack)
        playwright(
            "viewer.spec.ts",
            SHL_VIEWER=VIEWER,
            SHL_OPERATOR=OPERATOR,
            SHL_PASSWORD=PASSWORD,
            SHL_POOL=POOL,
            SHL_POOL_ID=str(pool["id"]),
            SHL_MEMBER=member,
            SHL_SERVICE=SERVICE,
            SHL_SERVICE_ID=str(service["id"]),
            SHL_CERTIFICATE=CERTIFICATE,
        )
        assert _state(stack) == before
        signed_in = {
            p["username"]: p["last_login"] for p in stack.api.get("/api/v1/users/?limit=1000").json()["results"]
        }
        assert signed_in[VIEWER] and signed_in[OPERATOR], signed_in  # both really used the console
    finally:
        stack.api.delete(f"/api/v1/virtual-services/{service['id']}/")
        stack.api.delete(f"/api/v1/pools/{pool['id']}/")
        stack.api.delete(f"/api/v1/certificates/{certificate['id']}/")
        for person in people:
            stack.api.delete(f"/api/v1/users/{person['id']}/")
    names = {p["name"] for p in stack.api.get("/api/v1/pools/?limit=1000").json()["results"]}
    assert POOL not in names
