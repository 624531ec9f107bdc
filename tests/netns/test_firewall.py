"""The node firewall end to end: the appliance's baseline loaded in the balancer namespace,
`fulcrum-agent --firewall` filling its sets from each revision, probes from the client.

    client ns 10.77.1.2 ---> lb ns: appliance/firewall/baseline.nft (input policy drop)
                               management 10.77.1.1: SSH stand-in on :22 (every address)
                               VIP 10.77.100.40: service "web" :80 (HAProxy -> s1 s2 s3),
                               a stray listener on :8081 (every address)

A dropped connection times out; a refused one would mean the packet got through to a
closed port. Each probe that expects a drop is paired with one proving the port is open
behind the firewall.
"""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.harness.lab import CLIENT_ADDR, LB_CLIENT_SIDE_ADDR
from tests.harness.stack import Stack
from tests.netns.test_rest_flow import CHECK, wait_for

pytestmark = pytest.mark.netns

BASELINE = Path(__file__).resolve().parents[2] / "appliance" / "firewall" / "baseline.nft"
VIP = "10.77.100.40"
STRAY_PORT = 8081

# Connect once: "open", "refused" (a reset: the packet got in) or "dropped" (no answer).
CONNECT = """
import socket, sys
s = socket.socket()
s.settimeout(float(sys.argv[3]))
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    print("open")
except ConnectionRefusedError:
    print("refused")
except TimeoutError:
    print("dropped")
"""

# Wait for one IP packet of protocol argv[1]: "got <source>" or "nothing".
RAW_RECEIVE = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, int(sys.argv[1]))
s.settimeout(float(sys.argv[2]))
print("ready", flush=True)
try:
    print("got", s.recvfrom(2048)[1][0])
except TimeoutError:
    print("nothing")
"""

RAW_SEND = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, int(sys.argv[1]))
s.sendto(b"\\x31\\x01\\x64\\x01\\x00\\x01\\x00\\x00", (sys.argv[2], 0))
"""


def connect(lab, role, address, port, timeout=1.0):
    argv = [sys.executable, "-c", CONNECT, address, str(port), str(timeout)]
    return lab.exec(role, argv, capture_output=True, text=True, timeout=timeout + 10).stdout.strip()


def nft(lab, *args):
    lab.exec("lb", ["nft", *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def baseline(lab):
    """The baseline as fulcrum-firewall.service loads it, with SSH and the console narrowed
    to the management address as fulcrum-setup's management.nft does."""
    nft(lab, "--file", str(BASELINE))
    nft(lab, "flush", "set", "inet", "fulcrum_firewall", "management4")
    nft(lab, "add", "element", "inet", "fulcrum_firewall", "management4", f"{{ {LB_CLIENT_SIDE_ADDR} }}")
    yield
    nft(lab, "delete", "table", "inet", "fulcrum_firewall")


@pytest.fixture(scope="module")
def listeners(lab):
    """A stand-in for sshd on :22 and a stray listener on :8081, on every lb address."""
    procs = [
        subprocess.Popen(
            [*lab.lb_exec_prefix, "socat", f"TCP-LISTEN:{port},fork,reuseaddr", "SYSTEM:echo hello"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for port in (22, STRAY_PORT)
    ]
    wait_for(lambda: connect(lab, "lb", VIP, 22) == connect(lab, "lb", VIP, STRAY_PORT) == "open", 5)
    yield
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=5)


@pytest.fixture(scope="module")
def stack(lab, baseline):
    # A short long-poll: the agent's resume (before every poll) refills emptied sets.
    with Stack(lab, agent_args=["--firewall", "--wait", "3s"]) as stack:
        yield stack


@pytest.fixture(scope="module")
def web(stack, lab, listeners):
    pool = stack.api.create("/api/v1/pools/", name="web", algorithm="round-robin")
    stack.api.create("/api/v1/health-checks/", pool=pool["id"], type="http", path="/health", **CHECK)
    for name, address in lab.servers.items():
        stack.api.create("/api/v1/members/", pool=pool["id"], name=name, address=address, port=80)
    service = stack.api.create("/api/v1/virtual-services/", name="web", vip=VIP, port=80, default_pool=pool["id"])
    revision = stack.apply("web behind the firewall")
    assert revision["nodes"][0]["state"] == "applied", revision["nodes"]
    wait_for(lambda: set(stack.server_states("pool-web").values()) == {"UP"}, 10)
    return service


def served(lab):
    status, body, _ = lab.client_get(f"http://{VIP}/", timeout=1)
    return status == 200 and body.strip() in lab.servers


def test_the_service_is_reachable_and_an_unconfigured_port_is_dropped(web, lab):
    assert served(lab)
    assert connect(lab, "cl", VIP, STRAY_PORT) == "dropped"
    assert connect(lab, "lb", VIP, STRAY_PORT) == "open"  # the listener is there, behind the firewall
    assert connect(lab, "cl", VIP, 81) == "dropped"  # nothing listens: still no reset


def test_ssh_is_reachable_on_the_management_address_only(web, lab):
    assert connect(lab, "cl", LB_CLIENT_SIDE_ADDR, 22) == "open"
    assert connect(lab, "cl", VIP, 22) == "dropped"


def test_a_disabled_service_is_dropped_and_comes_back_when_enabled(web, stack, lab):
    def enable(enabled):
        response = stack.api.patch(f"/api/v1/virtual-services/{web['id']}/", json={"enabled": enabled})
        assert response.status_code == 200, response.text
        assert stack.apply(f"web enabled={enabled}")["nodes"][0]["state"] == "applied"

    enable(False)
    try:
        assert connect(lab, "cl", VIP, 80) == "dropped"
    finally:
        enable(True)
    wait_for(lambda: served(lab), 10)


def test_the_agent_refills_the_sets_when_the_baseline_is_loaded_again(web, lab):
    nft(lab, "--file", str(BASELINE))  # as a restart of fulcrum-firewall.service does
    nft(lab, "flush", "set", "inet", "fulcrum_firewall", "management4")
    nft(lab, "add", "element", "inet", "fulcrum_firewall", "management4", f"{{ {LB_CLIENT_SIDE_ADDR} }}")
    assert connect(lab, "cl", VIP, 80) == "dropped"
    took = wait_for(lambda: served(lab), 15)
    assert took < 15


def test_vrrp_passes_and_another_protocol_does_not(lab, baseline):
    def received(protocol):
        argv = [*lab.lb_exec_prefix, sys.executable, "-c", RAW_RECEIVE, str(protocol), "2"]
        with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as receiver:
            assert receiver.stdout.readline().strip() == "ready"
            time.sleep(0.1)
            send = [sys.executable, "-c", RAW_SEND, str(protocol), LB_CLIENT_SIDE_ADDR]
            lab.exec("cl", send, check=True)
            return receiver.communicate(timeout=10)[0].strip()

    assert received(112) == f"got {CLIENT_ADDR}"
    assert received(113) == "nothing"
