"""A standby appliance's API: its database is a read-only copy of the primary's.

On an appliance that joined a cluster, PostgreSQL streams the primary's database
(``cluster.replication``; ``fulcrum-standby-init`` made the copy). Its API and console show
the cluster's objects, revisions and audit log as the primary has them, but cannot change
them: every change is refused before anything runs, with 503 and the primary's console,
instead of a database error halfway through. Reads that would write bookkeeping (a token's
last use) skip it. The schema is the primary's too: ``fulcrum_migrate`` leaves it alone.

Whether the database is a standby is asked of PostgreSQL each time (``pg_is_in_recovery()``,
one query) and never remembered: a promoted standby takes changes at once.
"""

from django.db import connection
from django.http import JsonResponse

SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")


def is_standby():
    """Whether this API's database is a standby's read-only copy (PostgreSQL only)."""
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_is_in_recovery()")
        return cursor.fetchone()[0]


def refusal():
    """What a change on a standby gets: 503, and where to make it instead."""
    from cluster import join  # here: accounts.authentication imports this module before the models load

    joined = join.membership()
    where = f" at {joined['member_of']}" if joined else ""
    return {
        "detail": "This appliance is a standby: its database is a read-only copy of the primary's. "
        f"Make changes on the primary{where}.",
        "primary": joined["member_of"] if joined else None,
    }


class StandbyMiddleware:
    """Refuses every change with 503 while the database is a standby."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method not in SAFE_METHODS and is_standby():
            return JsonResponse(refusal(), status=503)
        return self.get_response(request)
