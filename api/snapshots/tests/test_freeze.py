"""Freezing gives every field of the compiler's shapes: the lists of fields a model stores as
they are come from compiler.snapshot's dataclasses, the others are filled in by hand, and
this test notices one that is neither."""

from dataclasses import fields

import pytest

from cluster.models import HaGroup, HaGroupNode, IpvsSync, Node
from compiler import snapshot as shape
from compiler import snapshot_from_dict
from revisions.tests.configuration import admin_client, build
from services.models import HealthCheck, Member, Pool, Rule, VirtualService
from snapshots import freeze


def names(cls):
    return {f.name for f in fields(cls)}


@pytest.mark.django_db
def test_every_field_of_the_compilers_shapes_is_frozen():
    pool = Pool.objects.create(name="web")
    Member.objects.create(pool=pool, name="s1", address="10.9.1.1", port=80)
    HealthCheck.objects.create(pool=pool, type="http", path="/health")
    service = VirtualService.objects.create(name="www", vip="10.9.0.10", port=80, default_pool=pool)
    Rule.objects.create(virtual_service=service, name="api", position=0, action="use_pool", pool=pool, conditions=[])
    node = Node.objects.create(name="lb9", address="10.9.0.2")
    group = HaGroup.objects.create(name="ha1", vrid=51, vips=["10.9.0.100"])
    HaGroupNode.objects.create(group=group, node=node, priority=150)
    sync = IpvsSync.load()
    sync.enabled, sync.interface = True, "eth0"
    sync.save()

    frozen = freeze.freeze(7)
    [pool_entry] = frozen["pools"]
    [service_entry] = frozen["virtual_services"]
    assert set(pool_entry) == names(shape.Pool)
    assert set(pool_entry["members"][0]) == names(shape.Member)
    assert set(pool_entry["health_check"]) == names(shape.HealthCheck)
    assert set(service_entry) == names(shape.VirtualService)
    assert set(service_entry["rules"][0]) == names(shape.Rule)
    assert set(frozen["ha_groups"][0]) == names(shape.HaGroup)
    assert set(frozen["ha_groups"][0]["nodes"][0]) == names(shape.HaNode)
    assert {n["name"]: set(n) for n in frozen["nodes"]}["lb9"] == names(shape.Node)
    assert set(frozen["ipvs_sync"]) == names(shape.IpvsSync)
    assert set(frozen) == names(shape.Snapshot)
    assert snapshot_from_dict(frozen).pools[0].members[0].address == "10.9.1.1"


def test_a_field_named_as_converted_must_be_the_compilers():
    with pytest.raises(TypeError, match="Pool has no field nonesuch"):
        freeze._stored_as_is(shape.Pool, "members", "nonesuch")


@pytest.mark.django_db
def test_a_revision_read_as_rows_freezes_as_its_objects_do():
    """freeze() reads a revision as values() rows; a single write freezes model instances
    (pool_dict, service_dict). Both go through one translation, and give the same dicts."""
    build(admin_client())
    frozen = freeze.freeze(1)
    services = VirtualService.objects.order_by("name")
    assert frozen["virtual_services"] == [freeze.service_dict(s) for s in services]
    assert frozen["pools"] == [freeze.pool_dict(p) for p in Pool.objects.order_by("name")]
    # The configuration has what each translation converts: SNI, a rate limit, rules with and
    # without a pool, a pool without a health check, one verified by a CA.
    www = next(s for s in frozen["virtual_services"] if s["name"] == "www")
    assert len(www["certificates"]) == 2 and www["rate_limit"] == {"requests": 100, "period_s": 20}
    assert {r["pool"] for r in www["rules"]} >= {"api", ""}
    assert {p["name"]: ("health_check" in p, p["tls_ca"]) for p in frozen["pools"]} == {
        "api": (False, "ca"),
        "web": (True, ""),
    }
