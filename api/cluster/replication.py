"""PostgreSQL streaming replication between the appliances: synchronous while a standby
keeps up, degraded to asynchronous when none does, and how it stands.

The primary's commits wait until one standby has flushed them (``synchronous_commit = on``
and ``synchronous_standby_names = 'ANY 1 (*)'``) only while a standby streams and has
answered within ``away`` seconds: an apply the API acknowledged is then on two disks. When
the last standby goes away (powered off, cut off), commits would wait for ever; the guard
then clears ``synchronous_standby_names``, waiting commits complete, new ones go on, and
the cluster is *degraded* (the console says so). A standby that comes back streams from
where it stopped (its replication slot keeps the WAL it lacks); once it has caught up (its
WAL sender's state is ``streaming``, no longer ``catchup``) the guard makes replication
synchronous again.

The guard sets the list only when it must: with no standby at all (a single appliance, or a
primary just promoted), waiting for one would stop every commit, so it is cleared at once;
a standby that was streaming gets ``away`` seconds to answer again before the primary stops
waiting for it.

Each joined node streams through a slot of its own (``slot_name``). When an operator deletes
the node, the guard drops its slot once no standby uses it, so that the primary no longer
keeps WAL for it nor counts it as a standby that is away. Told which node it runs on
(``--node``, or ``--node-file``: /etc/hostname on the appliance, read at each look, for the
first-boot setup names the appliance after the guard started), the guard also makes the slot
of every other node that has none: a standby promoted to primary has no slots (they are not
copied), and the former primary, when it comes back as a standby, finds its slot waiting,
with the WAL it needs kept from the promotion on. Told where (``--slot-file``), it writes there
this node's own slot name, as "ID NAME SLOT": a switchover needs it at once, and starting
Python for it takes most of a minute on a busy emulated appliance (fulcrum-management).
It reads the nodes from the API's table where it connects to the API's database; elsewhere it
leaves slots alone.

On a standby the guard only watches; told where (``--streaming-mark``), it touches a file
at each look while the standby streams, so that the management VIP's keepalived promotes it
only if it was streaming when the primary went away (appliance/api/fulcrum-management). The
mark is dated when the look began: a guard held up between its query and the touch (a loaded
machine) would otherwise date it seconds after what it saw.
Streaming means that the WAL receiver is connected *and* heard from the primary within
``wal_receiver_timeout`` (the receiver asks for an answer after half of it in silence, and
gives up after all of it); the mark also needs it caught up, holding all the WAL the primary
last said it had: a standby back from a restart streams at once, but lacks what the primary
committed alone meanwhile until it has caught up.

Those two clocks are one rule: a commit the primary completes alone (degraded) must never be
missing on a standby that can still promote. The standby stops marking at most
``wal_receiver_timeout`` (R, 5 s on the appliance: appliance/api/fulcrum-api-init) after it
last heard the primary, and promotes only with a mark at most FRESH_S (8 s:
fulcrum-management) older than the moment it became master; the primary degrades ``away``
(AWAY_S) after it last heard the standby, which answers every second. So AWAY_S must exceed
R + FRESH_S + 3 s (a second of the standby's answers, a second of each whole-second clock
the promotion compares): a link that fails silently (a dropped route, a stateful firewall's
lost state) then leaves the standby unable to promote before the primary commits alone.
tests/pair proves it on two real servers with the appliance's values.

A primary that hears from no standby may be the cut-off side of a partition rather than the
survivor: the other appliance, still in reach of the management VIP's witness, takes the VIP
and promotes its standby, while this one's keepalived has yet to notice that the witness is
gone too and fence it. Told where the management VIP's keepalived has its configuration
(``--management-conf``), the guard reads there the witness check keepalived runs every second
(appliance/api/fulcrum-witness ADDRESS MARK, which touches MARK at each answer), and degrades
only while the witness answers (within ``WITNESS_FRESH_S``): otherwise commits keep waiting,
for they would be lost when this appliance rejoins the other. Without a witness (or with a
keepalived started by an older fulcrum-management, which marks nothing) it degrades as before.

A *fenced* primary (``default_transaction_read_only`` on: the management VIP's keepalived put
it there when this appliance lost the master role, see appliance/api/fulcrum-management) is
left as it is: its waiting commits must not complete without a standby, for another appliance
may have been promoted in the meantime.

Standard library and psycopg only: the guard runs as the ``postgres`` system user outside
Django (``python3 -m cluster.replication guard``); the API reads the same status for the
console.
"""

import argparse
import json
import logging
import os
import re
import sys
import time
from dataclasses import asdict, dataclass, field

import psycopg

SYNCHRONOUS = "ANY 1 (*)"
NODES = "cluster_node"  # the API's nodes (cluster.models.Node)
AWAY_S = 17.0  # how long a streaming standby may stay silent before the primary stops waiting (see the module)
INTERVAL_S = 1.0
# The witness's answers are marked every second (keepalived's check): three seconds without
# one is when keepalived would take this appliance's master role away (two failures).
WITNESS_FRESH_S = 3.0
# The witness check in the management VIP's keepalived.conf (appliance/api/fulcrum-management).
WITNESS_CHECK = re.compile(r'^\s*script\s+"\S*/fulcrum-witness\s+(\S+)\s+(/\S+)"\s*$', re.MULTILINE)
ROLES = ("primary", "standby")
STATES = ("synchronous", "catching-up", "degraded", "single", "streaming", "disconnected")  # see Status

log = logging.getLogger("fulcrum.replication")


@dataclass(frozen=True)
class Standby:
    """One WAL sender on the primary: a standby that is connected."""

    name: str  # its application_name: the appliance's node name
    address: str | None
    state: str  # startup | catchup | streaming | backup | stopping
    sync_state: str  # async | potential | sync | quorum
    lag_bytes: int | None  # WAL the primary wrote that the standby has not replayed
    silent_s: float | None  # seconds since the standby last answered
    flushes: bool  # it reports what it flushed: a standby, not a base backup's WAL stream

    def keeps_up(self, away=AWAY_S):
        """Streaming, answering, and able to confirm commits."""
        return self.state == "streaming" and self.flushes and self.silent_s is not None and self.silent_s < away


@dataclass
class Status:
    """Where this database stands in the cluster."""

    role: str  # primary | standby
    # primary: synchronous (a standby confirms each commit) | catching-up (a standby is
    # connected, commits do not wait for it yet) | degraded (a standby has a slot, none is
    # connected) | single (no standby); standby: streaming | disconnected
    state: str
    synchronous_standby_names: str
    standbys: list[Standby] = field(default_factory=list)
    slots: list[str] = field(default_factory=list)  # standbys the primary keeps WAL for
    primary: str | None = None  # standby: the host it streams from
    lag_bytes: int | None = None  # standby: WAL it received and has not replayed yet
    caught_up: bool = False  # standby: it flushed all the WAL the primary last said it had
    fenced: bool = False  # primary: read-only, for it lost the management role (see the module)

    def as_json(self):
        return asdict(self)


_STANDBYS = """
SELECT application_name, client_addr::text, state, sync_state,
       pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint,
       extract(epoch FROM now() - reply_time)::float8, flush_lsn IS NOT NULL
  FROM pg_stat_replication ORDER BY application_name
"""


# The WAL receiver, if any: its status, the primary, whether it heard from it within
# wal_receiver_timeout (0: the receiver never gives up, nor does this), and whether it
# flushed all the WAL the primary last said it had.
_RECEIVER = """
SELECT status, sender_host,
       setting::int = 0 OR now() - last_msg_receipt_time < make_interval(secs => setting::int / 1000.0),
       flushed_lsn >= latest_end_lsn
  FROM pg_stat_wal_receiver, pg_settings WHERE name = 'wal_receiver_timeout'
UNION ALL SELECT NULL, NULL, NULL, NULL LIMIT 1
"""


def read_status(conn, away=AWAY_S):
    """The status, read from ``conn`` (a superuser or pg_monitor connection)."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT pg_is_in_recovery(), current_setting('synchronous_standby_names'),"
            " current_setting('default_transaction_read_only')::bool"
        )
        in_recovery, names, fenced = cur.fetchone()
        if in_recovery:
            cur.execute(_RECEIVER)
            receiver, sender, heard, caught_up = cur.fetchone()
            cur.execute("SELECT pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())::bigint")
            (lag,) = cur.fetchone()
            state = "streaming" if receiver == "streaming" and heard else "disconnected"
            return Status("standby", state, names, primary=sender, lag_bytes=lag, caught_up=bool(caught_up))
        cur.execute(_STANDBYS)
        standbys = [Standby(*row) for row in cur.fetchall()]
        cur.execute("SELECT slot_name FROM pg_replication_slots WHERE slot_type = 'physical' ORDER BY 1")
        slots = [row[0] for row in cur.fetchall()]
    if any(s.keeps_up(away) and s.sync_state in ("sync", "quorum") for s in standbys):
        state = "synchronous"
    elif standbys:
        state = "catching-up"
    elif slots:
        state = "degraded"
    else:
        state = "single"
    return Status("primary", state, names, standbys, slots, fenced=fenced)


def slot_name(node_id, node_name):
    """The replication slot of a joined node: its name as a slot name may be spelled, its ID
    making it unique (``lb-2``, 7 -> ``lb_2_7``)."""
    return f"{re.sub(r'[^a-z0-9_]', '_', node_name.lower())[:50]}_{node_id}"


def _has_nodes(cur):
    """Whether the database behind ``cur`` has the API's nodes table (the guard may watch one
    that is not the API's)."""
    cur.execute("SELECT to_regclass(%s) IS NOT NULL", (NODES,))
    return cur.fetchone()[0]


def stale_slots(conn):
    """Inactive slots of nodes that are no longer in the cluster; none where ``conn``'s database
    has no nodes table (the guard may watch a database that is not the API's)."""
    with conn.cursor() as cur:
        if not _has_nodes(cur):
            return []
        cur.execute(f"SELECT id, name FROM {NODES}")
        kept = {slot_name(node_id, name) for node_id, name in cur.fetchall()}
        cur.execute("SELECT slot_name FROM pg_replication_slots WHERE slot_type = 'physical' AND NOT active")
        return sorted(name for (name,) in cur.fetchall() if name not in kept)


def missing_slots(conn, node):
    """The slots of the cluster's nodes other than ``node`` (this appliance's name) that the
    primary behind ``conn`` lacks; none where ``conn``'s database has no nodes table."""
    with conn.cursor() as cur:
        if not _has_nodes(cur):
            return []
        cur.execute(f"SELECT id, name FROM {NODES} WHERE name <> %s", (node,))
        wanted = {slot_name(node_id, name) for node_id, name in cur.fetchall()}
        cur.execute("SELECT slot_name FROM pg_replication_slots WHERE slot_type = 'physical'")
        return sorted(wanted - {name for (name,) in cur.fetchall()})


def own_slot(conn, node):
    """``node``'s own slot, as "ID NAME SLOT" (the one the other appliances keep for it), or None
    where ``conn``'s database has no nodes table or no such node."""
    with conn.cursor() as cur:
        if not _has_nodes(cur):
            return None
        cur.execute(f"SELECT id FROM {NODES} WHERE name = %s", (node,))
        row = cur.fetchone()
    return f"{row[0]} {node} {slot_name(row[0], node)}" if row else None


class Guard:
    """Keeps ``synchronous_standby_names`` set while a standby keeps up, clear otherwise."""

    def __init__(
        self, away=AWAY_S, clock=time.monotonic, node=None, node_file=None, streaming_mark=None,
        management_conf=None, slot_file=None,
    ):  # fmt: skip
        self.away = away
        self.slot_file = slot_file  # where this node's own slot is written (own_slot)
        self.slot_written = None
        self.streaming_mark = streaming_mark  # touched at each look while this standby streams
        self.management_conf = management_conf  # the management VIP's running keepalived.conf
        self.held = False  # the last look kept commits waiting for want of the witness
        self.clock = clock
        self.node = node  # this appliance's node name: the guard makes the others' slots
        self.node_file = node_file  # ... or the file that names it (its first word, short)
        self.last_kept_up = None  # when a standby keeping up last answered

    def this_node(self):
        """This appliance's node name, if the guard was told how to know it."""
        if self.node_file:
            try:
                with open(self.node_file, encoding="utf-8") as f:
                    words = f.read().split()
            except OSError:
                return None
            return words[0].split(".")[0] if words else None
        return self.node

    def write_own_slot(self, conn):
        """Write this node's own slot to ``slot_file`` when it changed (atomically: root reads it)."""
        node = self.this_node()
        slot = own_slot(conn, node) if node else None
        if slot is None or slot == self.slot_written:
            return
        try:
            with open(f"{self.slot_file}.new", "w", encoding="utf-8") as f:
                f.write(f"{slot}\n")
            os.replace(f"{self.slot_file}.new", self.slot_file)
        except OSError as error:
            log.warning("this node's slot could not be written to %s: %s", self.slot_file, error)
            return
        self.slot_written = slot

    def witness(self):
        """The management VIP's witness check, as its keepalived runs it: (address, mark), or
        None where it runs none that marks the answers."""
        try:
            with open(self.management_conf, encoding="utf-8") as f:
                found = WITNESS_CHECK.search(f.read())
        except (OSError, TypeError):
            return None
        return found.groups() if found else None

    def witness_silence(self):
        """(the witness, seconds since it last answered), or None: no witness counts here."""
        if not (check := self.witness()):
            return None
        address, mark = check
        try:
            return address, max(0.0, time.time() - os.stat(mark).st_mtime)
        except OSError:
            return address, float("inf")

    def wanted(self, standbys):
        """The list the primary should have now, given its connected ``standbys``."""
        now = self.clock()
        heard = [now - s.silent_s for s in standbys if s.keeps_up(self.away)]
        if heard:
            self.last_kept_up = max(heard)
            return SYNCHRONOUS
        if self.last_kept_up is not None and now - self.last_kept_up < self.away:
            return SYNCHRONOUS  # a standby that was keeping up gets ``away`` seconds to answer
        return ""

    def step(self, conn):
        """One look at the primary behind ``conn`` (autocommit); returns the status after it."""
        looked = time.time()  # before the look: a late touch must not make the mark say more than it saw
        status = read_status(conn, self.away)
        if self.slot_file:
            self.write_own_slot(conn)
        if status.role != "primary":
            self.last_kept_up = None
            if self.streaming_mark and status.state == "streaming" and status.caught_up:
                with open(self.streaming_mark, "a"):
                    os.utime(self.streaming_mark, (looked, looked))
            return status
        for slot in stale_slots(conn):
            conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
            log.info("dropped the replication slot %s: its node left the cluster", slot)
        node = self.this_node()
        if node and not status.fenced:
            for slot in missing_slots(conn, node):
                # WAL kept from now on: the node streams from here when it comes (back).
                conn.execute("SELECT pg_create_physical_replication_slot(%s, true)", (slot,))
                log.info("made the replication slot %s for a node of the cluster", slot)
        if status.fenced:
            return status  # its commits wait for a standby until the fence is lifted or it rejoins
        wanted = self.wanted(status.standbys)
        if not wanted and status.synchronous_standby_names:
            witness = self.witness_silence()
            if witness and witness[1] >= WITNESS_FRESH_S:
                if not self.held:
                    address, silent = witness
                    log.warning(
                        "no standby answers, and the management VIP's witness %s has not answered %s either: "
                        "this appliance may be cut off while the other takes over; commits keep waiting",
                        address, "since keepalived started" if silent == float("inf") else f"for {silent:.0f} s",
                    )  # fmt: skip
                self.held = True
                return status
        self.held = False
        log.debug(
            "standbys %s; synchronous_standby_names %r -> %r", status.standbys, status.synchronous_standby_names, wanted
        )
        if wanted != status.synchronous_standby_names:
            conn.execute(f"ALTER SYSTEM SET synchronous_standby_names = '{wanted}'")  # one of two constants
            conn.execute("SELECT pg_reload_conf()")
            if wanted:
                names = ", ".join(s.name for s in status.standbys if s.keeps_up(self.away))
                log.info("replication is synchronous: commits wait for %s", names)
            else:
                log.warning(
                    "replication degraded to asynchronous: no standby answered for %.0f s; "
                    "commits no longer wait for one", self.away,
                )  # fmt: skip
            status = read_status(conn, self.away)
        return status

    def run(self, dsn, interval=INTERVAL_S):
        """Step every ``interval`` seconds for ever, reconnecting when the server is away."""
        conn = None
        while True:
            try:
                if conn is None or conn.closed:
                    conn = psycopg.connect(dsn, autocommit=True, connect_timeout=5)
                self.step(conn)
            except psycopg.Error as error:
                log.warning("replication guard: %s", str(error).strip())
                if conn is not None:
                    conn.close()
                conn = None
            time.sleep(interval)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m cluster.replication", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["guard", "status"])
    parser.add_argument("--dsn", default="host=/run/postgresql dbname=postgres", help="libpq connection string")
    parser.add_argument(
        "--away", type=float, default=AWAY_S, help=f"seconds a standby may stay silent (default {AWAY_S:.0f})"
    )
    parser.add_argument("--node", help="this appliance's node name: make the slots of the cluster's other nodes")
    parser.add_argument("--node-file", help="a file naming this appliance's node (its short host name), read each time")
    parser.add_argument("--streaming-mark", help="a file touched at each look while this standby streams")
    parser.add_argument(
        "--management-conf", help="the management VIP's keepalived.conf: degrade only while its witness answers"
    )
    parser.add_argument("--slot-file", help='a file to write this node\'s own slot to, as "ID NAME SLOT"')
    parser.add_argument("--interval", type=float, default=INTERVAL_S, help=argparse.SUPPRESS)
    parser.add_argument("--verbose", action="store_true", help="log every look at the primary")
    args = parser.parse_args(argv)
    if args.away <= 0 or args.interval <= 0:
        parser.error("--away and --interval must be positive")
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    if args.action == "status":
        with psycopg.connect(args.dsn, autocommit=True, connect_timeout=5) as conn:
            print(json.dumps(read_status(conn, args.away).as_json(), indent=2))
        return 0
    Guard(
        args.away, node=args.node, node_file=args.node_file, streaming_mark=args.streaming_mark,
        management_conf=args.management_conf, slot_file=args.slot_file,
    ).run(args.dsn, args.interval)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
