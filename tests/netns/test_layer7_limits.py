"""Layer 7 limits and member signals with real traffic: per-source connection limit,
slow-client request timeout, member slow start, agent-check answers, and cookie rewrite
persistence."""

import subprocess
import sys
import time

import pytest

from tests.netns.test_layer7 import curl
from tests.netns.test_rest_flow import CHECK, wait_for

pytestmark = pytest.mark.netns

LIMIT_VIP = "10.77.100.50"
AGENT_PORT = 5555

# A load agent as HAProxy's agent-check expects it: one line per connection, read from a file.
AGENT = """
import socket, sys
server = socket.create_server(("0.0.0.0", int(sys.argv[1])))
while True:
    conn, _ = server.accept()
    with conn:
        conn.sendall(open(sys.argv[2], "rb").read())
"""

# Sends half a request head, then waits for whatever the balancer answers.
SLOW_CLIENT = """
import socket, sys, time
conn = socket.create_connection((sys.argv[1], int(sys.argv[2])))
conn.sendall(b"GET / HTTP/1.1\\r\\nHost: x\\r\\n")
start = time.monotonic()
conn.settimeout(10)
answer = conn.recv(100).split(b"\\r\\n")[0].decode()
print(answer, round(time.monotonic() - start, 2))
"""

# A server that takes a second per request, one request per connection.
SLOW_SERVER = """
import http.server, socketserver, sys, time
class Slow(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        time.sleep(1)
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"slow\\n")
    def log_message(self, *args):
        pass
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer(("0.0.0.0", int(sys.argv[1])), Slow).serve_forever()
"""

# Holds N connections open to a VIP until killed.
HOLDER = """
import socket, sys, time
held = [socket.create_connection((sys.argv[1], 80)) for _ in range(int(sys.argv[2]))]
print("held", flush=True)
time.sleep(60)
"""


def _netns_python(lab, role, script, *args):
    return subprocess.Popen(
        ["ip", "netns", "exec", lab.ns(role), sys.executable, "-c", script, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


@pytest.fixture(scope="module")
def limits(stack, lab, tmp_path_factory):
    api = stack.api
    reply = tmp_path_factory.mktemp("agent") / "reply"
    reply.write_text("up 100%\n")
    agent = _netns_python(lab, "s2", AGENT, AGENT_PORT, reply)
    only = api.create("/api/v1/pools/", name="limited")
    api.create("/api/v1/members/", pool=only["id"], name="s1", address=lab.servers["s1"], port=80)
    api.create(
        "/api/v1/virtual-services/", name="limited", vip=LIMIT_VIP, port=80, default_pool=only["id"], conn_limit=2
    )
    slow = api.create("/api/v1/pools/", name="slow", algorithm="weighted-round-robin")
    api.create("/api/v1/health-checks/", pool=slow["id"], type="http", path="/health", **CHECK)
    api.create(
        "/api/v1/members/",
        pool=slow["id"],
        name="s3",
        address=lab.servers["s3"],
        port=80,
        weight=100,
        slowstart_ms=20000,
    )
    agented = api.create("/api/v1/pools/", name="agented")
    api.create("/api/v1/health-checks/", pool=agented["id"], type="agent", agent_port=AGENT_PORT, **CHECK)
    api.create("/api/v1/members/", pool=agented["id"], name="s2", address=lab.servers["s2"], port=80)
    rewrite = api.create(
        "/api/v1/pools/", name="rewrite", persistence={"type": "cookie_rewrite", "cookie_name": "JSESSIONID"}
    )
    for name, address in lab.servers.items():
        api.create("/api/v1/members/", pool=rewrite["id"], name=name, address=address, port=80)
    for name, port, pool in (("slow", 81, slow), ("agented", 82, agented), ("rewrite", 83, rewrite)):
        api.create("/api/v1/virtual-services/", name=name, vip=LIMIT_VIP, port=port, default_pool=pool["id"])
    api.create(
        "/api/v1/virtual-services/",
        name="impatient",
        vip=LIMIT_VIP,
        port=84,
        default_pool=only["id"],
        http_request_timeout_ms=500,
    )
    slow_server = _netns_python(lab, "s1", SLOW_SERVER, 8081)
    queued = api.create("/api/v1/pools/", name="queued", queue_timeout_ms=1500)
    api.create(
        "/api/v1/members/",
        pool=queued["id"],
        name="s1",
        address=lab.servers["s1"],
        port=8081,
        max_connections=1,
        max_queue=1,
    )
    api.create("/api/v1/virtual-services/", name="queued", vip=LIMIT_VIP, port=85, default_pool=queued["id"])
    revision = stack.apply("limits")
    assert revision["nodes"][0]["state"] == "applied", revision["nodes"]
    yield reply
    for process in (agent, slow_server):
        process.kill()
        process.wait()


def test_connection_limit_per_source_answers_429(limits, lab):
    assert curl(lab, f"http://{LIMIT_VIP}/")[0] == 200
    holder = _netns_python(lab, "cl", HOLDER, LIMIT_VIP, 2)
    try:
        assert holder.stdout.readline().strip() == "held"
        time.sleep(0.2)
        assert curl(lab, f"http://{LIMIT_VIP}/")[0] == 429  # a third concurrent connection
    finally:
        holder.kill()
        holder.wait()
    wait_for(lambda: curl(lab, f"http://{LIMIT_VIP}/")[0] == 200, 5)


def _weight(stack, backend, server):
    """The effective weight HAProxy balances with (``show stat``), which slow start lowers."""
    lines = stack.haproxy_runtime("show stat").splitlines()
    header = lines[0].lstrip("# ").split(",")
    rows = (dict(zip(header, line.split(","), strict=False)) for line in lines[1:] if line)
    return next(int(r["weight"]) for r in rows if r["pxname"] == backend and r["svname"] == server)


def test_slow_start_ramps_a_returning_member(limits, stack, lab):
    wait_for(lambda: stack.server_states("pool-slow").get("s3") == "UP", 10)
    lab.stop_server("s3")
    try:
        wait_for(lambda: stack.server_states("pool-slow").get("s3", "").startswith("DOWN"), 10)
    finally:
        lab.start_server("s3")
    wait_for(lambda: stack.server_states("pool-slow").get("s3") == "UP", 10)
    current = _weight(stack, "pool-slow", "s3")
    assert current < 50, current  # a fraction of its configured 100, rising over 20 s
    # HAProxy raises it about every second; a busy machine may run that task late.
    wait_for(lambda: current < _weight(stack, "pool-slow", "s3") < 100, 6)


def test_agent_check_takes_a_member_down_and_back(limits, stack):
    wait_for(lambda: stack.server_states("pool-agented").get("s2") == "UP", 10)
    limits.write_text("down\n")
    wait_for(lambda: stack.server_states("pool-agented").get("s2", "").startswith("DOWN"), 10)
    limits.write_text("up 100%\n")
    wait_for(lambda: stack.server_states("pool-agented").get("s2") == "UP", 10)


def test_cookie_rewrite_replaces_the_application_cookie_value(limits, lab):
    url = f"http://{LIMIT_VIP}:83"
    _, server, headers = curl(lab, f"{url}/login")
    assert headers["set-cookie"].split(";")[0] == f"JSESSIONID={server}"
    assert {curl(lab, "-H", f"Cookie: JSESSIONID={server}", f"{url}/")[1] for _ in range(10)} == {server}


def test_slow_client_gets_408_after_the_request_timeout(limits, lab):
    client = _netns_python(lab, "cl", SLOW_CLIENT, LIMIT_VIP, 84)
    status, elapsed = client.communicate(timeout=15)[0].strip().rsplit(" ", 1)
    assert status.startswith("HTTP/1.1 408"), status
    assert float(elapsed) < 5  # the service's 500 ms, not the 10 s default


def test_member_connection_cap_queues_then_refuses(limits, lab):
    # One request at a time, each taking 1 s, and 1.5 s allowed in the queue: of three sent at
    # once, the first is served, the second waits 1 s and is served, the third would wait 2 s
    # and is refused with 503 instead.
    clients = [
        subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                lab.ns("cl"),
                "curl",
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "--max-time",
                "10",
                f"http://{LIMIT_VIP}:85/",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    assert sorted(c.communicate(timeout=15)[0] for c in clients) == ["200", "200", "503"]
