"""An appliance whose database takes no changes: a standby's read-only copy, or a fenced primary.

On an appliance that joined a cluster, PostgreSQL streams the primary's database
(``cluster.replication``; ``fulcrum-standby-init`` made the copy). Its API and console show
the cluster's objects, revisions and audit log as the primary has them, but cannot change
them: every change is refused before anything runs, with 503 and the primary's console,
instead of a database error halfway through. Reads that would write bookkeeping (a token's
last use) skip it. The schema is the primary's too: ``fulcrum_migrate`` leaves it alone.

A primary is *fenced* (``default_transaction_read_only``) while this appliance does not hold
the management VIP (appliance/api/fulcrum-management): it booted and has not won the role
yet, or lost it to an appliance that was promoted. It is refused changes the same way: only
the appliance at the management VIP takes them, so there are never two that do.

Which of these the database is, is asked of PostgreSQL each time (one query) and never
remembered: a promoted standby, an unfenced primary, takes changes at once.
"""

from django.conf import settings
from django.db import DatabaseError, OperationalError, connection
from django.http import JsonResponse

SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")
STANDBY, FENCED = "standby", "fenced"
READ_ONLY_TRANSACTION = "25006"  # PostgreSQL's error for a write in a read-only transaction
# The server shutting down or starting (a switchover stops and restarts PostgreSQL), or the
# connection lost (class 08, or a psycopg error with no server state at all).
SERVER_GONE = ("57P01", "57P02", "57P03")
RETRY_AFTER_S = 2


def read_only():
    """Why this API's database takes no changes: ``STANDBY``, ``FENCED``, or None (it does)."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only')::bool")
        in_recovery, fenced = cursor.fetchone()
    return STANDBY if in_recovery else FENCED if fenced else None


def is_standby():
    """Whether this API's database takes no changes (a standby's copy or a fenced primary)."""
    return read_only() is not None


def primary_console():
    """Where the cluster's changes are made: the management VIP's console when the cluster has
    one, else the appliance this one joined; None on an appliance that started its own cluster
    and has no VIP."""
    from cluster import join  # here: accounts.authentication imports this module before the models load

    vip = settings.FULCRUM_MGMT_VIP
    if vip:
        return f"https://[{vip}]/" if ":" in vip else f"https://{vip}/"
    joined = join.membership()
    return joined["member_of"] if joined else None


def refusal(why=STANDBY):
    """What a change gets where the database takes none: 503, and where to make it instead."""
    primary = primary_console()
    where = f" at {primary}" if primary else ""
    if why == FENCED:
        detail = (
            "This appliance does not hold the cluster's management address: its database takes no changes "
            f"until it holds it again or rejoins as a standby. Make changes on the primary{where}."
        )
    else:
        detail = (
            "This appliance is a standby: its database is a read-only copy of the primary's. "
            f"Make changes on the primary{where}."
        )
    return {"detail": detail, "primary": primary}


class StandbyMiddleware:
    """Refuses every change with 503 while the database takes none."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method not in SAFE_METHODS and (why := read_only()):
            return JsonResponse(refusal(why), status=503)
        return self.get_response(request)

    def process_exception(self, request, exception):
        """A change that met the database turning read-only halfway (a switchover fences it
        between this middleware's check and the write) gets the same 503 as one refused before
        it ran; one whose database went away (PostgreSQL stopped for the switchover) a 503 to
        try again. Never a 500: the operator only has to go to the primary, or wait."""
        if request.method in SAFE_METHODS or not isinstance(exception, DatabaseError):
            return None
        sqlstate = getattr(exception.__cause__, "sqlstate", None) or ""
        if sqlstate == READ_ONLY_TRANSACTION:
            try:
                why = read_only() or FENCED
            except DatabaseError:
                why = FENCED
            return JsonResponse(refusal(why), status=503)
        if (
            sqlstate in SERVER_GONE
            or sqlstate.startswith("08")
            or (isinstance(exception, OperationalError) and not sqlstate)
        ):
            body = {
                "detail": "The database went away while this change was being written (a switchover or a restart): "
                "it may not have been stored. Look, and try again in a moment.",
                "primary": primary_console(),
            }
            return JsonResponse(body, status=503, headers={"Retry-After": str(RETRY_AFTER_S)})
        return None
