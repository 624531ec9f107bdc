"""Layer 7 pools and plumbing with real traffic: keep-alive with per-request switching,
health checks by content and by ping, sorry server, maintenance page, compression,
request-body limits, and header and source-address persistence."""

import subprocess

import pytest

from tests.netns.test_layer7 import curl, prefix
from tests.netns.test_rest_flow import CHECK, wait_for

pytestmark = pytest.mark.netns

KEEP_VIP = "10.77.100.30"
SORRY_VIP = "10.77.100.31"
CHECKS_VIP = "10.77.100.32"


def _members(stack, lab, pool, names, **fields):
    for name in names:
        stack.api.create("/api/v1/members/", pool=pool["id"], name=name, address=lab.servers[name], port=80, **fields)


@pytest.fixture(scope="module")
def pools(stack, lab):
    api = stack.api
    s2 = api.create("/api/v1/pools/", name="only-s2")
    s3 = api.create("/api/v1/pools/", name="only-s3")
    _members(stack, lab, s2, ["s2"])
    _members(stack, lab, s3, ["s3"])
    keep = api.create(
        "/api/v1/virtual-services/",
        name="keep",
        vip=KEEP_VIP,
        port=80,
        default_pool=s2["id"],
        compression=True,
        compression_types=["text/plain"],
        max_body_bytes=100,
    )
    api.create(
        "/api/v1/rules/",
        virtual_service=keep["id"],
        name="to-s3",
        conditions=prefix("/three"),
        action="use_pool",
        pool=s3["id"],
    )
    # Sorry server: s3 serves only when s1 is down; then nothing: the maintenance page.
    sorry = api.create("/api/v1/pools/", name="sorry", maintenance_page="<h1>Back soon</h1>\n")
    api.create("/api/v1/health-checks/", pool=sorry["id"], type="http", path="/health", **CHECK)
    _members(stack, lab, sorry, ["s1"])
    _members(stack, lab, sorry, ["s3"], backup=True)
    api.create("/api/v1/virtual-services/", name="sorry", vip=SORRY_VIP, port=80, default_pool=sorry["id"])
    # Content check: s2 and s3 answer /health with "ok"; expecting "nope" marks them down.
    content = api.create("/api/v1/pools/", name="content")
    api.create("/api/v1/health-checks/", pool=content["id"], type="http", path="/health", expect_body="nope", **CHECK)
    _members(stack, lab, content, ["s2"])
    ping = api.create("/api/v1/pools/", name="ping")
    api.create("/api/v1/health-checks/", pool=ping["id"], type="ping", **CHECK)
    _members(stack, lab, ping, ["s3"])
    api.create("/api/v1/virtual-services/", name="content", vip=CHECKS_VIP, port=80, default_pool=content["id"])
    api.create("/api/v1/virtual-services/", name="ping", vip=CHECKS_VIP, port=81, default_pool=ping["id"])
    for kind, port, persistence in (
        ("header", 82, {"type": "header", "header_name": "X-Session"}),
        ("source", 83, {"type": "source", "ipv4_mask": 24}),
        ("prefix", 84, {"type": "cookie_prefix", "cookie_name": "JSESSIONID"}),
    ):
        pool = api.create("/api/v1/pools/", name=f"by-{kind}", persistence=persistence)
        _members(stack, lab, pool, list(lab.servers))
        api.create("/api/v1/virtual-services/", name=f"by-{kind}", vip=CHECKS_VIP, port=port, default_pool=pool["id"])
    revision = stack.apply("layer 7 pools")
    assert revision["nodes"][0]["state"] == "applied", revision["nodes"]
    wait_for(lambda: stack.server_states("pool-sorry").get("s1") == "UP", 10)


def test_one_keep_alive_connection_is_switched_per_request(pools, lab):
    proc = lab.exec(
        "cl",
        [
            "curl",
            "-sS",
            "--http1.1",
            "-w",
            "%{http_version} %{num_connects}\\n",
            f"http://{KEEP_VIP}/one",
            f"http://{KEEP_VIP}/three",
            f"http://{KEEP_VIP}/two",
        ],
        capture_output=True,
    )
    lines = proc.stdout.decode().split()
    # Bodies and, per request, the HTTP version and new connections curl made.
    assert lines == ["s2", "1.1", "1", "s3", "1.1", "0", "s2", "1.1", "0"], lines


def test_compression_and_body_limit(pools, lab):
    _, _, headers = curl(lab, "-H", "Accept-Encoding: gzip", f"http://{KEEP_VIP}/")
    assert headers.get("content-encoding") == "gzip"
    assert curl(lab, "--data-binary", "x" * 50, f"http://{KEEP_VIP}/")[0] == 200
    assert curl(lab, "--data-binary", "x" * 500, f"http://{KEEP_VIP}/")[0] == 413
    chunked = curl(lab, "-H", "Transfer-Encoding: chunked", "--data-binary", "x", f"http://{KEEP_VIP}/")
    assert chunked[0] == 413  # a body of unannounced length cannot be held to the limit


def test_sorry_server_then_maintenance_page(pools, stack, lab):
    assert {curl(lab, f"http://{SORRY_VIP}/")[1] for _ in range(4)} == {"s1"}  # backup idle while s1 is up
    lab.stop_server("s1")
    try:
        wait_for(lambda: stack.server_states("pool-sorry").get("s1") == "DOWN", 10)
        assert {curl(lab, f"http://{SORRY_VIP}/")[1] for _ in range(4)} == {"s3"}
        lab.stop_server("s3")
        wait_for(lambda: stack.server_states("pool-sorry").get("s3") == "DOWN", 10)
        status, body, _ = curl(lab, f"http://{SORRY_VIP}/")
        assert (status, body) == (503, "<h1>Back soon</h1>")
    finally:
        lab.start_server("s1")
        lab.start_server("s3")
    wait_for(lambda: stack.server_states("pool-sorry").get("s1") == "UP", 10)


def test_content_check_fails_on_wrong_body_and_ping_check_passes(pools, stack):
    wait_for(lambda: stack.server_states("pool-content").get("s2", "").startswith("DOWN"), 10)
    wait_for(lambda: stack.server_states("pool-ping").get("s3") == "UP", 10)


def test_header_and_source_persistence(pools, lab):
    url = f"http://{CHECKS_VIP}:82/"
    chosen = {}
    for session in "abcdef":
        chosen[session] = curl(lab, "-H", f"X-Session: {session}", url)[1]
        again = {curl(lab, "-H", f"X-Session: {session}", url)[1] for _ in range(10)}
        assert again == {chosen[session]}, session
    assert len(set(chosen.values())) > 1  # sessions still spread over the servers
    assert len({curl(lab, f"http://{CHECKS_VIP}:83/")[1] for _ in range(20)}) == 1


def test_cookie_prefix_rides_on_the_application_cookie(pools, lab):
    url = f"http://{CHECKS_VIP}:84"
    _, server, headers = curl(lab, f"{url}/login")
    cookie = headers["set-cookie"].split(";")[0]
    assert cookie.startswith(f"JSESSIONID={server}~{server}-")  # HAProxy prefixed the server's own value
    assert {curl(lab, "-H", f"Cookie: {cookie}", f"{url}/")[1] for _ in range(10)} == {server}


LOCAL_VIP = "10.77.100.33"


def test_a_loopback_member_is_a_service_on_the_node_only_when_it_says_so(stack, lab, tmp_path):
    """127.0.0.1 as a member reaches whatever listens on each node itself: refused unless the
    member says it is meant (issue 20), then served through the VIP like any other."""
    (tmp_path / "index.html").write_text("on-the-node\n")
    server = subprocess.Popen(
        [*lab.lb_exec_prefix, "python3", "-m", "http.server", "8099", "--bind", "127.0.0.1", "--directory", tmp_path],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        pool = stack.api.create("/api/v1/pools/", name="on-the-node")
        member = {"pool": pool["id"], "name": "local", "address": "127.0.0.1", "port": 8099}
        refused = stack.api.post("/api/v1/members/", json=member)
        assert refused.status_code == 400 and "set loopback if it is meant to" in refused.text, refused.text
        stack.api.create("/api/v1/members/", **member, loopback=True)
        stack.api.create(
            "/api/v1/virtual-services/", name="on-the-node", vip=LOCAL_VIP, port=80, default_pool=pool["id"]
        )
        assert stack.apply("a service on the node")["nodes"][0]["state"] == "applied"
        wait_for(lambda: curl(lab, f"http://{LOCAL_VIP}/")[1] == "on-the-node", 10)
    finally:
        server.kill()
        server.wait()
