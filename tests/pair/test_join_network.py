"""Joining over the network, as a new appliance does at first boot: ``fulcrum-manage
fulcrum_join`` (the command fulcrum-setup runs) against the real API (gunicorn, its own
database) behind TLS with the cluster's certificate (socat here, nginx on the appliance),
and through a machine in the middle that terminates TLS with another certificate.

Each refusal must come before the code is sent and leave the code usable.
"""

import json
import subprocess
import time

import pytest
import requests

from tests.harness.stack import API_DIR, PYTHON, Stack, free_port

VERSION = "9.9.9~test1"


def certificate(folder, name):
    """A self-signed certificate like the appliance's console one (ECDSA P-256, CA:FALSE)."""
    key, crt = folder / f"{name}.key", folder / f"{name}.crt"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
         "-subj", f"/CN={name}", "-addext", "subjectAltName=IP:127.0.0.1", "-addext",
         "basicConstraints=critical,CA:FALSE", "-keyout", str(key), "-out", str(crt)],
        check=True, capture_output=True,
    )  # fmt: skip
    pem = folder / f"{name}.pem"
    pem.write_text(key.read_text() + crt.read_text())
    return crt, pem


def tls_front(listen_pem, upstream, port, upstream_tls=False):
    """socat terminating TLS on 127.0.0.1:port and forwarding to upstream (plain or TLS)."""
    target = f"OPENSSL:{upstream},verify=0" if upstream_tls else f"TCP:{upstream}"
    proc = subprocess.Popen(
        ["socat", f"OPENSSL-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork,cert={listen_pem},verify=0", target],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True).stdout == "":
        assert time.monotonic() < deadline and proc.poll() is None, "socat did not listen"
        time.sleep(0.1)
    return proc


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    folder = tmp_path_factory.mktemp("join-tls")
    cluster_crt, cluster_pem = certificate(folder, "cluster")
    _, middle_pem = certificate(folder, "middle")
    env = {"FULCRUM_CONSOLE_CERT": str(cluster_crt), "FULCRUM_VERSION": VERSION}
    with Stack(prefix="join", env=env) as stack:
        front_port, middle_port = free_port(), free_port()
        procs = [tls_front(cluster_pem, f"127.0.0.1:{stack.port}", front_port)]
        procs.append(tls_front(middle_pem, f"127.0.0.1:{front_port}", middle_port, upstream_tls=True))
        try:
            yield {"stack": stack, "front": f"127.0.0.1:{front_port}", "middle": f"127.0.0.1:{middle_port}",
                   "certificate": cluster_crt.read_text()}  # fmt: skip
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(timeout=10)


def join_command(target, code, version=VERSION, name="lb2", address="192.0.2.12"):
    """fulcrum_join as the joining appliance runs it: its own settings, the code on stdin."""
    env = {"PATH": "/usr/bin:/bin", "FULCRUM_DEBUG": "1", "FULCRUM_VERSION": version}
    return subprocess.run(
        [PYTHON, "manage.py", "fulcrum_join", target, "--name", name, "--address", address],
        cwd=API_DIR, env=env, input=code + "\n", capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def new_code(stack):
    answer = stack.api.post("/api/v1/join-codes/")
    assert answer.status_code == 201, answer.text
    return answer.json()


def state(stack, made):
    return next(c for c in stack.api.get("/api/v1/join-codes/").json()["results"] if c["id"] == made["id"])["state"]


def refused(result):
    assert result.returncode != 0, result.stdout
    return result.stderr.strip().splitlines()[-1]


def test_a_machine_in_the_middle_gets_nothing(cluster):
    made = new_code(cluster["stack"])
    line = refused(join_command(cluster["middle"], made["code"]))
    assert "presented another certificate than the one the cluster signed" in line, line
    assert state(cluster["stack"], made) == "usable"  # the code was never sent


def test_a_wrong_secret_fails_the_signature(cluster):
    made = new_code(cluster["stack"])
    wrong = made["code"][:-1] + ("2" if made["code"][-1] != "2" else "3")
    line = refused(join_command(cluster["front"], wrong))
    assert "is not signed with this code" in line, line
    assert "has no usable join code ZZZZ" in refused(join_command(cluster["front"], "ZZZZ" + made["code"][4:]))
    assert "not a join code" in refused(join_command(cluster["front"], "12345"))
    assert state(cluster["stack"], made) == "usable"


def test_another_version_or_no_cluster_are_refused_and_the_code_kept(cluster):
    made = new_code(cluster["stack"])
    line = refused(join_command(cluster["front"], made["code"], version="9.9.8"))
    assert f"version: This appliance runs Fulcrum 9.9.8, the cluster runs {VERSION}" in line, line
    assert "cannot reach the cluster at 127.0.0.1:1" in refused(join_command("127.0.0.1:1", made["code"]))
    assert state(cluster["stack"], made) == "usable"


def test_join_through_the_cluster_certificate(cluster):
    stack = cluster["stack"]
    made = new_code(stack)
    result = join_command(cluster["front"], made["code"].lower())
    assert result.returncode == 0, result.stderr
    joined = json.loads(result.stdout)
    assert (joined["node"], joined["version"], joined["certificate"]) == ("lb2", VERSION, cluster["certificate"])
    node = next(n for n in stack.api.get("/api/v1/nodes/").json()["results"] if n["name"] == "lb2")
    assert node["address"] == "192.0.2.12"
    # The token is the new node's agent credential on the cluster's API.
    answer = requests.get(f"{stack.url}/api/v1/agent/desired/?known=0&wait=0", timeout=30,
                          headers={"Authorization": f"Node {joined['token']}"})  # fmt: skip
    assert answer.status_code in (200, 204), answer.text
    assert state(stack, made) == "used"
    line = refused(join_command(cluster["front"], made["code"], name="lb3", address="192.0.2.13"))
    assert "has no usable join code" in line, line
