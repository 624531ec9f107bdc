"""`make demo` (appliance/dev/demo.py) started twice on its kept state, as a developer does:
the first run publishes the sample service; the next publishes nothing the operator did not
apply and mints no other token (issue 20: each restart published pending edits as a revision
"make demo", an empty one when there were none, and another never-expiring admin token),
and the node serves the last revision again. Ctrl-C leaves nothing running. It has its own
state folder, port and database, but the demo's lab namespaces (fdemo-*): not beside a
developer's running demo."""

import os
import signal
import socket
import subprocess
import time

import pytest

from tests.harness import pg
from tests.harness.stack import PYTHON, REPO, ApiClient, free_port

pytestmark = pytest.mark.netns

DATABASE = "fulcrum_demo_test"
STARTED_S = 300  # the first run migrates a new database and builds nothing (make build did)


class Demo:
    def __init__(self, state):
        self.state, self.port = state, free_port()
        self.env = {
            **os.environ,
            "FULCRUM_DEMO_PORT": str(self.port),
            "FULCRUM_DEMO_STATE": str(state),
            "FULCRUM_DEMO_DATABASE": DATABASE,
        }
        self.proc, self.output = None, []

    def start(self):
        self.output = []
        self.proc = subprocess.Popen(
            [PYTHON, "appliance/dev/demo.py"], cwd=REPO, env=self.env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + STARTED_S
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line and self.proc.poll() is not None:
                break
            self.output.append(line)
            if "Fulcrum is running." in line:
                return ApiClient(f"http://127.0.0.1:{self.port}", (self.state / "api.token").read_text().strip())
        self.stop()
        raise AssertionError("the demo did not start:\n" + "".join(self.output))

    def stop(self):
        if self.proc is None:
            return ""
        self.proc.send_signal(signal.SIGINT)
        rest, _ = self.proc.communicate(timeout=60)
        self.output.append(rest)
        code, self.proc = self.proc.returncode, None
        assert code == 0, "".join(self.output)
        return "".join(self.output)


def client_get(path="/"):
    return subprocess.run(
        ["ip", "netns", "exec", "fdemo-cl", "curl", "-s", "-m", "5", f"http://10.77.100.10{path}"],
        capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


def test_a_restarted_demo_publishes_nothing_and_mints_no_token(tmp_path):
    demo = Demo(tmp_path / "demo")
    try:
        api = demo.start()
        assert "revision 1 applied on demo-lb" in "".join(demo.output)
        assert {client_get() for _ in range(6)} == {"s1", "s2", "s3"}
        # An edit the operator has not applied yet.
        pool = api.get("/api/v1/pools/").json()["results"][0]
        answer = api.patch(f"/api/v1/pools/{pool['id']}/", json={"algorithm": "least-connections"})
        assert answer.status_code == 200, answer.text
        first = demo.stop()
        assert "nothing left running" in first
        assert not [ns for ns in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
                    if ns.startswith("fdemo-")]  # fmt: skip

        api = demo.start()
        assert "applied on" not in "".join(demo.output)
        revisions = api.get("/api/v1/revisions/").json()
        assert revisions["count"] == 1, revisions
        pending = api.get("/api/v1/revisions/pending/").json()
        assert pending["pending"] and pending["base_revision"] == 1, pending
        tokens = [t for t in api.get("/api/v1/tokens/").json()["results"] if t["name"] == "test-stack"]
        assert len(tokens) == 1 and tokens[0]["expires_at"], tokens
        assert {client_get() for _ in range(6)} == {"s1", "s2", "s3"}  # the last revision, served again
    finally:
        demo.stop()
        pg.drop_database(DATABASE)


def test_a_busy_port_is_named_with_the_way_out(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        demo = Demo(tmp_path / "demo")
        demo.env["FULCRUM_DEMO_PORT"] = str(port)
        done = subprocess.run([PYTHON, "appliance/dev/demo.py"], cwd=REPO, env=demo.env, capture_output=True,
                              text=True, timeout=60)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"port {port} is in use (another demo, or another server): stop it, or set FULCRUM_DEMO_PORT"
    )
    assert not (tmp_path / "demo").exists()  # nothing started, nothing made
