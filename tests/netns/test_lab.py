"""The namespace lab itself: topology, servers, teardown (root and `ip netns` needed)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.harness.lab import Lab, LabError, list_namespaces, namespace_pids, pid_alive, remove_stale
from tests.harness.webbench import WEBBENCH_MIX

pytestmark = pytest.mark.netns

CURL_CONNECTION_REFUSED = 7
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def lab():
    with Lab() as running:
        yield running


def lab_pids(lab: Lab) -> list[int]:
    return [pid for role in Lab.ROLES for pid in namespace_pids(lab.ns(role))]


def host_links() -> str:
    return subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout


def test_each_server_answers_its_own_name_directly(lab):
    for name, address in lab.servers.items():
        status, body, headers = lab.client_get(f"http://{address}/")
        assert (status, body, headers["X-Server"]) == (200, f"{name}\n", name)
        assert lab.client_get(f"http://{address}/health")[0] == 200


def test_servers_serve_the_webbench_file_set(lab):
    address = lab.servers["s1"]
    for entry in WEBBENCH_MIX:
        status, _, headers = lab.client_get(f"http://{address}{entry.path}")
        assert status == entry.expected_status, entry.path
        assert headers["X-Server"] == "s1", entry.path  # also on the 404
        if entry.size is not None:
            assert int(headers["Content-Length"]) == entry.size, entry.path


def test_vip_range_is_local_in_the_balancer(lab):
    routes = lab.exec("lb", ["ip", "route", "show", "table", "local"], capture_output=True, text=True).stdout
    assert "local 10.77.100.0/24 dev lo" in routes
    forwarding = lab.exec("lb", ["sysctl", "-n", "net.ipv4.ip_forward"], capture_output=True, text=True)
    assert forwarding.stdout.strip() == "1"
    assert lab.vip(10) == "10.77.100.10"
    assert lab.lb_exec_prefix == ["ip", "netns", "exec", lab.ns("lb")]


def test_stop_server_refuses_connections_and_start_server_restores_it(lab):
    address = lab.servers["s2"]
    lab.stop_server("s2")
    curl = lab.exec("cl", ["curl", "-sS", "--max-time", "2", f"http://{address}/"], capture_output=True)
    assert curl.returncode == CURL_CONNECTION_REFUSED
    assert lab.client_get(f"http://{address}/")[0] == 0
    assert lab.client_get(f"http://{lab.servers['s1']}/")[1] == "s1\n"  # the others carry on
    lab.start_server("s2")
    assert lab.client_get(f"http://{address}/")[1] == "s2\n"


def test_down_leaves_no_namespace_process_or_link():
    lab = Lab().up()
    pids = lab_pids(lab)
    workdir = lab.workdir
    assert len(pids) >= 6  # an nginx master and worker per server
    lab.down()
    assert not [ns for ns in list_namespaces() if ns.startswith(lab.prefix + "-")]
    assert not [pid for pid in pids if pid_alive(pid)]
    assert lab.prefix not in host_links()
    assert not workdir.exists()
    lab.down()  # idempotent


def test_a_failing_up_tears_down_what_it_built(monkeypatch):
    lab = Lab()
    real_start = Lab.start_server

    def start_or_fail(self, name):
        if name == "s3":
            raise LabError("injected failure")
        real_start(self, name)

    monkeypatch.setattr(Lab, "start_server", start_or_fail)
    with pytest.raises(LabError, match="injected"):
        lab.up()
    assert not [ns for ns in list_namespaces() if ns.startswith(lab.prefix + "-")]
    assert lab.workdir is None


def test_prefixes_must_be_short_and_plain():
    for bad in ("x", "Fl1234", "fl-12", "a" * 11, "fl 1"):
        with pytest.raises(ValueError):
            Lab(bad)


def test_two_labs_with_different_prefixes_coexist():
    with Lab() as first, Lab() as second:
        assert first.prefix != second.prefix
        for lab in (first, second):
            assert lab.client_get(f"http://{lab.servers['s3']}/")[1] == "s3\n"
        first.stop_server("s3")
        assert second.client_get(f"http://{second.servers['s3']}/")[1] == "s3\n"
    assert not [ns for ns in list_namespaces() if ns.startswith((first.prefix, second.prefix))]


def test_a_new_lab_clears_what_a_crashed_run_of_its_prefix_left():
    crashed = Lab().up()
    orphan_pids = lab_pids(crashed)
    crashed._nginx.clear()  # forget the children, as a killed test process would
    with Lab(crashed.prefix) as lab:
        assert not [pid for pid in orphan_pids if pid_alive(pid)]
        assert lab.client_get(f"http://{lab.servers['s1']}/")[1] == "s1\n"
    assert remove_stale(crashed.prefix) == []


def run_cli(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.harness.lab", *args],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def wait_for_namespaces(prefix: str, count: int, timeout: float = 15) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [ns for ns in list_namespaces() if ns.startswith(prefix + "-")]
        if len(found) == count:
            return found
        time.sleep(0.1)
    return found


def test_cli_up_stays_until_sigterm_then_tears_down():
    prefix = "flcli" + os.urandom(2).hex()
    cli = run_cli("up", "--prefix", prefix)
    try:
        assert len(wait_for_namespaces(prefix, len(Lab.ROLES))) == len(Lab.ROLES)
        time.sleep(0.5)  # namespaces exist before the servers answer; let up() finish
        cli.send_signal(signal.SIGTERM)
        out, err = cli.communicate(timeout=30)
    finally:
        if cli.poll() is None:
            cli.kill()
        remove_stale(prefix)
    assert cli.returncode == 0, err
    described = json.loads(out)
    assert described["prefix"] == prefix and described["servers"]["s1"] == "10.77.2.11"
    assert wait_for_namespaces(prefix, 0) == []


def test_cli_down_removes_a_prefix():
    lab = Lab().up()
    lab._nginx.clear()  # as if the process that built it had died
    out, err = run_cli("down", "--prefix", lab.prefix).communicate(timeout=60)
    assert json.loads(out)["removed"], err
    assert not [ns for ns in list_namespaces() if ns.startswith(lab.prefix + "-")]
