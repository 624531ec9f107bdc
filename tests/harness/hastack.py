"""The appliance as an HA pair on one machine: one API (gunicorn, its own database in the
private PostgreSQL cluster) and, for each balancer of an ``HaLab``, a node and its own
``fulcrum-agent`` running HAProxy and keepalived inside that balancer's namespace.

    with HaLab() as lab, HaStack(lab) as stack:
        stack.set_addresses()
        stack.api.create("/api/v1/ha-groups/", ...)
        stack.apply("HA pair")

A node is named after its namespace (``<prefix>-lb1``): node names pick keepalived's run
directory (``/run/fulcrum-agent/<node>``, a host path), so two labs never share one.
Nothing here is a fake: faults are real signals to the real daemons.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import time
from datetime import datetime
from pathlib import Path

from tests.harness.lab import pid_alive
from tests.harness.stack import AGENT_BIN, Stack, build_agent

HA_RUN_DIR = Path("/run/fulcrum-agent")  # compiler/rules.py HA_RUN_DIR
KEEPALIVED_PIDS = ("keepalived.pid", "keepalived-vrrp.pid", "keepalived-checkers.pid", "keepalived-bfd.pid")
# keepalived --log-console --log-detail: "Sun Nov 22 10:00:00 2026: (web) Entering MASTER STATE"
KEEPALIVED_STATE_LINE = re.compile(
    r"^(?P<at>\w{3} \w{3} +\d+ [\d:]+ \d{4}): \((?P<group>[^)]+)\) Entering (?P<state>\w+) STATE"
)


class HaStack(Stack):
    """API + one agent (HAProxy, keepalived) per balancer of an HaLab."""

    def __init__(self, lab, agent_wait="3s"):
        super().__init__(lab, node=lab.ns(lab.balancers[0]))
        self.balancers = lab.balancers
        # The agent restarts a dead daemon before each long-poll: a short wait brings a
        # killed keepalived or HAProxy back within seconds.
        self.agent_wait = agent_wait

    # -- names ---------------------------------------------------------------------------

    def node_name(self, lb):
        return self.lab.ns(lb)

    def balancer_of(self, node_name):
        return next(lb for lb in self.balancers if self.node_name(lb) == node_name)

    def node_state_dir(self, lb):
        return self.workdir / f"agent-{lb}"

    def run_dir(self, lb):
        """keepalived's and the agent's shared directory (track files, notify FIFO)."""
        return HA_RUN_DIR / self.node_name(lb)

    def keepalived_log_path(self, lb):
        return self.workdir / f"keepalived-{lb}.log"

    @property
    def state_dir(self):
        return self.node_state_dir(self.balancers[0])

    # -- lifecycle -----------------------------------------------------------------------

    def _register_nodes(self):
        for lb in self.balancers:
            self.manage("fulcrum_node", self.node_name(lb), "--token-file", str(self.workdir / f"{lb}.token"))

    def _start_agents(self):
        if not AGENT_BIN.exists():
            build_agent()
        for lb in self.balancers:
            self.start_agent(lb)

    def start_agent(self, lb):
        argv = [str(AGENT_BIN), "--api", self.url, "--token-file", str(self.workdir / f"{lb}.token")]
        argv += ["--state-dir", str(self.node_state_dir(lb)), "--exec-prefix", " ".join(self.lab.exec_prefix(lb))]
        argv += ["--netns", self.lab.ns(lb), "--keepalived-log", str(self.keepalived_log_path(lb))]
        argv += ["--wait", self.agent_wait, "--log-level", "debug"]
        self._spawn(f"agent-{lb}", argv)

    def stop_agent(self, lb):
        """Stop ``lb``'s agent as a node that goes down would; its HAProxy and keepalived run on."""
        proc = self._procs.pop(f"agent-{lb}")
        proc.terminate()
        proc.wait(timeout=10)

    def _stop_daemons(self):
        """HAProxy and keepalived of every balancer (keepalived releases its VIPs on SIGTERM)."""
        for lb in self.balancers:
            for pid in self.keepalived_pids(lb)[:1] + self.haproxy_pids(lb)[:1]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(self.keepalived_pids(lb) for lb in self.balancers):
            time.sleep(0.1)
        for lb in self.balancers:  # the agent makes it (track files, FIFO) and leaves it
            shutil.rmtree(self.run_dir(lb), ignore_errors=True)

    # -- API -----------------------------------------------------------------------------

    def node_ids(self):
        nodes = self.api.get("/api/v1/nodes/").json()["results"]
        return {self.balancer_of(n["name"]): n["id"] for n in nodes}

    def set_addresses(self):
        """Each node's own front address (VRRP source, HAProxy peer), through REST."""
        for lb, node_id in self.node_ids().items():
            response = self.api.patch(f"/api/v1/nodes/{node_id}/", json={"address": self.lab.front_addr(lb)})
            if response.status_code != 200:
                raise AssertionError(f"PATCH node {lb} address -> {response.status_code} {response.text}")

    def apply(self, message="", timeout=60, force=False):
        """Apply the current objects; wait until every node reported; return the revision.
        ``force``: publish even with nothing pending (see Stack.apply)."""
        body = {"message": message, "force": True} if force else {"message": message}
        response = self.api.post("/api/v1/revisions/", json=body)
        if response.status_code != 201:
            raise AssertionError(f"apply refused: {response.status_code} {response.text}")
        return self.wait_for_nodes(response.json()["number"], timeout)

    def wait_for_nodes(self, number, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            revision = self.api.get(f"/api/v1/revisions/{self._revision_id(number)}/").json()
            states = {n["node"]: n["state"] for n in revision["nodes"]}
            if len(states) == len(self.balancers) and "pending" not in states.values():
                return revision
            time.sleep(0.2)
        logs = "\n".join(self.log(f"agent-{lb}")[-3000:] for lb in self.balancers)
        raise TimeoutError(f"revision {number} not reported by every node in {timeout}s:\n{logs}")

    wait_for_node = wait_for_nodes

    def _revision_id(self, number):
        listing = self.api.get("/api/v1/revisions/").json()["results"]
        return next(r["id"] for r in listing if r["number"] == number)

    def standby(self, lb, on=True, timeout=60):
        """POST standby for ``lb``; wait until both nodes applied the revision it published."""
        node_id = self.node_ids()[lb]
        response = self.api.post(f"/api/v1/nodes/{node_id}/standby/", json={"standby": on})
        if response.status_code != 200:
            raise AssertionError(f"standby {lb} {on} -> {response.status_code} {response.text}")
        return self.wait_for_nodes(response.json()["revision"], timeout)

    def vrrp(self):
        """``{lb: {group: state}}`` as the agents last reported it to the API."""
        nodes = self.api.get("/api/v1/nodes/").json()["results"]
        return {self.balancer_of(n["name"]): {v["group"]: v["state"] for v in n.get("vrrp", [])} for n in nodes}

    def ha_events(self, **filters):
        """Every HA event the API holds (newest first), optionally filtered (node=, group=)."""
        events, url = [], "/api/v1/ha-events/"
        params = {"node": self.node_name(filters["lb"])} if "lb" in filters else {}
        params |= {"group": filters["group"]} if "group" in filters else {}
        page = self.api.get(url, params=params | {"limit": 1000}).json()
        events = page["results"] if isinstance(page, dict) else page
        return [{**e, "lb": self.balancer_of(e["node"])} for e in events]

    # -- daemons -------------------------------------------------------------------------

    def runtime(self, lb, command):
        """One command to ``lb``'s HAProxy runtime API."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(str(self.node_state_dir(lb) / "run" / "haproxy.sock"))
            s.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := s.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def _pid_file(self, lb, name):
        path = self.node_state_dir(lb) / "run" / name
        try:
            pid = int(path.read_text().split()[0])
        except (FileNotFoundError, ValueError, IndexError):
            return 0
        return pid if pid_alive(pid) else 0

    def keepalived_pids(self, lb):
        """keepalived's live processes on ``lb``, the main one first (empty: not running)."""
        return [pid for pid in (self._pid_file(lb, name) for name in KEEPALIVED_PIDS) if pid]

    def haproxy_pids(self, lb):
        """HAProxy's master, then its workers (empty: not running)."""
        master = self._pid_file(lb, "haproxy.pid")
        return [master, *_children(master)] if master else []

    def crash_keepalived(self, lb):
        """SIGKILL every keepalived process of ``lb`` at once: no priority-0 advert, no
        VIP removal, no respawn by its parent (all are stopped before any is killed)."""
        pids = self.keepalived_pids(lb)
        if not pids:
            raise RuntimeError(f"keepalived is not running on {lb}")
        _crash(pids)
        return pids

    def crash_haproxy(self, lb):
        """SIGKILL HAProxy's master and workers on ``lb`` at once."""
        pids = self.haproxy_pids(lb)
        if not pids:
            raise RuntimeError(f"haproxy is not running on {lb}")
        _crash(pids)
        return pids

    def wait_for_daemons(self, lb, timeout=30):
        """Until the agent has keepalived and HAProxy running again on ``lb``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.keepalived_pids(lb) and self.haproxy_pids(lb):
                return
            time.sleep(0.1)
        raise TimeoutError(f"keepalived/haproxy not back on {lb} within {timeout}s:\n{self.log(f'agent-{lb}')[-3000:]}")

    def keepalived_log(self, lb):
        path = self.keepalived_log_path(lb)
        return path.read_text(errors="replace") if path.exists() else ""

    def keepalived_transitions(self, lb, group=None):
        """``[(datetime, group, state)]`` from ``lb``'s keepalived log, oldest first."""
        found = []
        for line in self.keepalived_log(lb).splitlines():
            match = KEEPALIVED_STATE_LINE.match(line)
            if match and group in (None, match["group"]):
                found.append((datetime.strptime(match["at"], "%a %b %d %H:%M:%S %Y"), match["group"], match["state"]))
        return found


def stick_entries(shown):
    """``{client address: server}`` from the text of HAProxy's ``show table <name>`` (the
    server's name where HAProxy stores it, else its id)."""
    entries = {}
    for line in shown.splitlines():
        fields = dict(word.split("=", 1) for word in line.split() if "=" in word)
        if "key" in fields:
            entries[fields["key"].removeprefix("::ffff:")] = fields.get("server_key") or fields.get("server_id")
    return entries


def _children(pid):
    """Direct children of ``pid`` (from /proc, as the workers of HAProxy's master)."""
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError), open(f"/proc/{entry}/stat") as stat:
            if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(entry))
    return kids


def _crash(pids):
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
        time.sleep(0.02)
