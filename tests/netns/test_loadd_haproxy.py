"""fulcrum-loadd steering a real HAProxy's leastconn through agent-check, in the lab.

::

    client ns               lb ns (HAProxy, hand-written config)         server nss
    [cl] 10.77.1.2  --->  10.77.100.40:80      balance leastconn      --> s1 nginx :80, fulcrum-loadd :3333/:3334
                          10.77.100.40:10001   use-server s1 (hold)   --> s2 nginx :80, fulcrum-loadd :3333/:3334
                          10.77.100.40:10002   use-server s2 (hold)   --> s3 nginx :80, fulcrum-loadd :3333/:3334
                          10.77.100.40:10003   use-server s3 (hold)
                          each server: weight 256 check agent-check agent-port 3333 agent-inter 200ms

Each server's fulcrum-loadd reads its load from a file (``--source file:``) and answers only
the balancer (``--allow 10.77.2.1/32``; tests/harness/loadd.py). The loads are the study's worked example
(seeds-digest §002): A = s1 50 %, B = s2 30 %, C = s3 70 %, so fulcrum-loadd answers 20 %, 33 %
and 14 % and HAProxy's weights become 256 x 20 / 100 = 51, 256 x 33 / 100 = 84 and
256 x 14 / 100 = 35 (HAProxy truncates: ``iweight * percent / 100`` in
``server_parse_weight_change_request``). With 10, 8 and 12 connections held open, leastconn
picks the smallest connections / weight, which is DLLC's smallest connections x load.
"""

import contextlib
import csv
import io
import socket
import subprocess
import sys
import time

import pytest

from tests.harness.loadd import AGENT_PORT, HTTP_PORT, balancer_get
from tests.netns.conftest import EXAMPLE_LOADS
from tests.netns.test_rest_flow import wait_for

pytestmark = pytest.mark.netns

VIP = "10.77.100.40"
HOLD_PORTS = {"s1": 10001, "s2": 10002, "s3": 10003}
AGENT_INTER_S = 0.2

HAPROXY_CFG = """\
global
    stats socket {run}/admin.sock mode 600 level admin
defaults
    mode tcp
    timeout connect 2s
    timeout client 60s
    timeout server 60s
frontend fe
    bind {vip}:80
    bind {vip}:10001-10003
    default_backend be
backend be
    balance leastconn
{use_servers}
{servers}
"""

# Runs in the client namespace: opens PORT:COUNT connections through HAProxy, says so, and
# holds them until its standard input closes.
HOLDER = """\
import socket, sys
held = []
for spec in sys.argv[2:]:
    port, count = (int(x) for x in spec.split(":"))
    held += [socket.create_connection((sys.argv[1], port), timeout=5) for _ in range(count)]
print(len(held), flush=True)
sys.stdin.read()
"""


# -- fixtures ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def haproxy(lab, loads, tmp_path_factory):
    """HAProxy in the lb namespace (its output in ``haproxy.log`` beside its configuration);
    yields the path of its admin socket."""
    run = tmp_path_factory.mktemp("haproxy")
    use_servers = "\n".join(f"    use-server {s} if {{ dst_port {p} }}" for s, p in HOLD_PORTS.items())
    servers = "\n".join(
        f"    server {name} {addr}:80 weight 256 check agent-check agent-port {AGENT_PORT} agent-inter 200ms"
        for name, addr in lab.servers.items()
    )
    cfg = run / "haproxy.cfg"
    cfg.write_text(HAPROXY_CFG.format(run=run, vip=VIP, use_servers=use_servers, servers=servers))
    log = run / "haproxy.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([*lab.lb_exec_prefix, "haproxy", "-db", "-f", str(cfg)], stdout=out, stderr=out)
    sock = run / "admin.sock"
    try:
        wait_for(lambda: proc.poll() is not None or sock.exists(), 10)
        assert proc.poll() is None, log.read_text()
        yield sock
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# -- helpers -----------------------------------------------------------------------------


def admin(sock, command):
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(sock))
        s.sendall(command.encode() + b"\n")
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode()


def user_weights(sock):
    """``{server: (uweight, iweight)}`` of backend be, from ``show servers state``."""
    lines = admin(sock, "show servers state be").splitlines()
    header = next(line for line in lines if line.startswith("# be_id")).lstrip("# ").split()
    rows = [dict(zip(header, line.split(), strict=False)) for line in lines if line and line[0].isdigit()]
    return {r["srv_name"]: (int(r["srv_uweight"]), int(r["srv_iweight"])) for r in rows if "srv_name" in r}


def stats(sock):
    """``{server: row}`` of backend be, from ``show stat``."""
    text = admin(sock, "show stat").lstrip("# ")
    return {
        r["svname"]: r for r in csv.DictReader(io.StringIO(text)) if r["pxname"] == "be" and r["svname"] != "BACKEND"
    }


def weights(sock):
    return {name: uweight for name, (uweight, _) in user_weights(sock).items()}


def next_server(lab):
    """Which server the next balanced connection reaches: nginx answers its own name."""
    status, body, _ = lab.curl(f"http://{VIP}/", timeout=3)
    assert status == 200, "no answer through HAProxy"
    return body.strip()


@contextlib.contextmanager
def held_connections(lab, sock, counts):
    """Hold ``counts[server]`` connections on each server (mode tcp: each is a live
    connection to the server's nginx) until the block ends."""
    specs = [f"{HOLD_PORTS[name]}:{n}" for name, n in counts.items()]
    proc = subprocess.Popen(
        ["ip", "netns", "exec", lab.ns("cl"), sys.executable, "-c", HOLDER, VIP, *specs],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == str(sum(counts.values()))
        wait_for(lambda: {n: int(r["scur"]) for n, r in stats(sock).items()} == counts, 10)
        yield
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


# -- tests -------------------------------------------------------------------------------


def test_weights_are_the_agent_percentages(haproxy):
    want = {"s1": 256 * 20 // 100, "s2": 256 * 33 // 100, "s3": 256 * 14 // 100}
    assert want == {"s1": 51, "s2": 84, "s3": 35}
    wait_for(lambda: weights(haproxy) == want, 5)
    assert {name: iw for name, (_, iw) in user_weights(haproxy).items()} == dict.fromkeys(want, 256)
    # show stat's weight column is the effective weight leastconn divides by.
    assert {name: int(r["weight"]) for name, r in stats(haproxy).items()} == want


def test_json_endpoint_agrees(haproxy, lab):
    status, body = balancer_get(lab, lab.servers["s2"], "/v1/load")
    assert status == 200
    assert '"load_milli":300' in body and '"agent_percent":33' in body and '"source":"file"' in body


def test_next_connection_goes_to_least_connections_times_load(haproxy, lab, loads):
    """The worked example: 10 x 500, 8 x 300, 12 x 700 -> B (s2). Then B's load rises to
    0.9: weight 256 x 11 / 100 = 28 within a few agent-inter periods, and 10 x 500 is now
    the smallest (8 x 900 = 7200, 12 x 700 = 8400): A (s1), where plain leastconn, counting
    connections alone, would still pick B."""
    wait_for(lambda: weights(haproxy) == {"s1": 51, "s2": 84, "s3": 35}, 5)
    with held_connections(lab, haproxy, {"s1": 10, "s2": 8, "s3": 12}):
        assert next_server(lab) == "s2"
        loads.set("s2", "0.9")
        try:
            took = wait_for(lambda: weights(haproxy)["s2"] == 28, 3)
            print(f"s2's weight followed its load in {took:.2f}s ({took / AGENT_INTER_S:.1f} agent-inter periods)")
            assert took < 10 * AGENT_INTER_S
            assert weights(haproxy) == {"s1": 51, "s2": 28, "s3": 35}
            assert next_server(lab) == "s1"
        finally:
            loads.set("s2", EXAMPLE_LOADS["s2"])
    wait_for(lambda: weights(haproxy)["s2"] == 84, 3)


def test_unknown_load_keeps_the_last_weight(haproxy, lab, loads):
    """A load file that stops making sense: for one window the last load stands, then
    fulcrum-loadd answers nothing (JSON: 503) and HAProxy keeps s3 up with its last weight,
    showing the empty answer in its agent status; a good file again and the weight follows."""
    wait_for(lambda: weights(haproxy)["s3"] == 35, 5)
    loads.set("s3", "not a number")
    try:
        wait_for(lambda: balancer_get(lab, lab.servers["s3"], "/v1/load")[0] == 503, 3)
        status, body = balancer_get(lab, lab.servers["s3"], "/v1/load")
        assert status == 503 and "file source failing" in body and "is not a load" in body
        deadline = time.monotonic() + 5 * AGENT_INTER_S
        while time.monotonic() < deadline:
            assert weights(haproxy)["s3"] == 35
            time.sleep(AGENT_INTER_S / 4)
        # HAProxy shows the agent failing (L7RSP, "empty response"), but only an agent's
        # explicit down/fail/stopped would change the server's state.
        row = stats(haproxy)["s3"]
        assert (row["status"], row["agent_status"]) == ("UP", "L7RSP"), row
        assert "empty response" in row["last_agt"], row
        loads.set("s3", "0.1")  # 100 %: the configured weight
        wait_for(lambda: weights(haproxy)["s3"] == 256, 3)
    finally:
        loads.set("s3", EXAMPLE_LOADS["s3"])
    wait_for(lambda: weights(haproxy)["s3"] == 35, 3)


def test_clients_outside_allow_get_nothing(haproxy, lab):
    """The client namespace (10.77.1.2, routed through the balancer) is outside --allow."""
    addr = lab.servers["s1"]
    url = f"http://{addr}:{HTTP_PORT}/v1/load"
    http = lab.exec("cl", ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", url], capture_output=True, text=True)
    assert http.stdout == "403"
    first_bytes = f"import socket; print(repr(socket.create_connection(('{addr}', {AGENT_PORT})).recv(64)))"
    agent = lab.exec("cl", [sys.executable, "-c", first_bytes], capture_output=True, text=True)
    assert agent.stdout.strip() == "b''", agent.stderr  # closed without a reply
    assert balancer_get(lab, addr, "/v1/load")[0] == 200  # while the balancer is answered
