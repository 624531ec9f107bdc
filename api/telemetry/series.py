"""Traffic over time, bucketed in SQL: the graphs' points and the dashboard's current figures.

In each bucket, each node's counts are divided by the seconds its samples cover (so a bucket
the node reported only part of still gives its true rate), and the nodes' rates are added;
connections, a gauge, are the sum over the nodes of each node's latest value in the bucket.
Buckets without samples give no point: the client shows a gap.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db import connection

from telemetry.models import TrafficSample

STEPS_S = (10, 30, 60, 300)
MINUTES_MAX = 60
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
RATES = ("requests", "errors", "bytes_in", "bytes_out")
POINT_KEYS = ("t", "connections", *(f"{name}_per_s" for name in RATES))
COLUMNS = {"service": "service_id", "member": "member_id"}

_SQL = """
WITH per_node AS (
  SELECT {column} AS object_id, node_id, date_bin(%(step)s, at, %(origin)s) AS t,
         SUM(interval_s)::float8 AS seconds,
         SUM(requests) AS requests, SUM(errors) AS errors, SUM(bytes_in) AS bytes_in, SUM(bytes_out) AS bytes_out,
         -- the gauge of the node's latest sample (a max, not a sort: hash aggregation stays possible)
         (MAX(ARRAY[(EXTRACT(EPOCH FROM at) * 1000000)::bigint, connections]))[2] AS connections
  FROM {table}
  WHERE {where} AND at >= %(start)s
  GROUP BY 1, 2, 3
)
SELECT object_id, to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), SUM(connections)::bigint,
       ROUND(SUM(requests / seconds)::numeric, 3)::float8, ROUND(SUM(errors / seconds)::numeric, 3)::float8,
       ROUND(SUM(bytes_in / seconds)::numeric, 3)::float8, ROUND(SUM(bytes_out / seconds)::numeric, 3)::float8
FROM per_node
GROUP BY object_id, t
ORDER BY object_id, t
"""


@dataclass(frozen=True)
class Window:
    """Which samples to read (``at >= start``) and how wide the buckets are."""

    start: datetime
    end: datetime
    step_s: int
    origin: datetime = EPOCH

    @classmethod
    def last(cls, minutes, step_s, now):
        """The last ``minutes``, its first bucket aligned on ``step_s`` (so it is whole)."""
        since = now - timedelta(minutes=minutes)
        start = since - (since - EPOCH) % timedelta(seconds=step_s)
        return cls(start=start, end=now, step_s=step_s)

    @classmethod
    def current(cls, seconds, now):
        """One bucket: the last ``seconds``."""
        since = now - timedelta(seconds=seconds)
        return cls(start=since, end=now, step_s=seconds, origin=since)


def points(kind, window, ids=None):
    """{object id: [point]} for ``kind`` ("service" or "member"), of the objects ``ids`` (None:
    all). A point is {t (ISO 8601), connections, requests_per_s, errors_per_s, bytes_in_per_s,
    bytes_out_per_s}: plain values, as a graph of 1,000 services x 360 points needs them fast."""
    column = COLUMNS[kind]
    if ids is None:
        where, params = f"{column} IS NOT NULL", {}
    elif not ids:
        return {}
    else:
        where, params = f"{column} = ANY(%(ids)s)", {"ids": list(ids)}
    params.update(step=timedelta(seconds=window.step_s), origin=window.origin, start=window.start)
    found = {}
    with connection.cursor() as cursor:
        cursor.execute(_SQL.format(column=column, where=where, table=TrafficSample._meta.db_table), params)
        for object_id, *values in cursor.fetchall():
            found.setdefault(object_id, []).append(dict(zip(POINT_KEYS, values, strict=True)))
    return found


def iso(when):
    """As DRF writes times: ISO 8601, UTC as Z."""
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")
