"""Layer 7 limits and member signals with real traffic: per-source connection limit,
slow-client request timeout, member slow start, agent-check answers, cookie rewrite
persistence, and what the pools' connection reuse does when a member closes an idle
connection."""

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

# A member that answers the first request on each connection and keeps it open, then closes
# it, unanswered, when the next request arrives: an idle connection the member is closing
# just as the balancer sends a request on it. Each answer names its connection.
CLOSER = """
import itertools, socket, sys, threading
numbers = itertools.count(1)
def serve(conn, number):
    with conn:
        head = b""
        while b"\\r\\n\\r\\n" not in head:
            chunk = conn.recv(4096)
            if not chunk:
                return
            head += chunk
        body = f"connection {number}\\n".encode()
        conn.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body) + body)
        conn.recv(4096)  # the next request: closed without an answer
server = socket.create_server(("0.0.0.0", int(sys.argv[1])))
while True:
    conn, _ = server.accept()
    threading.Thread(target=serve, args=(conn, next(numbers)), daemon=True).start()
"""
CLOSER_PORTS = {"reused": 8082, "reused-safe": 8083}

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
    # In s1: the slow-start test stops s3's server and every process in its namespace.
    closers = [_netns_python(lab, "s1", CLOSER, port) for port in CLOSER_PORTS.values()]
    for vs_port, (name, member_port) in enumerate(CLOSER_PORTS.items(), start=86):
        reuse = {"http_reuse": "safe"} if name.endswith("-safe") else {}  # else the default
        pool = api.create("/api/v1/pools/", name=name, **reuse)
        api.create("/api/v1/members/", pool=pool["id"], name="s1", address=lab.servers["s1"], port=member_port)
        api.create("/api/v1/virtual-services/", name=name, vip=LIMIT_VIP, port=vs_port, default_pool=pool["id"])
    revision = stack.apply("limits")
    assert revision["nodes"][0]["state"] == "applied", revision["nodes"]
    yield reply
    for process in (agent, slow_server, *closers):
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


def test_a_first_request_meeting_a_closed_idle_connection_is_sent_again_only_if_idempotent(limits, lab):
    url = f"http://{LIMIT_VIP}:86/"  # the pool defaults: http_reuse always
    assert curl(lab, url)[:2] == (200, "connection 1")  # then idle in HAProxy's pool
    # Another client's first GET goes out on that idle connection; the member closes it
    # unanswered; HAProxy sends the GET again on a new connection.
    assert curl(lab, url)[:2] == (200, "connection 2")
    # A POST is never sent twice: on connection 2, now idle and closed under it in turn, the
    # client gets 502, as nginx answers a non-idempotent request on a dead upstream connection.
    assert curl(lab, "-d", "order=1", url)[0] == 502
    assert curl(lab, url)[:2] == (200, "connection 3")


def test_a_safe_pool_gives_each_client_first_request_its_own_connection(limits, lab):
    url = f"http://{LIMIT_VIP}:87/"  # http_reuse safe
    assert curl(lab, url)[:2] == (200, "connection 1")
    assert curl(lab, url)[:2] == (200, "connection 2")  # connection 1 idle, and not used
