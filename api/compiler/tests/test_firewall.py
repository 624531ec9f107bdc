"""The node's firewall sets (firewall.nft): what each node opens, and what can never reach nft.

The golden cases hold lb1's bytes and pass ``nft --check`` against the baseline; these
tests read the sets back and look at other nodes, disabled services and hostile strings.
"""

import copy
import json
import re
from pathlib import Path

import pytest

from compiler import VerifyError, render_firewall, snapshot_from_dict, verify
from compiler.firewall import ELEMENTS_PER_STATEMENT
from compiler.templating import nft_comment, nft_word
from revisions.checks import CheckResult, check_nftables

GOLDEN = Path(__file__).parent / "golden"
ELEMENTS = re.compile(r"^add element inet fulcrum_firewall (\w+) \{\n(.*?)\n\}$", re.M | re.S)
ELEMENT = re.compile(r'^\s*(.+?) comment "([^"]*)",?$')


def _case(name):
    return json.loads((GOLDEN / name / "input.json").read_text())


def _text(data, node="lb1"):
    return render_firewall(verify(snapshot_from_dict(data)), node)["firewall.nft"].decode()


def _sets(data, node="lb1"):
    """{set: {(key parts...): comment}} as the file fills them; every set is flushed first."""
    text = _text(data, node)
    flushed = re.findall(r"^flush set inet fulcrum_firewall (\w+)$", text, re.M)
    assert flushed == ["services4", "services6", "cluster4", "cluster6"]
    sets = {name: {} for name in flushed}
    for name, body in ELEMENTS.findall(text):
        for line in body.splitlines():
            key, comment = ELEMENT.match(line).groups()
            sets[name][tuple(key.split(" . "))] = comment
    return sets


def _service(data, name):
    return next(s for s in data["virtual_services"] if s["name"] == name)


def test_layer7_and_layer4_services_open_their_vip_protocol_and_ports():
    sets = _sets(_case("l4-forwarding"))
    assert sets["services4"] == {
        ("10.77.1.100", "tcp", "53"): "dns-tcp",
        ("10.77.1.100", "udp", "53"): "dns-udp",
        ("10.77.1.100", "tcp", "8080"): "l7",
        ("10.77.1.103", "tcp", "8000-8099"): "range",
        ("10.77.1.101", "tcp", "80"): "web-dr",
        ("10.77.1.100", "tcp", "80"): "web-nat",
        ("10.77.1.102", "tcp", "80"): "web-tun",
    }
    assert sets["services6"] == {("fd00:77::100", "tcp", "443"): "v6-dr"}


def test_a_disabled_service_is_not_opened():
    data = _case("l4-forwarding")
    _service(data, "web-nat")["enabled"] = False
    _service(data, "l7")["enabled"] = False
    keys = _sets(data)["services4"]
    assert ("10.77.1.100", "tcp", "80") not in keys and ("10.77.1.100", "tcp", "8080") not in keys
    assert ("10.77.1.101", "tcp", "80") in keys


def test_a_wildcard_vip_is_its_whole_family():
    data = _case("http-basic")
    data["virtual_services"] += [
        {**_service(data, "web"), "name": "any4", "vip": "0.0.0.0", "port": 8443},
        {**_service(data, "web"), "name": "any6", "vip": "::", "port": 8443},
    ]
    sets = _sets(data)
    assert sets["services4"] == {("10.77.100.10", "tcp", "80"): "web", ("0.0.0.0/0", "tcp", "8443"): "any4"}
    assert sets["services6"] == {("::/0", "tcp", "8443"): "any6"}


def test_each_node_accepts_haproxy_peers_from_the_others_only():
    data = _case("ha")
    lb1, lb2, lb3 = (_sets(data, n)["cluster4"] for n in ("lb1", "lb2", "lb3"))
    assert lb1 == {
        ("10.77.1.4", "10.77.1.3", "tcp", "10000"): "haproxy peer lb2",
        ("0.0.0.0/0", "224.0.0.81", "udp", "8848"): "ipvs sync",
    }
    assert ("10.77.1.3", "10.77.1.4", "tcp", "10000") in lb2 and len(lb2) == 2
    # lb3 has no address: it is no HAProxy peer, but it still receives the sync group.
    assert lb3 == {("0.0.0.0/0", "224.0.0.81", "udp", "8848"): "ipvs sync"}


def test_the_ipvs_sync_group_and_port_follow_the_settings_and_their_family():
    data = _case("ha")
    data["ipvs_sync"].update(group="ff02::1:81", port=9000)
    sets = _sets(data, "lb3")
    assert sets["cluster4"] == {}
    assert sets["cluster6"] == {("::/0", "ff02::1:81", "udp", "9000"): "ipvs sync"}


def test_nothing_to_open_still_empties_every_set():
    sets = _sets(_case("empty"))
    assert sets == {"services4": {}, "services6": {}, "cluster4": {}, "cluster6": {}}


def test_the_revision_number_does_not_change_the_bytes():
    data = _case("ha")
    later = copy.deepcopy(data)
    later["revision"] += 1
    assert _text(data) == _text(later)


def test_what_verify_refuses_never_reaches_the_file():
    data = _case("http-basic")
    _service(data, "web")["name"] = 'web" }\nflush ruleset'
    with pytest.raises(VerifyError):
        _text(data)


@pytest.mark.parametrize("value", ["10.0.0.1\nflush ruleset", "a b", "x}", "x;y", '"q"', "# c", ""])
def test_nft_words_that_could_change_the_parse_are_refused(value):
    with pytest.raises(ValueError):
        nft_word(value)


@pytest.mark.parametrize("value", ['a"b', "a\nb", "a\\b", "{", "x" * 129, ""])
def test_nft_comments_that_could_change_the_parse_are_refused(value):
    with pytest.raises(ValueError):
        nft_comment(value)


def test_nft_refuses_a_script_naming_a_set_the_baseline_lacks():
    result = check_nftables({"firewall.nft": b"flush set inet fulcrum_firewall services5\n"})
    assert result.checked and not result.ok
    assert "firewall.nft:1" in result.output and "No such file or directory" in result.output


def test_nft_refuses_an_element_of_the_wrong_type():
    bad = b"add element inet fulcrum_firewall services4 { 2001:db8::1 . tcp . 80 }\n"
    result = check_nftables({"firewall.nft": bad})
    assert result.checked and not result.ok, result.output


def test_without_nft_the_check_says_it_did_not_run(monkeypatch):
    from revisions import checks

    monkeypatch.setattr(checks, "NFT", "/nonexistent/nft")
    checks._own_netns_problem.cache_clear()
    try:
        result = check_nftables({"firewall.nft": b"flush ruleset\n"})
    finally:
        checks._own_netns_problem.cache_clear()
    assert result.ok and not result.checked
    assert "/nonexistent/nft is not installed" in result.output


def test_a_bundle_without_nftables_scripts_needs_no_check():
    assert check_nftables({"haproxy.cfg": b""}) == CheckResult(True, "")


def test_ten_thousand_services_load_in_statements_the_kernel_takes():
    """One "add element" of 10,000 services is one netlink message, which the kernel refuses
    ("Message too long"): the file gives it in statements of ELEMENTS_PER_STATEMENT."""
    data = {"revision": 1, "pools": [{"name": "p", "algorithm": "round-robin", "members": []}]}
    data["virtual_services"] = [
        {"name": f"svc-{i:05d}", "vip": f"10.{i >> 16}.{(i >> 8) & 255}.{i & 255}", "port": 80, "protocol": "http",
         "enabled": True, "default_pool": "p"}
        for i in range(1, 10_001)
    ]  # fmt: skip
    text = _text(data)
    statements = re.findall(r"^add element inet fulcrum_firewall services4 \{$", text, re.M)
    assert len(statements) == 10_000 // ELEMENTS_PER_STATEMENT
    assert len(_sets(data)["services4"]) == 10_000
    result = check_nftables({"firewall.nft": text.encode()})
    assert result.ok, result.output
