"""Store one agent's telemetry report: traffic samples, member health and its changes.

A report is written in one transaction with a fixed number of queries whatever its size:
names are resolved in two queries, the health rows of the node are read in one and
upserted in one, samples and events are bulk inserted, and old rows are pruned by index.
Names that match no object (deleted since the node's revision) are skipped.
"""

from datetime import timedelta

from django.db import IntegrityError, connection, transaction

from cluster.models import Node
from services.models import Member, VirtualService
from telemetry.choices import HealthStatus
from telemetry.models import (
    EVENTS_KEPT,
    EVENTS_PER_MEMBER,
    SAMPLES_KEPT,
    HealthEvent,
    MemberHealth,
    TrafficSample,
)

FIGURES = ("connections", "requests", "errors", "bytes_in", "bytes_out")
# How far an agent's read_at may be from the API's clock: a little ahead (the clocks of a
# pair are synchronised, not equal), and behind by the interval (the agent gives up on a
# send after one) and a minute.
AHEAD = timedelta(seconds=5)
LATE = timedelta(minutes=1)
HEALTH_FIELDS = ("status", "check_status", "detail", "code", "latency_ms")
UPSERTED = (*HEALTH_FIELDS, "checked_at", "since", "last_failure", "last_failure_at")


def record(node, report, now):
    """Store ``report`` (AgentTelemetrySerializer's validated data) from ``node``, received at
    ``now``; returns the HealthEvent rows of the status changes it showed."""
    try:
        return _record(node, report, now)
    except IntegrityError:
        # A member or service deleted while this report was stored (its delete committed
        # first): once more, without what its names no longer match.
        return _record(node, report, now)


def _record(node, report, now):
    with transaction.atomic():
        # One report per node at a time: health transitions are read, then written.
        Node.objects.select_for_update(no_key=True).filter(pk=node.pk).values_list("pk").first()
        services = _service_ids(report["services"])
        members = _member_ids(report["members"])
        at = placed(report, now)
        samples = [
            _sample(node, report["interval_s"], at, e, service=services[e["service"]])
            for e in report["services"]
            if e["service"] in services
        ]
        samples += [
            _sample(node, report["interval_s"], at, e, member=members[(e["pool"], e["member"])])
            for e in report["members"]
            if (e["pool"], e["member"]) in members
        ]
        TrafficSample.objects.bulk_create(samples)
        health = {
            members[(e["pool"], e["member"])]: e["health"]
            for e in report["members"]
            if (e["pool"], e["member"]) in members
        }
        events = _record_health(node, health, now)
        prune(now, {event.member_id for event in events})
    return events


def placed(report, now):
    """When a report's samples were taken: the agent's ``read_at`` if the API's clock, ``now``,
    finds it plausible, else ``now``. Placed on arrival, a report delayed past a bucket's end
    would share the next bucket with the following one, and the graph would show half the
    rate there and a gap after."""
    read_at = report.get("read_at")
    if read_at is None or not now - timedelta(seconds=report["interval_s"]) - LATE <= read_at <= now + AHEAD:
        return now
    return read_at


def _service_ids(entries):
    names = {e["service"] for e in entries}
    return dict(VirtualService.objects.filter(name__in=names).values_list("name", "id")) if names else {}


def _member_ids(entries):
    wanted = {(e["pool"], e["member"]) for e in entries}
    if not wanted:
        return {}
    rows = Member.objects.filter(pool__name__in={p for p, _ in wanted}, name__in={m for _, m in wanted})
    return {
        (pool, name): pk for pool, name, pk in rows.values_list("pool__name", "name", "id") if (pool, name) in wanted
    }


def _sample(node, interval_s, at, entry, service=None, member=None):
    figures = {name: entry[name] for name in FIGURES}
    return TrafficSample(node=node, at=at, interval_s=interval_s, service_id=service, member_id=member, **figures)


def _record_health(node, reports, now):
    """Upsert the node's health row of each member in ``reports`` ({member id: health});
    returns the HealthEvent rows made for the status changes."""
    if not reports:
        return []
    known = {row.member_id: row for row in MemberHealth.objects.filter(node=node, member_id__in=reports)}
    rows, events = [], []
    for member_id, report in reports.items():
        row, event = next_health(known.get(member_id), report, now)
        row.member_id, row.node = member_id, node
        rows.append(row)
        if event is not None:
            event.member_id, event.node = member_id, node
            events.append(event)
    MemberHealth.objects.bulk_create(
        rows, update_conflicts=True, unique_fields=["member", "node"], update_fields=list(UPSERTED)
    )
    return HealthEvent.objects.bulk_create(events)


def next_health(previous, report, now):
    """The health row after ``report`` (a MemberHealth, unsaved) and the HealthEvent its
    status change makes (None when the status stays)."""
    values = {
        "status": report["status"],
        "check_status": report["check"],
        "detail": report["detail"],
        "code": report["code"],
        "latency_ms": report["latency_ms"],
    }
    was = previous.status if previous is not None else ""
    changed = values["status"] != was
    row = MemberHealth(
        **values,
        checked_at=now,
        since=now if changed else previous.since,
        last_failure=previous.last_failure if previous else "",
        last_failure_at=previous.last_failure_at if previous else None,
    )
    # A failure is a member leaving "up" for anything else, or any report that says "down".
    if values["status"] == HealthStatus.DOWN or (was == HealthStatus.UP and changed):
        row.last_failure, row.last_failure_at = failure_words(values), now
    event = HealthEvent(at=now, previous=was, **values) if changed else None
    return row, event


def failure_words(values):
    """How a failure reads: the check word and its detail, else the status."""
    words = " ".join(w for w in (values["check_status"], values["detail"]) if w)
    return words or values["status"]


def prune(now, members):
    """Drop samples past the graphs' hour, events past a week, and more than
    EVENTS_PER_MEMBER events of each of ``members`` (those that just had one)."""
    TrafficSample.objects.filter(at__lt=now - SAMPLES_KEPT).delete()
    HealthEvent.objects.filter(at__lt=now - EVENTS_KEPT).delete()
    if not members:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"""DELETE FROM {HealthEvent._meta.db_table} WHERE id IN (
                  SELECT id FROM (
                    SELECT id, row_number() OVER (PARTITION BY member_id ORDER BY at DESC, id DESC) AS n
                    FROM {HealthEvent._meta.db_table} WHERE member_id = ANY(%s)
                  ) AS ranked WHERE n > %s)""",
            [sorted(members), EVENTS_PER_MEMBER],
        )
