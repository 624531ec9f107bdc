"""Meaning checks on a snapshot: everything the renderer relies on is proved here, one
module per domain (fields, pools, services, ha).

Each problem names the object path, e.g. ``pools/web/members/s1/port``.
"""

from compiler.errors import VerifyError
from compiler.facts import derive, firewall_mark, marked_services, pool_modes
from compiler.verify.fields import duplicate_names, port_end_problems, vip_problems
from compiler.verify.ha import verify_ha, verify_ha_group, verify_sync
from compiler.verify.pools import pool_mode_problems, verify_pool
from compiler.verify.services import listener_clashes, verify_service

__all__ = ["port_end_problems", "verify", "verify_ha", "verify_ha_group", "verify_sync", "vip_problems"]


def verify(snap):
    """Raise VerifyError listing every problem in ``snap``; when it compiles, return it
    Verified, with the facts the renderers use (compiler.facts)."""
    problems = []
    problems += duplicate_names(snap.pools, "pools")
    problems += duplicate_names(snap.virtual_services, "virtual-services")
    for pool in snap.pools:
        problems += verify_pool(pool)
    for service in snap.virtual_services:
        problems += verify_service(service, snap)
    problems += duplicate_names(snap.certificates, "certificates")
    problems += listener_clashes(snap.virtual_services)
    modes = pool_modes(snap)
    problems += pool_mode_problems(snap, modes)
    if snap.ipvs_sync is not None:
        problems += verify_sync(snap.ipvs_sync, "ipvs-sync")
        if snap.ipvs_sync.ha_group and not any(g.name == snap.ipvs_sync.ha_group for g in snap.ha_groups):
            problems.append(("ipvs-sync/ha_group", f"no HA group named {snap.ipvs_sync.ha_group!r}"))
    problems += verify_ha(snap)
    problems += _mark_collisions(snap)
    if problems:
        raise VerifyError(problems)
    return derive(snap, modes)


def _mark_collisions(snap):
    """keepalived matches port ranges by firewall mark: two ranges may not share one."""
    problems, taken = [], set()
    for service in marked_services(snap):
        mark = firewall_mark(service)
        if mark in taken:
            problems.append((f"virtual-services/{service.name}/port_end", "firewall mark collision"))
        taken.add(mark)
    return problems
