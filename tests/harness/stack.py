"""The whole appliance on one machine: API (gunicorn) on loopback, its own database in the
private PostgreSQL cluster, an admin, a node, and `fulcrum-agent` driving a real HAProxy
inside a lab's balancer namespace.

    with Lab() as lab, Stack(lab) as stack:
        stack.api.post("/api/v1/pools/", json={...})

Without a lab it is the API alone (no node, no agent), for clients such as the CLI:

    with Stack(prefix="cli") as stack: ...

`make demo` and the netns / browser tests use it; nothing here is a fake.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

from tests.harness import pg

REPO = Path(__file__).resolve().parents[2]
API_DIR = REPO / "api"
AGENT_BIN = REPO / "agents" / "bin" / "fulcrum-agent"
ARTIFACTS = REPO / "tests" / "artifacts" / "stack"
PYTHON = sys.executable
START_TIMEOUT_S = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_agent():
    """Build the agent binaries (make is a no-op when they are up to date)."""
    subprocess.run(["make", "-C", str(REPO / "agents"), "build"], check=True, stdout=subprocess.DEVNULL)


class ApiClient(requests.Session):
    """requests against the stack's API with the admin's token; paths are relative to it."""

    def __init__(self, base_url, token):
        super().__init__()
        self.base_url = base_url
        self.headers["Authorization"] = f"Bearer {token}"

    def request(self, method, url, *args, **kwargs):
        kwargs.setdefault("timeout", 30)
        return super().request(method, self.base_url + url, *args, **kwargs)

    def create(self, collection, **body):
        """POST and return the created object; raise with the API's answer on failure."""
        response = self.post(collection, json=body)
        if response.status_code != 201:
            raise AssertionError(f"POST {collection} {body} -> {response.status_code} {response.text}")
        return response.json()


class Stack:
    """API + agent + HAProxy for one lab.

    Without ``database`` and ``workdir`` the stack makes its own and removes them on stop;
    given ones (the demo's) are kept for the next run. ``agent_args`` go at the end of the
    agent's command line (e.g. ``["--firewall"]``; a flag given twice takes the last value);
    ``env`` adds to the API's (and agents') environment.
    """

    def __init__(
        self, lab=None, database=None, port=None, node="lb1", workdir=None, prefix=None, agent_args=(), env=None
    ):
        self.lab = lab
        self.prefix = prefix or lab.prefix
        self.database = database or f"fulcrum_{self.prefix}"
        self._own_database = database is None
        self.port = port or free_port()
        self.node = node
        self.agent_args = list(agent_args)
        self.extra_env = dict(env or {})  # settings for the API and the agents (FULCRUM_...)
        self._own_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix=f"fulcrum-stack-{self.prefix}-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = None
        self.admin_password = None
        self.api = None
        self._procs = {}

    # -- lifecycle ---------------------------------------------------------------------

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()

    def start(self):
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self):
        pg.start()
        self.env = {
            **os.environ,
            "DATABASE_URL": pg.create_database(self.database),
            "FULCRUM_DEBUG": "1",
            # One key for every gunicorn worker, or a session signed by one is refused by another.
            "FULCRUM_SECRET_KEY": self._secret_key(),
            "PYTHONUNBUFFERED": "1",
            # The console specs sign in from 127.0.0.1 far faster than people do (11 sign-ins
            # in 37 s on an idle machine): at 10/min the one after a 429 waited forever. The
            # throttle itself is proven in api/accounts/tests/test_throttle.py.
            "FULCRUM_LOGIN_RATE": "600/min",
            **self.extra_env,
        }
        self.manage("migrate", "--no-input", "-v", "0")
        self.admin_password = self._ensure_admin()
        if self.lab is not None:
            self._register_nodes()
        self._start_api()
        self.api = ApiClient(self.url, self._token())
        if self.lab is not None:
            self._start_agents()

    def stop(self):
        """Stop agents, HAProxy and API; drop the stack's database unless it was given."""
        for name in [*(n for n in self._procs if n != "api"), "api"]:
            proc = self._procs.pop(name, None)
            if proc and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self.lab is not None:
            self._stop_daemons()
        if self._own_database and self.env is not None:
            pg.drop_database(self.database)
        if self._own_workdir:
            kept = ARTIFACTS / self.prefix  # the API and agent logs outlive the run
            kept.mkdir(parents=True, exist_ok=True)
            for log in self.workdir.glob("*.log"):
                shutil.copy(log, kept / log.name)
            shutil.rmtree(self.workdir, ignore_errors=True)

    # -- pieces ------------------------------------------------------------------------

    def manage(self, *args, capture=False):
        return subprocess.run(
            [PYTHON, "manage.py", *args],
            cwd=API_DIR,
            env=self.env,
            check=True,
            text=True,
            capture_output=capture,
            timeout=120,
        )

    def _secret_key(self):
        path = self.workdir / "secret_key"
        if not path.exists():
            path.write_text(secrets.token_urlsafe(50))
            path.chmod(0o600)
        return path.read_text()

    def _ensure_admin(self):
        """The admin's password: made (and printed by the command) once, then kept in the workdir."""
        secret = self.workdir / "admin.password"
        args = ["--password-file", str(secret)] + ([] if secret.exists() else ["--reset"])
        self.manage("fulcrum_admin", *args, capture=True)
        return secret.read_text().strip()

    def _token(self):
        """The stack's admin token: made once per workdir (expiring in a day) and kept there,
        so that a stack started again on a kept workdir (the demo's) mints no other."""
        kept = self.workdir / "api.token"
        if kept.exists() and ApiClient(self.url, kept.read_text().strip()).get("/api/v1/auth/me/").status_code == 200:
            return kept.read_text().strip()
        token = self.manage("fulcrum_token", "admin", "--name", "test-stack", "--expires-in-days", "1", capture=True)
        kept.write_text(token.stdout.strip())
        kept.chmod(0o600)
        return kept.read_text()

    def _spawn(self, name, argv, **kwargs):
        log = open(self.workdir / f"{name}.log", "ab")  # noqa: SIM115 - the child keeps it
        self._procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env, **kwargs)

    def _start_api(self):
        argv = [
            PYTHON,
            "-m",
            "gunicorn",
            "-c",
            "gunicorn.conf.py",  # as the appliance runs it
            "fulcrum.wsgi",
            "--bind",
            f"127.0.0.1:{self.port}",
            # Long-polls in flight would otherwise hold a stop for their whole wait.
            "--graceful-timeout",
            "3",
        ]
        self._spawn("api", argv, cwd=API_DIR)
        self._wait(lambda: requests.get(f"{self.url}/api/v1/auth/me/", timeout=2).status_code == 401, "API")

    def stop_api(self):
        """Stop the API at once, as a node cut off from it sees it: requests in flight (the
        agents' long-polls) end now. Agents and daemons keep running."""
        proc = self._procs.pop("api")
        proc.send_signal(signal.SIGINT)  # gunicorn's quick shutdown; SIGTERM would wait for them
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def start_api(self):
        """Start the API again after stop_api(): same port, database and key."""
        self._start_api()

    def _register_nodes(self):
        self.manage("fulcrum_node", self.node, "--token-file", str(self.workdir / "node.token"))

    @property
    def state_dir(self):
        return self.workdir / "agent"

    def _start_agents(self):
        self._start_agent()

    def _start_agent(self):
        if not AGENT_BIN.exists():
            build_agent()
        argv = [
            str(AGENT_BIN),
            "--api",
            self.url,
            "--token-file",
            str(self.workdir / "node.token"),
            "--state-dir",
            str(self.state_dir),
            "--exec-prefix",
            " ".join(self.lab.lb_exec_prefix),
            "--netns",
            self.lab.ns("lb"),
            "--wait",
            "20s",
            # Traffic and member health for the console (tests/netns/test_telemetry.py).
            "--telemetry-interval",
            "10s",
            *self.agent_args,
        ]
        self._spawn("agent", argv)

    def _stop_daemons(self):
        self._stop_haproxy()

    def _stop_haproxy(self):
        pidfile = self.state_dir / "run" / "haproxy.pid"
        if pidfile.exists():
            with contextlib.suppress(ValueError, ProcessLookupError):
                os.kill(int(pidfile.read_text().split()[0]), signal.SIGTERM)

    def _wait(self, ready, what, timeout=START_TIMEOUT_S):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, proc in self._procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited with {proc.returncode}: {self.log(name)[-2000:]}")
            try:
                if ready():
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"{what} not ready within {timeout}s")

    def log(self, name):
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    # -- operations used by tests and the demo -------------------------------------------

    def apply(self, message="", timeout=60, force=False):
        """Apply the current objects and wait until this stack's node reports; return the revision.

        With nothing pending the API publishes nothing (409 nothing_to_apply), and this fails:
        ``force`` publishes the same objects again, for a test that means to."""
        body = {"message": message, "force": True} if force else {"message": message}
        response = self.api.post("/api/v1/revisions/", json=body)
        if response.status_code != 201:
            raise AssertionError(f"apply refused: {response.status_code} {response.text}")
        number = response.json()["number"]
        return self.wait_for_node(number, timeout)

    def wait_for_node(self, number, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            revision = next(r for r in self.api.get("/api/v1/revisions/").json()["results"] if r["number"] == number)
            states = {n["node"]: n for n in revision["nodes"]}
            mine = states.get(self.node)
            if mine and mine["state"] != "pending":
                return revision
            time.sleep(0.2)
        raise TimeoutError(f"node {self.node} did not report revision {number} in {timeout}s:\n{self.log('agent')}")

    def haproxy_runtime(self, command):
        """Send one command to HAProxy's runtime API (the stats socket the agent's config opens)."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(str(self.state_dir / "run" / "haproxy.sock"))
            s.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := s.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def server_states(self, backend):
        """``{server: "UP" | "DOWN" | "MAINT" | ...}`` for a backend, from ``show stat``."""
        lines = self.haproxy_runtime("show stat").splitlines()
        header = lines[0].lstrip("# ").split(",")
        rows = [dict(zip(header, line.split(","), strict=False)) for line in lines[1:] if line]
        return {
            r["svname"]: r["status"]
            for r in rows
            if r["pxname"] == backend and r["svname"] not in ("FRONTEND", "BACKEND")
        }
