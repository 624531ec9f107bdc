"""The snapshot generation: a number PostgreSQL raises whenever a committed change reaches
what a snapshot is made of (services, pools, members, checks, rules, certificates, nodes'
names, addresses and standby, HA groups, the sync settings), however it was made: the API,
a restore, a script's SQL. A snapshot frozen after reading generation G holds every change
up to G; one cached under G is stale once the generation has moved on.

Triggers (migrations/0001_generation.py) take the next value of a sequence at commit
(deferred constraint triggers): readers see the new number only as the change commits, so
they never cache a snapshot from before it under the number after it (but for the instant
between the two, which the cache's age limit bounds)."""

from django.db import connection

SEQUENCE = "snapshot_generation"


def generation():
    """The newest generation (a number that only grows); None while the schema predates it
    (the new code of a rolling upgrade on a standby, before the primary has migrated)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_sequence_last_value(to_regclass(%s))", [SEQUENCE])
        return cursor.fetchone()[0]
