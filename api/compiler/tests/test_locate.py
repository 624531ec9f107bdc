"""Daemons' complaints read back to the operator's objects (compiler.locate).

Each case breaks one line of a golden case's rendered files, as a compiler bug would, runs
the real ``haproxy -c`` or ``keepalived --config-test`` on them, and asserts which object
and field the complaint is read back to, and that the daemon's words are kept.
"""

import json
import re

import pytest

from compiler import snapshot_from_dict
from compiler.locate import locate_haproxy, locate_keepalived
from compiler.tests.test_golden import GOLDEN, _golden_files
from revisions.checks import check_haproxy, check_keepalived, complaints


def _case(name):
    return snapshot_from_dict(json.loads((GOLDEN / name / "input.json").read_text())), _golden_files(name)


def _edit(files, name, line_with, old, new):
    """``files`` with ``old`` replaced by ``new`` on the first line of ``name`` holding ``line_with``."""
    lines = files[name].decode().split("\n")
    number = next(i for i, line in enumerate(lines) if line_with in line)
    assert old in lines[number], lines[number]
    lines[number] = lines[number].replace(old, new)
    return {**files, name: "\n".join(lines).encode()}


def _located(locate, result):
    assert not result.ok, "the daemon accepted the broken files"
    return [(c.path, c.said) for c in locate(complaints(result.output))]


HAPROXY_CASES = [
    # (what breaks, file, the line holding, old, new, expected path, the daemon's words)
    (
        "a member's address",
        "haproxy.cfg",
        "server a1 10.77.2.11:8443",
        "10.77.2.11",
        "foo.invalid",
        "pools/api/members/a1/address",
        "'server pool-api/a1' : could not resolve address 'foo.invalid'",
    ),
    (
        "a member's weight",
        "haproxy.cfg",
        "server a1 10.77.2.11:8443",
        "weight 1",
        "weight 999",
        "pools/api/members/a1/weight",
        "weight of server a1 is not within 0 and 256",
    ),
    (
        "a pool's SNI, named on each server line",
        "haproxy.cfg",
        "sni req.hdr(host)",
        "req.hdr(host)",
        "req.hdrx(host)",
        "pools/api/tls_sni",
        "unknown fetch method 'req.hdrx'",
    ),
    (
        "a pool's check interval",
        "haproxy.cfg",
        "default-server inter 1000ms",
        "inter 1000ms",
        "inter 0ms",
        "pools/api/health_check/interval_ms",
        "invalid value 0 for argument 'inter'",
    ),
    (
        "a pool's algorithm",
        "haproxy.cfg",
        "balance source",
        "source",
        "sourcex",
        "pools/static/algorithm",
        "balance only supports",
    ),
    (
        "a pool's HTTP check request",
        "haproxy.cfg",
        "http-check send meth GET uri /ready",
        "/ready",
        "/re dy",
        "pools/api/health_check",
        "'http-check send' : expects",
    ),
    (
        "a rule's condition",
        "haproxy.cfg",
        "acl r4_0 req.cook(beta)",
        "req.cook(",
        "req.cookx(",
        "virtual-services/www-https/rules/beta-cookie/conditions/0",
        "unknown fetch method 'req.cookx'",
    ),
    (
        "a service's listening port",
        "haproxy.cfg",
        "bind 10.77.100.21:443",
        ":443",
        ":99999",
        "virtual-services/modern/port",
        "invalid port '99999'",
    ),
    (
        "a service's default pool",
        "haproxy.cfg",
        "default_backend pool-web",
        "pool-web",
        "pool-tls-sticky",
        "virtual-services/modern",
        "tries to use incompatible tcp backend 'pool-tls-sticky'",
    ),
    (
        "a certificate's PEM",
        "haproxy.d/cert-www.pem",
        "BEGIN CERTIFICATE",
        "BEGIN CERTIFICATE",
        "BEGIN NONSENSE",
        "certificates/www",
        "unable to load certificate from file '<check>/haproxy.d/cert-www.pem'",
    ),
    (
        "a pool's maintenance page, larger than HAProxy's buffer",
        "haproxy.d/pool-web.maintenance.html",
        "Maintenance",
        "Maintenance",
        "x" * 20000,
        "pools/web/maintenance_page",
        "exceeds the buffer size",
    ),
]


@pytest.mark.parametrize(
    ("name", "line_with", "old", "new", "path", "words"),
    [case[1:] for case in HAPROXY_CASES],
    ids=[case[0] for case in HAPROXY_CASES],
)
def test_haproxy_complaint_names_the_object_and_field(name, line_with, old, new, path, words):
    snap, files = _case("l7-everything")
    broken = _edit(files, name, line_with, old, new)
    located = _located(lambda said: locate_haproxy(snap, broken, said), check_haproxy(broken))
    assert path in [p for p, _ in located], located
    assert any(s.startswith("ALERT: config : ") and words in s for p, s in located if p == path), located
    assert "Fatal errors found" not in str(located), "the summary is left out when a complaint names a place"


def test_a_rule_referring_to_a_broken_acl_is_named_too():
    snap, files = _case("l7-everything")
    broken = _edit(files, "haproxy.cfg", "acl r4_0", "acl r4_0", "acl r4_9")
    located = _located(lambda said: locate_haproxy(snap, broken, said), check_haproxy(broken))
    assert [p for p, _ in located] == ["virtual-services/www-https/rules/beta-cookie"], located
    assert "no such ACL : 'r4_0'" in located[0][1]


def test_haproxy_peers_name_the_node():
    snap, files = _case("ha")
    broken = _edit(files, "haproxy.cfg", "peer lb2 10.77.1.4:10000", ":10000", ":100000")
    located = _located(lambda said: locate_haproxy(snap, broken, said), check_haproxy(broken))
    assert [p for p, _ in located] == ["nodes/lb2/address"], located


def test_haproxy_summary_alone_is_kept():
    snap, files = _case("l7-everything")
    said = ["ALERT: config : Fatal errors found in configuration."]
    assert [(c.path, c.pinned) for c in locate_haproxy(snap, files, said)] == [("", False)]


# A node reports HAProxy's words about its own copy of the files, by its own paths, and
# other HAProxy versions word things differently: the place and the names decide.
NODE_WORDS = [
    (
        "[ALERT]    (811) : config : parsing [/var/lib/fulcrum-agent/sets/r7/haproxy.cfg:{a1}] : "
        "'server pool-api/a1' : could not resolve address 'api1.example.test'.",
        "pools/api/members/a1/address",
    ),
    (
        "[ALERT]    (811) : config : Proxy 'pool-api', server 'a2' [/etc/x/haproxy.cfg:{a2}] "
        "verify is enabled by default but no CA file specified.",
        "pools/api/tls_verify",
    ),
    (
        "[ALERT]    (811) : Starting frontend vs-www-http: cannot bind socket (Address already in use) "
        "[10.77.100.20:80]",
        "virtual-services/www-http/vip",
    ),
    (
        "bind 10.77.100.20:80: bind: address already in use",
        "virtual-services/www-http/vip",
    ),
    (
        "[WARNING]  (811) : config : 'option forwardfor' ignored for proxy 'pool-web' as it requires HTTP mode.",
        "pools/web",
    ),
    (
        "[ALERT]    (811) : config : parsing [/var/lib/fulcrum-agent/sets/r7/haproxy.d/vs-www-https.rules-6.map:3] : "
        "invalid pattern",
        "virtual-services/www-https/rules",
    ),
]


@pytest.mark.parametrize(("said", "path"), NODE_WORDS)
def test_haproxy_words_from_a_node(said, path):
    snap, files = _case("l7-everything")
    lines = files["haproxy.cfg"].decode().split("\n")
    servers = {name: 1 + next(i for i, line in enumerate(lines) if f"server {name} " in line) for name in ("a1", "a2")}
    [complaint] = locate_haproxy(snap, files, [said.format(**servers)])
    assert complaint.path == path and complaint.pinned


def test_an_ipv6_listener_the_node_refused():
    snap, files = _case("ipv6-and-states")
    said = "bind [2001:db8::10]:443: bind: cannot assign requested address"
    assert [c.path for c in locate_haproxy(snap, files, [said])] == ["virtual-services/v6/vip"]


def test_every_frontend_and_backend_line_of_the_golden_files_has_a_field():
    """The tables follow the template: a line they do not know would name only its section."""
    unknown = []
    for case in sorted(p.name for p in GOLDEN.iterdir() if (p / "input.json").exists()):
        snap, files = _case(case)
        lines = files["haproxy.cfg"].decode().split("\n")
        section = ""
        for number, line in enumerate(lines, start=1):
            section = line if line[:1].isalpha() else section
            text = line.strip()
            if not section.startswith(("frontend", "backend")) or not text or text.startswith("#"):
                continue
            # A backend's mode follows its services; default-server's options decide its fields.
            whole_pool = section.startswith("backend") and text.startswith(("default-server", "mode"))
            if line is section or whole_pool:
                continue
            [complaint] = locate_haproxy(snap, files, [f"ALERT: config : parsing [<check>/haproxy.cfg:{number}] : x"])
            if complaint.path.count("/") < 2:
                unknown.append(f"{case}:{number}: {text} -> {complaint.path!r}")
    assert not unknown, "\n".join(unknown)


KEEPALIVED_CASES = [
    ("ha", "virtual_router_id 51", "51", "351", "ha-groups/front-a/vrid", "number '351' outside range [1, 255]"),
    ("ha", "priority 150", "150", "1500", "ha-groups/front-a/nodes/lb1/priority", "Priority not valid!"),
    ("ha", "unicast_peer {", "unicast_peer", "unicast_peerx", "ha-groups/front-a", "Unknown keyword"),
    ("ha", "lvs_sched rr", "rr", "rrx", "pools/dns/algorithm", "Invalid lvs_scheduler 'rrx'"),
    (
        "l4-checks",
        "digest 9b3a0c85a887a256d6939da88aabd8cd",
        "9b3a",
        "9b3a-",
        "pools/http-digest/health_check/expect_body",
        "digest",
    ),
    ("l4-checks", "connect_timeout 0.3", "0.3", "0.3x", "pools/alpha/health_check/timeout_ms", "0.3x"),
]


@pytest.mark.parametrize(("case", "line_with", "old", "new", "path", "words"), KEEPALIVED_CASES)
def test_keepalived_complaint_names_the_object_and_field(case, line_with, old, new, path, words):
    snap, files = _case(case)
    broken = _edit(files, "keepalived.conf", line_with, old, new)
    located = _located(lambda said: locate_keepalived(snap, "lb1", broken, said), check_keepalived(broken))
    assert path in [p for p, _ in located], located
    said = [s for p, s in located if p == path]
    assert any(re.match(r"\(<check>/keepalived.conf: Line \d+\) ", s) and words in s for s in said), located
    assert not any("interface" in s and "exist" in s for _, s in located), "the node's interfaces are its business"


def test_keepalived_member_lines_name_the_member():
    snap, files = _case("ha")
    broken = _edit(files, "keepalived.conf", "real_server 10.77.2.12 53 {", "{", "{\n        weight 1x")
    located = _located(lambda said: locate_keepalived(snap, "lb1", broken, said), check_keepalived(broken))
    assert {p for p, _ in located} == {"pools/dns/members/d2/weight"}, located


def test_keepalived_instance_named_without_a_line():
    snap, files = _case("ha")
    [complaint] = locate_keepalived(snap, "lb1", files, ["(front-b) Warning - nopreempt will not work"])
    assert complaint.path == "ha-groups/front-b" and complaint.pinned
