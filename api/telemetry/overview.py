"""The dashboard in one answer: every service's state and current traffic, the nodes, and
where the configuration stands. A fixed number of queries whatever the number of objects."""

from datetime import timedelta

from django.db.models import Prefetch

from cluster.models import Node
from revisions.models import NodeRevision, Revision
from revisions.publish import pending_changes
from revisions.rollback import expire_confirmations
from services.choices import MemberState
from services.models import Member, Rule, VirtualService
from telemetry import series
from telemetry.choices import HealthStatus, NodeState, ServiceState
from telemetry.models import MemberHealth

# A health row or a node call older than this is not believed: the node stopped reporting.
FRESH = timedelta(seconds=60)
# An agent calls at least this often: its long poll lasts at most 55 s, its telemetry 10 s.
NODE_SILENT = timedelta(seconds=90)
CURRENT_S = 60
# A member in these states serves: "unchecked" is a member without a health check.
SERVING = {HealthStatus.UP, HealthStatus.UNCHECKED}


def overview(now):
    """The dashboard's data (OverviewSerializer's shape)."""
    expire_confirmations(now)  # as the revision views do: a passed deadline rolls back first
    nodes = list(Node.objects.with_applied_revision().order_by("name"))
    _, changes = pending_changes(fields=False)
    node_states = Prefetch("node_states", NodeRevision.objects.listed())
    newest = Revision.objects.listed().prefetch_related(node_states).order_by("-number").first()
    return {
        "services": service_rows(now),
        "nodes": [node_row(node, now) for node in nodes],
        "pending_changes": len(changes),
        "revision": newest,
        "node_count": len(nodes),
    }


def service_rows(now):
    services = list(VirtualService.objects.order_by("name"))
    members = members_by_pool()
    pools = {s.pk: {s.default_pool_id} for s in services}
    for service_id, pool_id in Rule.objects.filter(enabled=True, pool__isnull=False).values_list(
        "virtual_service_id", "pool_id"
    ):
        pools[service_id].add(pool_id)
    health = fresh_health(now)
    figures = series.points("service", series.Window.current(CURRENT_S, now))
    rows = []
    for service in services:
        enabled = {m for pool in pools[service.pk] for m in members.get(pool, ())}
        state, up = service_state(service.enabled, [health.get(m, []) for m in enabled])
        rows.append(
            {
                "service": service,
                "state": state,
                "members_up": up,
                "members_total": len(enabled),
                **current_figures(figures.get(service.pk)),
            }
        )
    return rows


def members_by_pool():
    """{pool id: [member id]} of the members an operator left enabled (not drained, not disabled)."""
    found = {}
    for pool_id, member_id in Member.objects.filter(state=MemberState.ENABLED).values_list("pool_id", "id"):
        found.setdefault(pool_id, []).append(member_id)
    return found


def fresh_health(now):
    """{member id: [status on each node that reported it within FRESH]}."""
    found = {}
    for member_id, status in MemberHealth.objects.filter(checked_at__gte=now - FRESH).values_list(
        "member_id", "status"
    ):
        found.setdefault(member_id, []).append(status)
    return found


def service_state(enabled, members):
    """(state, members up) of a service from each enabled member's fresh statuses (one per node).

    A member is up when a node sees it serving; the service is degraded when some member is
    not up or some node sees one failing. Members an operator drained or disabled are not
    among ``members``: they never degrade a service. With no enabled member at all nothing
    can serve: down, whatever the health reports say.
    """
    up = sum(1 for statuses in members if SERVING.intersection(statuses))
    if not enabled:
        return ServiceState.DISABLED, up
    if not members:
        return ServiceState.DOWN, up
    if not any(members):
        return ServiceState.UNKNOWN, up
    if up == 0:
        return ServiceState.DOWN, up
    if up < len(members) or any(s not in SERVING for statuses in members for s in statuses):
        return ServiceState.DEGRADED, up
    return ServiceState.UP, up


def current_figures(points):
    """The last minute's figures, zeros without samples."""
    point = points[-1] if points else {}
    figures = {"connections": point.get("connections", 0)}
    figures.update({f"{name}_per_s": point.get(f"{name}_per_s", 0.0) for name in series.RATES})
    return figures


def node_row(node, now):
    return {
        "node": node,
        "state": node_state(node, now),
        "running_revision": node.applied_revision.number if node.applied_revision else None,
        "ha": [{"group": entry.get("group"), "state": entry.get("state")} for entry in node.vrrp_status],
    }


def node_state(node, now):
    if node.last_seen is None:
        return NodeState.NEVER_SEEN
    if now - node.last_seen > NODE_SILENT:
        return NodeState.OFFLINE
    return NodeState.STANDBY if node.standby else NodeState.ONLINE
