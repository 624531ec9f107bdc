"""TLS behind and in front of the balancer with real handshakes: re-encryption with
verification, SSL session-ID persistence in TCP mode, required client certificates, and
the PROXY protocol to servers. The lab's servers speak TLS with certificates named after
themselves, issued by the lab CA (tests/harness/lab.py)."""

import collections
import re

import pytest

from tests.netns.test_layer7 import curl

pytestmark = pytest.mark.netns

REENCRYPT_VIP = "10.77.100.40"
SSLID_VIP = "10.77.100.41"
MTLS_VIP = "10.77.100.42"
PROXY_VIP = "10.77.100.43"


def _pool(stack, lab, name, port, **fields):
    pool = stack.api.create("/api/v1/pools/", name=name, **fields)
    for server, address in lab.servers.items():
        stack.api.create("/api/v1/members/", pool=pool["id"], name=server, address=address, port=port)
    return pool


def _service(stack, name, vip, pool, port=80, **fields):
    return stack.api.create(
        "/api/v1/virtual-services/", name=name, vip=vip, port=port, default_pool=pool["id"], **fields
    )


@pytest.fixture(scope="module")
def tls(stack, lab):
    api = stack.api
    lab_ca = api.create("/api/v1/certificates/", name="lab-ca", certificate=(lab.pki / "ca.crt").read_text())
    stranger = api.post(
        "/api/v1/certificates/generate/", json={"name": "stranger", "common_name": "stranger.test", "days": 5}
    ).json()
    front = api.post(
        "/api/v1/certificates/generate/", json={"name": "front", "common_name": "front.test", "days": 5}
    ).json()
    reencrypt = _pool(stack, lab, "reencrypt", 443, tls=True, tls_ca=lab_ca["id"])
    _service(stack, "reencrypt", REENCRYPT_VIP, reencrypt)
    wrong_ca = _pool(stack, lab, "wrong-ca", 443, tls=True, tls_ca=stranger["id"])
    _service(stack, "wrong-ca", REENCRYPT_VIP, wrong_ca, port=81)
    sslid = _pool(stack, lab, "sslid", 443, persistence={"type": "ssl_session_id", "timeout_s": 600})
    _service(stack, "sslid", SSLID_VIP, sslid, port=443, protocol="tcp")
    plain = _pool(stack, lab, "plain", 80)
    _service(
        stack,
        "mtls",
        MTLS_VIP,
        plain,
        port=443,
        protocol="https",
        default_certificate=front["id"],
        client_auth="required",
        client_ca=lab_ca["id"],
    )
    _service(
        stack,
        "modern",
        MTLS_VIP,
        plain,
        port=8443,
        protocol="https",
        default_certificate=front["id"],
        tls_policy="modern",
    )
    proxied = _pool(stack, lab, "proxied", 8080, proxy_protocol="v1")
    _service(stack, "proxied", PROXY_VIP, proxied)
    revision = stack.apply("tls")
    assert revision["nodes"][0]["state"] == "applied", revision["nodes"]
    return lab_ca


def test_reencryption_verifies_servers_against_the_ca(tls, lab):
    seen = collections.Counter()
    for _ in range(6):
        status, body, headers = curl(lab, f"http://{REENCRYPT_VIP}/")
        assert (status, headers.get("x-echo-scheme")) == (200, "https")
        seen[body] += 1
    assert seen == {"s1": 2, "s2": 2, "s3": 2}
    # Servers whose certificates the configured CA did not issue are never talked to.
    assert curl(lab, f"http://{REENCRYPT_VIP}:81/")[0] == 503


def _handshake(lab, *session_args):
    proc = lab.exec(
        "cl",
        ["openssl", "s_client", "-tls1_2", "-connect", f"{SSLID_VIP}:443", *session_args],
        input=b"",
        capture_output=True,
        timeout=15,
    )
    out = proc.stdout.decode(errors="replace")
    server = re.search(r"subject=\s*CN\s*=\s*(\S+)", out)
    return (server.group(1) if server else None), ("Reused," in out)


def test_ssl_session_id_keeps_a_resumed_session_on_its_server(tls, lab, tmp_path):
    session = tmp_path / "session.pem"
    first, _ = _handshake(lab, "-sess_out", str(session))
    assert first in lab.servers
    for _ in range(5):
        server, reused = _handshake(lab, "-sess_in", str(session))
        assert (server, reused) == (first, True)
    fresh = {_handshake(lab)[0] for _ in range(6)}
    assert len(fresh) == 3  # new sessions are still balanced


def test_client_certificate_is_required_and_reported_to_servers(tls, lab):
    assert curl(lab, "-k", f"https://{MTLS_VIP}/")[0] == 0  # no certificate: no handshake
    status, body, headers = curl(lab, "-k", "--cert", str(lab.pki / "client.pem"), f"https://{MTLS_VIP}/")
    assert status == 200 and body in lab.servers
    assert headers["x-echo-client-verify"] == "0"  # HAProxy verified it and said so


def test_proxy_protocol_tells_servers_the_client_address(tls, lab):
    assert {curl(lab, f"http://{PROXY_VIP}/")[1] for _ in range(3)} == {f"{s} 10.77.1.2" for s in lab.servers}


def test_modern_policy_refuses_tls12(tls, lab):
    def handshake(version):
        args = ["openssl", "s_client", version, "-connect", f"{MTLS_VIP}:8443"]
        return lab.exec("cl", args, input=b"", capture_output=True, timeout=15).returncode

    assert handshake("-tls1_3") == 0
    assert handshake("-tls1_2") != 0
