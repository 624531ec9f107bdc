"""Layer 7 through REST -> compiler -> agent -> real HAProxy -> real nginx servers.

Each test asserts where requests actually went (every lab server answers its own name),
what the client got back, or what HAProxy runs.
"""

import collections
import subprocess

import pytest

from tests.netns.test_rest_flow import CHECK, wait_for

pytestmark = pytest.mark.netns

SWITCH_VIP = "10.77.100.20"
LEARN_VIP = "10.77.100.21"
GUARD_VIP = "10.77.100.22"
TLS_VIP = "10.77.100.23"
WALLED_VIP = "10.77.100.24"
DENIED_VIP = "10.77.100.25"


def curl(lab, *args, timeout=3):
    """``lab.curl`` with the body's trailing newline dropped (servers answer ``s1\\n``)."""
    status, body, headers = lab.curl(*args, timeout=timeout)
    return status, body.strip(), headers


def answers(lab, count, *args):
    return collections.Counter(curl(lab, *args)[1] for _ in range(count))


def _pool(stack, lab, name, servers, **fields):
    pool = stack.api.create("/api/v1/pools/", name=name, algorithm="round-robin", **fields)
    stack.api.create("/api/v1/health-checks/", pool=pool["id"], type="http", path="/health", **CHECK)
    for server in servers:
        stack.api.create("/api/v1/members/", pool=pool["id"], name=server, address=lab.servers[server], port=80)
    return pool


def _rule(stack, service, name, conditions, action="use_pool", **fields):
    return stack.api.create(
        "/api/v1/rules/", virtual_service=service["id"], name=name, conditions=conditions, action=action, **fields
    )


def prefix(*values, **extra):
    return [{"kind": "path_prefix", "values": list(values), **extra}]


@pytest.fixture(scope="module")
def l7(stack, lab):
    pools = {f"only-{s}": _pool(stack, lab, f"only-{s}", [s]) for s in lab.servers}
    sticky = _pool(stack, lab, "all", list(lab.servers), persistence={"type": "cookie_insert", "cookie_name": "LB"})
    learn = _pool(
        stack, lab, "learn", list(lab.servers), persistence={"type": "app_cookie", "cookie_name": "JSESSIONID"}
    )
    www = stack.api.create(
        "/api/v1/virtual-services/", name="switch", vip=SWITCH_VIP, port=80, default_pool=sticky["id"]
    )
    stack.api.create("/api/v1/virtual-services/", name="learn", vip=LEARN_VIP, port=80, default_pool=learn["id"])
    stack.api.create(
        "/api/v1/virtual-services/",
        name="guard",
        vip=GUARD_VIP,
        port=80,
        default_pool=pools["only-s1"]["id"],
        rate_limit_requests=5,
        rate_limit_period_s=30,
        deny_cidrs=["10.77.9.0/24"],
        forwarded="both",
        error_pages=[{"status": 429, "content_type": "text/plain", "body": "slow down, please\n"}],
    )
    for name, vip, fields in (
        ("walled", WALLED_VIP, {"allow_cidrs": ["10.77.9.0/24"]}),
        ("denied", DENIED_VIP, {"deny_cidrs": ["10.77.9.0/24", "10.77.1.0/24"]}),
    ):
        stack.api.create(
            "/api/v1/virtual-services/", name=name, vip=vip, port=80, default_pool=pools["only-s1"]["id"], **fields
        )
    s1, s2, s3 = (pools[f"only-{s}"]["id"] for s in ("s1", "s2", "s3"))
    _rule(stack, www, "deny-admin", prefix("/admin"), action="deny", deny_status=403)
    _rule(
        stack,
        www,
        "old",
        prefix("/old"),
        action="redirect",
        redirect_code=301,
        redirect_location="https://example.test/new",
    )
    _rule(
        stack,
        www,
        "tag-mobile",
        [{"kind": "header_present", "name": "X-Mobile"}],
        action="set_request_header",
        header_name="X-Client",
        header_value="mobile",
    )
    _rule(stack, www, "mark", prefix("/h"), action="set_response_header", header_name="X-Rule", header_value="hit")
    # A run of prefix rules long enough to become one map lookup; the longer prefix comes
    # first, so first-match and the map's longest-match agree.
    _rule(stack, www, "deep", prefix("/m3/deep/"), pool=s3)
    for i in range(10):
        _rule(stack, www, f"m{i}", prefix(f"/m{i}/"), pool=s2)
    for ext in ("gif", "png", "jpg", "css", "js", "ico", "svg", "woff2"):
        _rule(stack, www, f"ext-{ext}", [{"kind": "path_extension", "values": [ext]}], pool=s3)
    _rule(stack, www, "api-host", [{"kind": "host_exact", "values": ["api.example.test"]}], pool=s1)
    _rule(stack, www, "beta", [{"kind": "cookie_equals", "name": "beta", "values": ["on"]}], pool=s3)
    _rule(stack, www, "form-post", [*prefix("/form"), {"kind": "method", "values": ["POST"]}], pool=s1)
    _rule(
        stack,
        www,
        "outsiders",
        [*prefix("/neg"), {"kind": "source_cidr", "values": ["10.77.1.0/24"], "negate": True}],
        action="deny",
    )
    revision = stack.apply("layer 7")
    assert revision["nodes"][0]["state"] == "applied", revision["nodes"]
    wait_for(lambda: set(stack.server_states("pool-all").values()) == {"UP"}, 10)
    return {"pools": pools}


def test_rules_send_each_request_where_the_first_match_says(l7, lab):
    url = f"http://{SWITCH_VIP}"
    assert curl(lab, f"{url}/admin/x")[0] == 403
    status, _, headers = curl(lab, f"{url}/old/page")
    assert (status, headers["location"]) == (301, "https://example.test/new")
    assert curl(lab, f"{url}/m3/deep/x")[1] == "s3"  # longer prefix listed first wins
    assert curl(lab, f"{url}/m3/x")[1] == "s2"
    assert curl(lab, f"{url}/m9/")[1] == "s2"
    assert curl(lab, f"{url}/m0/a.gif")[1] == "s2"  # the prefix rules come before the extensions
    assert curl(lab, f"{url}/img/a.GIF")[1] == "s3"  # extensions match case-insensitively
    assert curl(lab, "-H", "Host: API.example.test", f"{url}/x")[1] == "s1"
    assert curl(lab, "-H", "Cookie: beta=on", f"{url}/x")[1] == "s3"
    assert curl(lab, "-X", "POST", f"{url}/form")[1] == "s1"
    assert curl(lab, f"{url}/neg")[0] == 200  # the client is inside the negated CIDR
    assert {curl(lab, f"{url}/form")[1] for _ in range(6)} == {"s1", "s2", "s3"}  # GET: default pool


def test_header_rules_apply_and_evaluation_goes_on(l7, lab):
    status, body, headers = curl(lab, "-H", "X-Mobile: 1", f"http://{SWITCH_VIP}/m1/")
    assert (status, body, headers["x-echo-client"]) == (200, "s2", "mobile")
    assert curl(lab, f"http://{SWITCH_VIP}/h/page")[2]["x-rule"] == "hit"
    assert "x-rule" not in curl(lab, f"http://{SWITCH_VIP}/other")[2]


def test_cookie_insert_keeps_a_client_on_one_server_while_others_spread(l7, lab, tmp_path):
    jar = tmp_path / "jar"
    first = curl(lab, "-c", str(jar), f"http://{SWITCH_VIP}/")[1]
    kept = answers(lab, 100, "-b", str(jar), f"http://{SWITCH_VIP}/")
    assert kept == {first: 100}
    assert answers(lab, 30, f"http://{SWITCH_VIP}/") == {"s1": 10, "s2": 10, "s3": 10}


def test_learned_application_cookie_sticks(l7, lab):
    _, server, headers = curl(lab, f"http://{LEARN_VIP}/login")
    cookie = headers["set-cookie"].split(";")[0]
    assert cookie.startswith(f"JSESSIONID={server}-")
    assert answers(lab, 100, "-H", f"Cookie: {cookie}", f"http://{LEARN_VIP}/") == {server: 100}
    assert len(answers(lab, 6, f"http://{LEARN_VIP}/")) == 3


def test_rate_limit_answers_429_with_the_custom_page_and_forwarding_headers(l7, lab):
    statuses = []
    for _ in range(8):
        status, body, headers = curl(lab, f"http://{GUARD_VIP}/")
        statuses.append(status)
        if status == 200:
            assert headers["x-echo-xff"] == "10.77.1.2"
            assert headers["x-echo-forwarded"] == 'for="10.77.1.2";proto=http'
    assert statuses == [200] * 5 + [429] * 3
    assert body == "slow down, please"


def _worker_pid(stack):
    info = dict(line.split(": ", 1) for line in stack.haproxy_runtime("show info").splitlines() if ": " in line)
    return int(info["Pid"])


def test_drain_at_runtime_keeps_worker_and_persisted_clients(l7, stack, lab, tmp_path):
    jar = tmp_path / "jar"
    for _ in range(6):  # find a client pinned to s1
        jar.unlink(missing_ok=True)
        if curl(lab, "-c", str(jar), f"http://{SWITCH_VIP}/")[1] == "s1":
            break
    pid = _worker_pid(stack)
    member = next(
        m
        for m in stack.api.get("/api/v1/members/?pool=" + str(_pool_id(stack, "all"))).json()["results"]
        if m["name"] == "s1"
    )
    response = stack.api.post(f"/api/v1/members/{member['id']}/runtime/", json={"state": "drain"})
    assert response.status_code == 200, response.text
    revision = stack.wait_for_node(response.json()["revision"])
    assert revision["nodes"][0]["state"] == "applied"
    assert "without reload" in revision["nodes"][0]["message"]
    assert _worker_pid(stack) == pid
    assert set(answers(lab, 20, f"http://{SWITCH_VIP}/")) == {"s2", "s3"}  # no new clients on s1
    assert answers(lab, 10, "-b", str(jar), f"http://{SWITCH_VIP}/") == {"s1": 10}  # persisted ones stay
    back = stack.api.post(f"/api/v1/members/{member['id']}/runtime/", json={"state": "enabled"})
    stack.wait_for_node(back.json()["revision"])
    assert _worker_pid(stack) == pid
    assert answers(lab, 30, f"http://{SWITCH_VIP}/") == {"s1": 10, "s2": 10, "s3": 10}


def _pool_id(stack, name):
    return next(p["id"] for p in stack.api.get("/api/v1/pools/").json()["results"] if p["name"] == name)


@pytest.fixture(scope="module")
def tls(l7, stack, lab):
    certs = {}
    for name, cn in (("www", "www.example.test"), ("api", "api.example.test")):
        response = stack.api.post(
            "/api/v1/certificates/generate/",
            json={
                "name": name,
                "common_name": cn,
                "key_type": "ecdsa-p256" if name == "api" else "rsa-2048",
                "days": 30,
            },
        )
        assert response.status_code == 201, response.text
        certs[name] = response.json()
    pool = l7["pools"]["only-s2"]["id"]
    stack.api.create(
        "/api/v1/virtual-services/",
        name="tls",
        vip=TLS_VIP,
        port=443,
        protocol="https",
        default_pool=pool,
        default_certificate=certs["www"]["id"],
        sni_certificates=[certs["api"]["id"]],
        hsts_max_age_s=600,
    )
    stack.api.create(
        "/api/v1/virtual-services/", name="tls-redirect", vip=TLS_VIP, port=80, default_pool=pool, redirect_https=True
    )
    assert stack.apply("tls")["nodes"][0]["state"] == "applied"
    return certs


def _served_subject(lab, servername):
    args = ["openssl", "s_client", "-connect", f"{TLS_VIP}:443"] + (["-servername", servername] if servername else [])
    hello = lab.exec("cl", args, input=b"", capture_output=True, timeout=10)
    cert = subprocess.run(["openssl", "x509", "-noout", "-subject"], input=hello.stdout, capture_output=True)
    return cert.stdout.decode()


def test_tls_offload_picks_the_certificate_by_sni(tls, lab):
    assert "api.example.test" in _served_subject(lab, "api.example.test")
    assert "www.example.test" in _served_subject(lab, "www.example.test")
    assert "www.example.test" in _served_subject(lab, None)  # no SNI: the default certificate


def test_https_answers_with_hsts_over_http2_and_http_redirects(tls, lab):
    status, body, headers = curl(lab, "-k", "--http2", f"https://{TLS_VIP}/")
    assert (status, body) == (200, "s2")
    assert headers["strict-transport-security"] == "max-age=600"
    proc = lab.exec(
        "cl",
        ["curl", "-sk", "--http2", "-o", "/dev/null", "-w", "%{http_version}", f"https://{TLS_VIP}/"],
        capture_output=True,
    )
    assert proc.stdout.decode() == "2"
    status, _, headers = curl(lab, f"http://{TLS_VIP}/some/path?q=1")
    assert (status, headers["location"]) == (301, f"https://{TLS_VIP}/some/path?q=1")


def test_key_is_never_readable_through_the_api(tls, stack):
    for name, cert in tls.items():
        text = stack.api.get(f"/api/v1/certificates/{cert['id']}/").text
        assert "PRIVATE KEY" not in text, name


def test_allow_and_deny_lists_refuse_the_connection(l7, lab):
    assert curl(lab, f"http://{WALLED_VIP}/")[0] == 0  # the client is not on the allow list
    assert curl(lab, f"http://{DENIED_VIP}/")[0] == 0  # the client is on the deny list
    assert curl(lab, f"http://{GUARD_VIP}/health")[0] in (200, 429)  # deny list without the client
