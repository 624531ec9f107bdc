"""`make demo`: the appliance on this machine, balancing a lab of network namespaces.

Starts the private PostgreSQL, the lab (client, balancer and three web servers in network
namespaces), the API with the built console on http://127.0.0.1:8000/, and a node agent
running HAProxy in the balancer namespace; creates a sample service on first run; prints
the console URL, the login and a curl line. Ctrl-C stops everything it started.
"""

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.harness import pg  # noqa: E402
from tests.harness.lab import Lab, LabError  # noqa: E402
from tests.harness.stack import Stack  # noqa: E402

PORT = int(os.environ.get("FULCRUM_DEMO_PORT", "8000"))
VIP = "10.77.100.10"
# Where the demo keeps its state and which database it uses (tests/netns/test_demo.py
# gives its own, beside the developer's).
STATE = Path(os.environ.get("FULCRUM_DEMO_STATE", REPO / ".state" / "demo"))
DATABASE = os.environ.get("FULCRUM_DEMO_DATABASE", pg.DATABASE)


def create_sample_service(stack, lab):
    """One HTTP service over the three lab servers, unless the operator already has services."""
    if stack.api.get("/api/v1/virtual-services/").json()["count"]:
        return
    pool = stack.api.create("/api/v1/pools/", name="demo-web", algorithm="round-robin")
    stack.api.create(
        "/api/v1/health-checks/",
        pool=pool["id"],
        type="http",
        path="/health",
        interval_ms=2000,
        timeout_ms=1000,
        rise=2,
        fall=3,
    )
    for name, address in lab.servers.items():
        stack.api.create("/api/v1/members/", pool=pool["id"], name=name, address=address, port=80)
    stack.api.create(
        "/api/v1/virtual-services/", name="demo-web", vip=VIP, port=80, protocol="http", default_pool=pool["id"]
    )


def banner(stack, lab):
    curl = f"ip netns exec {lab.ns('client')} curl -s http://{VIP}/"
    return f"""
  Fulcrum is running.

    Console   {stack.url}/
    Login     admin / {stack.admin_password}
    API       {stack.url}/api/v1/   (docs: {stack.url}/api/v1/docs/)
    Try       {curl}      (answers s1, s2, s3 in turn)

  Stop with Ctrl-C. State (database, admin password) is kept under .state/.
"""


def port_in_use(port):
    """Whether something listens on 127.0.0.1:``port`` already."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def main():
    if os.geteuid() != 0:
        sys.exit("make demo needs root: it builds network namespaces for the lab")
    if not (REPO / "webui" / "dist" / "index.html").exists():
        sys.exit("the console is not built: run `make build`")
    if port_in_use(PORT):
        sys.exit(f"port {PORT} is in use (another demo, or another server): stop it, or set FULCRUM_DEMO_PORT")
    stop = {"now": False}

    def on_signal(signum, frame):
        stop["now"] = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    lab = Lab(prefix="fdemo")
    stack = Stack(lab, database=DATABASE, port=PORT, node="demo-lb", workdir=STATE)
    pg_was_running = pg.running()  # then it is the developer's (or a test tier's): left running
    try:
        lab.up()
        stack.start()
        create_sample_service(stack, lab)
        # The first run publishes the sample service; a run after it publishes nothing (the
        # agent runs the last revision from its kept state): edits stay pending until the
        # operator applies them.
        if not stack.api.get("/api/v1/revisions/").json()["count"]:
            revision = stack.apply("make demo: the sample service")
            print(f"  revision {revision['number']} applied on {stack.node}")
        print(banner(stack, lab), flush=True)
        while not stop["now"]:
            signal.pause()
    except (LabError, RuntimeError, TimeoutError, AssertionError, subprocess.CalledProcessError) as err:
        print(f"demo failed: {err}", file=sys.stderr)
        return 1
    finally:
        print("\n  stopping…", flush=True)
        stack.stop()
        lab.down()
        if not pg_was_running:
            pg.stop()
        print("  stopped; nothing left running.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
