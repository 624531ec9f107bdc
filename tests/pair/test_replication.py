"""The replicated control plane's database, on two real PostgreSQL servers: a primary and a
standby made from it with pg_basebackup, as a joined appliance's is, and the replication
guard (``python3 -m cluster.replication guard``, what fulcrum-replication.service runs)
looking after the primary.

- While the standby keeps up, a commit the primary acknowledged is on the standby's disk:
  the primary is then killed (no shutdown), the standby promoted, and every acknowledged
  row is there.
- When the standby goes away, a commit waits for it only until the guard degrades the
  primary to asynchronous; then it completes, and so do the next ones.
- A primary that hears neither the standby nor the management VIP's witness (the cut-off side
  of a partition) keeps its commits waiting; it degrades once the witness answers again.
- A replication link that fails silently (no reset: the primary and the standby just stop
  hearing each other) stops the standby marking that it may promote well before the primary
  commits alone: the appliance's timeouts, on real servers.
- When the standby comes back it catches up (the rows of the degraded time reach it) and
  replication is synchronous again.
- The API on the standby's database (a joined appliance's) reads the cluster's objects with
  the cluster's tokens, refuses every change with 503, and does not migrate; promoted, it
  takes changes at once.
"""

import contextlib
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg
import pytest

from cluster import replication
from cluster.replication import read_status
from tests.harness.pg import _as_owner, _bin
from tests.harness.stack import API_DIR, PYTHON, REPO

AWAY_S = 5.0  # the guard's --away: how long a silent standby keeps commits waiting
SETTLE_S = 60  # generous: how long a state change may take on a loaded machine
WITNESS = REPO / "appliance" / "api" / "fulcrum-witness"  # the management VIP's witness check


def shipped(script, pattern):
    """A value the appliance ships, read from the script that sets it."""
    return re.search(pattern, (REPO / "appliance" / "api" / script).read_text(), re.MULTILINE).group(1)


# The standby gives up on a silent primary after this (PostgreSQL's setting, as the appliance's is).
RECEIVER_TIMEOUT = shipped("fulcrum-api-init", r"^\s*wal_receiver_timeout = ('\d+s')$")
# fulcrum-management promotes a standby whose streaming mark is at most this old (whole seconds).
FRESH_S = int(shipped("fulcrum-management", r"^readonly FRESH_S=(\d+)$"))


def postgres(*argv):
    """Run as the clusters' owner (postgres, as the harness's own cluster does)."""
    return _as_owner(list(argv), capture_output=True, text=True)


class Server:
    """A PostgreSQL server in its own folder, reachable on a Unix socket in that folder."""

    def __init__(self, home, name):
        self.name, self.data, self.run = name, home / name, home / f"{name}.run"
        self.log = home / f"{name}.log"

    @property
    def dsn(self):
        return f"host={self.run} user=postgres dbname=postgres"

    def init_primary(self):
        postgres(_bin("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-instructions")
        with open(self.data / "postgresql.conf", "a") as conf:  # what the appliance's primary sets
            conf.write("wal_log_hints = on\nwal_keep_size = '64MB'\nwal_sender_timeout = '5s'\n")
        self.start()

    def clone(self, primary):
        """A standby of ``primary`` from a base backup, following it through a slot."""
        primary.sql(f"SELECT pg_create_physical_replication_slot('{self.name}')")
        conninfo = f"host={primary.run} user=postgres application_name={self.name}"
        postgres(_bin("pg_basebackup"), "-d", conninfo, "-D", str(self.data), "-R", "-X", "stream", "-S", self.name)
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(f"wal_receiver_status_interval = '1s'\nwal_receiver_timeout = {RECEIVER_TIMEOUT}\n")
        self.start()

    def start(self):
        postgres("mkdir", "-p", str(self.run))
        options = f"-c listen_addresses='' -c unix_socket_directories='{self.run}' -c fsync=on"
        postgres(_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start")

    def stop(self, mode="fast"):
        postgres(_bin("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def promote(self):
        postgres(_bin("pg_ctl"), "-D", str(self.data), "-w", "promote")

    def connect(self):
        return psycopg.connect(self.dsn, autocommit=True, connect_timeout=5)

    def sql(self, query, *args):
        with self.connect() as conn:
            cur = conn.execute(query, args or None)
            return cur.fetchall() if cur.description else None

    def status(self):
        with self.connect() as conn:
            return read_status(conn, AWAY_S)


def wait_for(predicate, what, timeout=SETTLE_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout} s: {what}")


@pytest.fixture
def home():
    folder = Path(tempfile.mkdtemp(prefix="fulcrum-repl-", dir="/var/tmp"))
    owner = pwd.getpwnam("postgres")
    os.chown(folder, owner.pw_uid, owner.pw_gid)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pair(home):
    primary, standby = Server(home, "lb1"), Server(home, "lb2")
    primary.init_primary()
    primary.sql("CREATE TABLE applies (n int PRIMARY KEY)")
    with open(home / "guard.log", "w") as guard_log:
        guard = subprocess.Popen(
            [sys.executable, "-m", "cluster.replication", "guard", "--dsn", primary.dsn, "--away", str(AWAY_S),
             "--interval", "0.2", "--verbose"],
            cwd=API_DIR, stderr=guard_log,
        )  # fmt: skip
    try:
        yield primary, standby, home
    finally:
        guard.terminate()
        guard.wait(10)
        for server in (primary, standby):
            if (server.data / "postmaster.pid").exists():
                server.stop("immediate")
        print((home / "guard.log").read_text())


def synchronous(primary):
    status = primary.status()
    return status.state == "synchronous" and status


def committed(server, n, timeout=SETTLE_S):
    """Insert row n on server in a thread; wait up to timeout for its commit to return."""
    done = threading.Event()

    def insert():
        server.sql("INSERT INTO applies VALUES (%s)", n)
        done.set()

    threading.Thread(target=insert, daemon=True).start()
    return done.wait(timeout), done


def test_a_single_primary_never_waits(pair):
    primary, _standby, _home = pair
    assert committed(primary, 1)[0]
    status = primary.status()
    assert (status.role, status.state, status.synchronous_standby_names) == ("primary", "single", "")


def test_synchronous_while_the_standby_keeps_up_degraded_while_it_is_away(pair):
    primary, standby, _home = pair
    standby.clone(primary)
    status = wait_for(lambda: synchronous(primary), "the standby makes replication synchronous")
    assert status.synchronous_standby_names == "ANY 1 (*)"
    assert [(s.name, s.state, s.sync_state) for s in status.standbys] == [("lb2", "streaming", "quorum")]
    assert standby.status().role == "standby" and standby.status().state == "streaming"
    assert committed(primary, 1)[0]
    assert wait_for(lambda: standby.sql("SELECT count(*) FROM applies")[0][0] == 1, "row 1 replayed on the standby")

    # The standby goes away: the next commit waits for it, until the guard degrades.
    standby.stop("immediate")
    returned, done = committed(primary, 2, timeout=1)
    assert not returned, "a commit did not wait for the synchronous standby"
    assert done.wait(SETTLE_S), "the guard did not release the commit"
    status = primary.status()
    assert (status.state, status.synchronous_standby_names, status.slots) == ("degraded", "", ["lb2"])
    for n in range(3, 13):  # degraded: commits go on without the standby
        assert committed(primary, n, timeout=10)[0]

    # It comes back: it catches up on everything it missed, and replication is synchronous again.
    standby.start()
    wait_for(lambda: synchronous(primary), "synchronous again after the standby came back")
    assert standby.sql("SELECT count(*) FROM applies")[0][0] == 12
    assert committed(primary, 13)[0]


def test_an_acknowledged_commit_survives_the_primary(pair):
    primary, standby, _home = pair
    standby.clone(primary)
    wait_for(lambda: synchronous(primary), "the standby makes replication synchronous")
    with primary.connect() as conn:
        for n in range(1, 201):  # each one acknowledged: the commit returned
            conn.execute("INSERT INTO applies VALUES (%s)", (n,))
    primary.stop("immediate")  # killed: no shutdown checkpoint, nothing more sent
    standby.promote()
    assert standby.status().role == "primary"
    assert standby.sql("SELECT count(*), max(n) FROM applies") == [(200, 200)]


def test_the_slot_of_a_node_that_left_is_dropped(pair):
    primary, _standby, _home = pair
    # The API's nodes, as the guard reads them where it watches the API's database.
    primary.sql("CREATE TABLE cluster_node (id int PRIMARY KEY, name text)")
    primary.sql("INSERT INTO cluster_node VALUES (1, 'lb1'), (2, 'LB-2.b')")
    for slot in ("lb_2_b_2", "lb3_3"):
        primary.sql("SELECT pg_create_physical_replication_slot(%s)", slot)
    slots = "SELECT array_agg(slot_name ORDER BY slot_name) FROM pg_replication_slots"
    wait_for(lambda: primary.sql(slots)[0][0] == ["lb_2_b_2"], "the slot of a node not in the cluster dropped")
    primary.sql("DELETE FROM cluster_node WHERE id = 2")
    wait_for(lambda: primary.sql(slots)[0][0] is None, "the slot of a deleted node dropped")
    assert primary.status().state == "single"


@contextlib.contextmanager
def guard(server, home, *args, away=AWAY_S):
    """Another guard on ``server`` (the fixture's has no --node), logging to home, for the block."""
    with open(home / f"guard-{server.name}-{len(list(home.glob('guard-*')))}.log", "w") as log:
        child = subprocess.Popen([sys.executable, "-m", "cluster.replication", "guard", "--dsn", server.dsn,
                                  "--away", str(away), "--interval", "0.2", *args], cwd=API_DIR, stderr=log)  # fmt: skip
    try:
        yield child
    finally:
        child.terminate()
        child.wait(10)


def test_the_primary_keeps_a_slot_for_every_other_node(pair):
    primary, _standby, home = pair
    primary.sql("CREATE TABLE cluster_node (id int PRIMARY KEY, name text)")
    primary.sql("INSERT INTO cluster_node VALUES (1, 'lb1'), (2, 'lb2')")
    (home / "hostname").write_text("lb1.example.com\n")  # as /etc/hostname names the appliance
    own = home / "slot"
    with guard(primary, home, "--node-file", str(home / "hostname"), "--slot-file", str(own)):
        slots = "SELECT array_agg(slot_name ORDER BY slot_name) FROM pg_replication_slots"
        wait_for(lambda: primary.sql(slots)[0][0] == ["lb2_2"], "the other node's slot made")
        # Its own slot (the one the others keep for it), for fulcrum-management's switchover.
        wait_for(own.exists, "its own slot written")
        assert own.read_text() == "1 lb1 lb1_1\n"
        # Made with its WAL reserved from now on, so that the node finds what it lacks.
        assert primary.sql("SELECT restart_lsn IS NOT NULL FROM pg_replication_slots") == [(True,)]
        assert primary.status().state == "degraded"  # a node of the cluster is away
        primary.sql("INSERT INTO cluster_node VALUES (3, 'lb3')")
        wait_for(lambda: primary.sql(slots)[0][0] == ["lb2_2", "lb3_3"], "a new node's slot made")


def test_a_standby_marks_that_it_streams_while_it_does(pair):
    """What the management VIP's keepalived reads before it promotes a standby."""
    primary, standby, home = pair
    standby.clone(primary)
    wait_for(lambda: synchronous(primary), "the standby makes replication synchronous")
    mark = home / "streaming"
    with guard(standby, home, "--streaming-mark", str(mark)):
        wait_for(lambda: mark.exists() and time.time() - mark.stat().st_mtime < 1, "the mark touched while streaming")
        assert standby.status().caught_up  # it flushed all the primary said it had
        primary.stop("immediate")
        wait_for(lambda: time.time() - mark.stat().st_mtime > 3, "the mark left alone once the primary is gone")


def test_a_silent_link_stops_the_standby_promoting_before_the_primary_commits_alone(home):
    """The replication link fails without a reset (a dropped route, a firewall that lost its
    state) while the management VIP's adverts still pass. The primary degrades after the
    appliance's --away; by then the standby's streaming mark must be older than
    fulcrum-management accepts, or the standby could take the VIP (the primary dying next)
    and promote without the commits the primary completed alone."""
    primary, standby = Server(home, "lb1"), Server(home, "lb2")
    primary.init_primary()
    primary.sql("CREATE TABLE applies (n int PRIMARY KEY)")
    standby.clone(primary)
    mark, sender = home / "streaming", None
    try:
        with guard(primary, home, away=replication.AWAY_S), guard(standby, home, "--streaming-mark", str(mark)):
            wait_for(lambda: synchronous(primary), "the standby makes replication synchronous")
            assert committed(primary, 1)[0]
            wait_for(
                lambda: mark.exists() and time.time() - mark.stat().st_mtime < 1, "the standby marks that it streams"
            )
            # Silence both ways, the connection still up: the primary's WAL sender is frozen.
            (sender,) = primary.sql("SELECT pid FROM pg_stat_replication")[0]
            os.kill(sender, signal.SIGSTOP)
            cut = time.time()
            returned, done = committed(primary, 2, timeout=1)
            assert not returned, "a commit did not wait for the synchronous standby"
            assert done.wait(replication.AWAY_S + SETTLE_S), "the guard did not release the commit"
            alone = time.time()  # the first commit the primary completed alone
            marked = mark.stat().st_mtime
            print(f"mark last touched {marked - cut:.1f} s after the cut; primary alone {alone - cut:.1f} s after it")
            assert standby.status().state == "disconnected"
            # A promotion compares whole seconds: the mark must be a second older than FRESH_S.
            assert alone - marked >= FRESH_S + 1, (
                f"the primary committed alone {alone - marked:.1f} s after the standby's last mark (FRESH_S {FRESH_S})"
            )
    finally:
        if sender:
            os.kill(sender, signal.SIGCONT)
        for server in (primary, standby):
            if (server.data / "postmaster.pid").exists():
                server.stop("immediate")


def test_a_fenced_primary_keeps_its_commits_waiting_for_a_standby(pair):
    primary, standby, _home = pair
    standby.clone(primary)
    wait_for(lambda: synchronous(primary), "the standby makes replication synchronous")
    primary.sql("ALTER SYSTEM SET default_transaction_read_only = on")  # the fence, as fulcrum-management sets it
    primary.sql("SELECT pg_reload_conf()")
    assert wait_for(lambda: primary.status().fenced, "the primary reads as fenced")
    standby.stop("immediate")
    done = threading.Event()

    def insert():  # a transaction that was under way when the fence came
        with psycopg.connect(primary.dsn, autocommit=True, options="-c default_transaction_read_only=off") as conn:
            conn.execute("INSERT INTO applies VALUES (1)")
        done.set()

    threading.Thread(target=insert, daemon=True).start()
    assert not done.wait(3 * AWAY_S), "a fenced primary's commit completed without a standby"
    assert primary.status().synchronous_standby_names == "ANY 1 (*)"
    # The fence lifted (this appliance holds the management VIP again): it degrades as usual.
    primary.sql("ALTER SYSTEM RESET default_transaction_read_only")
    primary.sql("SELECT pg_reload_conf()")
    assert done.wait(SETTLE_S), "the guard did not release the commit once the fence was lifted"
    assert primary.status().state == "degraded"


class WitnessCheck(threading.Thread):
    """keepalived's witness check, as fulcrum-management configures it: the appliance's
    fulcrum-witness every 0.5 s against loopback, marking each answer. ``cut()`` runs it
    without a network (a namespace of its own, whose loopback is down: ping fails)."""

    def __init__(self, mark):
        super().__init__(daemon=True)
        self.mark, self.cut_off, self.done = mark, threading.Event(), threading.Event()

    def run(self):
        while not self.done.is_set():
            command = [str(WITNESS), "127.0.0.1", str(self.mark)]
            subprocess.run((["unshare", "--net"] if self.cut_off.is_set() else []) + command, check=False)
            self.done.wait(0.5)

    def cut(self):
        self.cut_off.set()
        time.sleep(1.5)  # a check under way ends (ping -W 1)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.join(5)


def test_a_primary_that_hears_neither_its_standby_nor_the_witness_keeps_its_commits_waiting(home):
    """The cut-off side of a partition: the other appliance, which still hears the witness,
    takes over; a commit this one completed alone would be lost when it rejoins."""
    primary, standby = Server(home, "lb1"), Server(home, "lb2")
    primary.init_primary()
    primary.sql("CREATE TABLE applies (n int PRIMARY KEY)")
    conf, mark = home / "keepalived.conf", home / "witness"
    conf.write_text(  # the witness check, as fulcrum-management writes it for the management VIP's keepalived
        f'vrrp_script fulcrum_management_witness {{\n    script "{WITNESS} 127.0.0.1 {mark}"\n    interval 1\n}}\n'
    )
    try:
        with WitnessCheck(mark) as witness, guard(primary, home, "--management-conf", str(conf)):
            standby.clone(primary)
            wait_for(lambda: synchronous(primary), "the standby makes replication synchronous")
            assert committed(primary, 1)[0]
            witness.cut()
            standby.stop("immediate")
            returned, done = committed(primary, 2, timeout=3 * AWAY_S)
            assert not returned, "a primary that heard neither its standby nor the witness completed a commit alone"
            assert primary.status().synchronous_standby_names == "ANY 1 (*)"
            # The witness answers again (this appliance is the survivor after all): it degrades.
            witness.cut_off.clear()
            assert done.wait(SETTLE_S), "the guard did not release the commit once the witness answered"
            assert primary.status().state == "degraded"
        logs = "".join(p.read_text() for p in home.glob("guard-lb1-*.log"))
        assert "witness 127.0.0.1 has not answered" in logs and "commits keep waiting" in logs, logs
    finally:
        for server in (primary, standby):
            if (server.data / "postmaster.pid").exists():
                server.stop("immediate")


# What the API on a database does, from a Django test client (no server: the middleware and
# views are the API's own), printed as JSON: [status, body] for each request.
ASK_THE_API = """
import json
from django.test import Client
api = Client(HTTP_AUTHORIZATION="Bearer %s")
answers = []
for method, path, body in json.loads(%r):
    answer = getattr(api, method)(path, body, content_type="application/json") if body else getattr(api, method)(path)
    answers.append([answer.status_code, answer.json() if answer.content else None])
print(json.dumps(answers))
"""


def test_the_api_on_a_standby_reads_and_refuses_changes_until_promoted(pair):
    primary, standby, home = pair
    primary.sql("CREATE DATABASE fulcrum")

    def manage(server, *args):
        env = {**os.environ, "DATABASE_URL": f"postgresql://postgres@/fulcrum?host={server.run}", "FULCRUM_DEBUG": "1",
               "FULCRUM_SECRET_KEY": secrets.token_urlsafe(50), "FULCRUM_CLUSTER_ENV": str(home / "cluster.env")}  # fmt: skip
        done = subprocess.run([PYTHON, "manage.py", *args], cwd=API_DIR, env=env, capture_output=True, text=True,
                              timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    def ask(server, token, *requests):
        return json.loads(manage(server, "shell", "-c", ASK_THE_API % (token, json.dumps(requests))).splitlines()[-1])

    manage(primary, "fulcrum_migrate", "-v", "0")
    # What fulcrum-management compares with django_migrations to skip a new master's migration
    # (the package's fulcrum/migrations.txt): every migration of the code, recorded once migrated.
    shipped = manage(primary, "fulcrum_migrate", "--shipped").split()
    with psycopg.connect(f"host={primary.run} user=postgres dbname=fulcrum") as conn:
        applied = {f"{app}.{name}" for app, name in conn.execute("SELECT app, name FROM django_migrations")}
    assert {"auth.0001_initial", "cluster.0001_initial"} <= set(shipped) <= applied, (shipped, applied)
    manage(primary, "fulcrum_admin", "--password-file", str(home / "admin.password"), "--reset")
    token = manage(primary, "fulcrum_token", "admin", "--name", "replicated").strip()
    (home / "cluster.env").write_text("FULCRUM_CLUSTER_JOINED=192.0.2.10\nFULCRUM_CLUSTER_NODE=lb2\n")
    made = ask(primary, token, ["post", "/api/v1/pools/", {"name": "web", "algorithm": "round-robin"}])[0]
    assert made[0] == 201, made
    standby.clone(primary)
    wait_for(lambda: synchronous(primary), "the standby makes replication synchronous")

    assert "This database is a standby" in manage(standby, "fulcrum_migrate")
    pools, replication, created, deleted = ask(
        standby, token, ["get", "/api/v1/pools/", None], ["get", "/api/v1/cluster/replication/", None],
        ["post", "/api/v1/pools/", {"name": "api", "algorithm": "round-robin"}], ["delete", f"/api/v1/pools/{made[1]['id']}/", None],
    )  # fmt: skip
    assert pools[0] == 200 and [p["name"] for p in pools[1]["results"]] == ["web"], pools
    assert (replication[1]["role"], replication[1]["state"]) == ("standby", "streaming"), replication
    for refused in (created, deleted):
        assert refused[0] == 503, refused
        assert refused[1]["primary"] == "https://192.0.2.10/" and "read-only copy" in refused[1]["detail"], refused

    # Promoted, with its own guard as every appliance runs one: the primary's list of synchronous
    # standbys came with the copy, and the guard clears it (no standby here), else commits wait.
    primary.stop("immediate")
    standby.promote()
    with open(home / "guard-standby.log", "w") as log:
        guard = subprocess.Popen([sys.executable, "-m", "cluster.replication", "guard", "--dsn", standby.dsn,
                                  "--away", str(AWAY_S), "--interval", "0.2"], cwd=API_DIR, stderr=log)  # fmt: skip
    try:
        wait_for(lambda: standby.status().synchronous_standby_names == "", "the promoted standby's guard")
        created = ask(standby, token, ["post", "/api/v1/pools/", {"name": "api", "algorithm": "round-robin"}])[0]
    finally:
        guard.terminate()
        guard.wait(10)
    assert created[0] == 201, created
