"""Objects, agents and reports for the telemetry tests."""

from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from unittest import mock

from rest_framework.test import APIClient

from cluster.models import Node
from services.models import Member, Pool, VirtualService

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)  # on a 5-minute boundary


def at(seconds):
    return T0 + timedelta(seconds=seconds)


@contextmanager
def clock(when):
    """The API's clock reads ``when`` (telemetry is stored with it, never the agent's)."""
    with mock.patch("django.utils.timezone.now", return_value=when):
        yield


def agent(name):
    """A node and a client that authenticates as its agent."""
    node = Node(name=name)
    token = node.rotate_token()
    node.save()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Node {token}")
    return node, client


def service_with_pool(name, members=("s1", "s2"), subnet=1, **service):
    """A virtual service on its own pool of ``members``."""
    pool = Pool.objects.create(name=f"{name}-pool")
    for i, member in enumerate(members, start=1):
        Member.objects.create(pool=pool, name=member, address=f"10.{subnet}.0.{i}", port=80)
    return VirtualService.objects.create(name=name, vip=f"10.200.{subnet}.1", port=80, default_pool=pool, **service)


def figures(connections=0, requests=0, errors=0, bytes_in=0, bytes_out=0):
    return {
        "connections": connections,
        "requests": requests,
        "errors": errors,
        "bytes_in": bytes_in,
        "bytes_out": bytes_out,
    }


def health(status="up", check="L7OK", detail="", code=200, latency_ms=2):
    return {"status": status, "check": check, "detail": detail, "code": code, "latency_ms": latency_ms}


def member_entry(pool, member, status="up", **kwargs):
    extra = {k: kwargs.pop(k) for k in ("check", "detail", "code", "latency_ms") if k in kwargs}
    return {"pool": pool, "member": member, **figures(**kwargs), "health": health(status, **extra)}


def report(services=(), members=(), interval_s=10):
    return {"interval_s": interval_s, "services": list(services), "members": list(members)}


def post(client, body, when):
    """POST ``body`` as the agent with the API's clock at ``when``; the answer."""
    with clock(when):
        return client.post("/api/v1/agent/telemetry/", body, format="json")
