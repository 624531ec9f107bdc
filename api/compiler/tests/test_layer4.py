"""Layer 4: what keepalived is given, and what can never reach it."""

import json
import re
from pathlib import Path

import pytest

from compiler import VerifyError, pcre, render_keepalived, snapshot_from_dict, verify
from compiler.advice import service_warnings
from compiler.facts import firewall_mark
from compiler.keepalived import seconds
from compiler.templating import keepalived_quote, keepalived_word
from revisions.checks import check_keepalived

GOLDEN = Path(__file__).parent / "golden"


def _snapshot(**changes):
    data = json.loads((GOLDEN / "l4-forwarding" / "input.json").read_text())
    for service in data["virtual_services"]:
        service.update(changes.get(service["name"], {}))
    return data


def _render(data):
    return render_keepalived(verify(snapshot_from_dict(data)), "lb1")


@pytest.mark.parametrize(
    ("ms", "text"), [(1000, "1"), (1500, "1.5"), (100, "0.1"), (86_400_000, "86400"), (1234, "1.234")]
)
def test_timers_are_exact_seconds(ms, text):
    assert seconds(ms) == text


@pytest.mark.parametrize("value", ["eth0\nlvs_flush", "a b", "x}", "x#y", '"q"', ""])
def test_words_that_could_change_the_parse_are_refused(value):
    with pytest.raises(ValueError):
        keepalived_word(value)


@pytest.mark.parametrize("value", ["a\nb", 'say "hi"', "a#b", "a!b", "$VAR", "x\\d", "{", ""])
def test_quoted_strings_that_could_change_the_parse_are_refused(value):
    with pytest.raises(ValueError):
        keepalived_quote(value)


def test_a_string_body_match_becomes_a_literal_regex_without_backslashes():
    conf = render_keepalived(
        verify(snapshot_from_dict(json.loads((GOLDEN / "l4-checks" / "input.json").read_text()))), "lb1"
    )
    text = conf["keepalived.conf"].decode()
    literal = re.search(r'regex "(v1.*)"', text).group(1)
    assert literal == "v1[.]2 [(]stable[)]"
    assert re.search(literal, "running v1.2 (stable) build") and not re.search(literal, "v1x2 (stable)")


@pytest.mark.parametrize("text", ["a^b", "^", "v1.2 (stable)", "x]|*+?^"])
def test_a_literal_regex_compiles_in_pcre2_and_matches_its_text(text):
    pattern = pcre.literal(text)
    assert "\\" not in pattern and pcre.compile_error(pattern) == ""
    assert re.search(pattern, f"<{text}>") and not re.search(pattern, "x" * len(text))


def _checks(pool, **changes):
    """The l4-checks golden input with ``pool``'s health check changed."""
    data = json.loads((GOLDEN / "l4-checks" / "input.json").read_text())
    next(p for p in data["pools"] if p["name"] == pool)["health_check"].update(changes)
    return data


def test_a_string_body_match_fits_on_a_keepalived_line_or_is_refused():
    # Its regex takes 3 characters for each '.': 999 fit, 1002 would cut the line (issue 20).
    conf = render_keepalived(verify(snapshot_from_dict(_checks("http-string", expect_body="." * 333))), "lb1")
    assert max(map(len, conf["keepalived.conf"].decode().splitlines())) == 1023
    assert check_keepalived(conf).ok
    with pytest.raises(VerifyError) as err:
        render_keepalived(verify(snapshot_from_dict(_checks("http-string", expect_body="." * 334))), "lb1")
    assert "1002 characters" in dict(err.value.problems)["pools/http-string/health_check/expect_body"]


def test_a_check_command_fits_on_a_keepalived_line_or_is_refused():
    command = "/etc/fulcrum/checks/up" + (" " + "a" * 127) * 7 + " " + "a" * 31  # 950 characters (issue 20)
    assert check_keepalived(render_keepalived(verify(snapshot_from_dict(_checks("script", script=command))), "lb1")).ok
    with pytest.raises(VerifyError) as err:
        render_keepalived(verify(snapshot_from_dict(_checks("script", script=command + "a"))), "lb1")
    assert "longer than 950" in dict(err.value.problems)["pools/script/health_check/script"]


def test_firewall_marks_follow_what_the_service_matches_not_its_name():
    data = _snapshot()
    first = _render(data)["keepalived.d/fulcrum.nft"]
    data["virtual_services"] = [
        {**s, "name": "renamed"} if s["name"] == "range" else s for s in data["virtual_services"]
    ]
    assert re.findall(rb"mark set (0x[0-9a-f]+)", _render(data)["keepalived.d/fulcrum.nft"]) == re.findall(
        rb"mark set (0x[0-9a-f]+)", first
    )
    service = snapshot_from_dict(data).virtual_services[5]
    assert firewall_mark(service) >> 24 == 0x46


def test_no_layer4_no_files():
    data = _snapshot()
    data["virtual_services"] = (
        [s for s in data["virtual_services"] if s["forwarding"] == "proxy"]
        if False
        else [s for s in data["virtual_services"] if s.get("forwarding", "proxy") == "proxy"]
    )
    data.pop("ipvs_sync")
    assert _render(data) == {}


def test_disabled_members_leave_and_drained_ones_are_quiesced():
    text = _render(_snapshot())["keepalived.conf"].decode()
    nat = text[text.index("# virtual service web-nat") :]
    assert "10.77.4.2" not in nat  # rs3 disabled
    assert re.search(r"real_server 10.77.3.2 8080 \{\n\s+weight 0\n", nat)  # rs2 drained
    assert "sorry_server 10.77.5.2 8080" in nat


def test_ipvs_json_names_the_member_behind_each_real_server():
    services = {s["name"]: s for s in json.loads(_render(_snapshot())["keepalived.d/ipvs.json"])["services"]}
    nat = services["web-nat"]
    assert nat["health_check"] == "tcp"
    assert [(m["member"], m["port"], m["weight"], m["sorry"]) for m in nat["members"]] == [
        ("rs1", 8080, 3, False),
        ("rs2", 8080, 0, False),  # drained: weight 0; rs3 disabled: not in keepalived.conf
        ("sorry", 8080, 1, True),
    ]
    assert {m["pool"] for m in nat["members"]} == {"nat-wrr"}
    assert {m["port"] for m in services["range"]["members"]} == {0}  # a mark service's real servers
    assert services["dns-udp"]["health_check"] == ""


def test_the_sync_daemon_is_checked():
    data = _snapshot()
    data["ipvs_sync"] = {"interface": "eth1\nlvs_flush", "group": "10.0.0.1"}
    with pytest.raises(VerifyError) as err:
        _render(data)
    assert {p for p, _ in err.value.problems} == {"ipvs-sync/interface", "ipvs-sync/group"}


def test_warnings_judge_members_by_the_nodes_networks():
    snap = snapshot_from_dict(_snapshot())
    nodes = {"lb1": {"networks": ["10.77.1.1/24", "10.77.2.1/24"], "ipvs": []}}
    warnings = service_warnings(snap, nodes)
    assert any("rs2 (10.77.3.2) is on no network of node lb1" in w for w in warnings["web-nat"])
    assert not any("rs1" in w for w in warnings["web-nat"])
    assert "web-tun" not in warnings  # tunnels cross networks by design
    assert "web-dr" not in warnings  # its members, the NAT one too, are on lb1's networks
    assert service_warnings(snap, {}).get("web-nat") is None  # no reports, no guesses


def test_a_drained_member_of_a_hash_pool_lets_its_clients_fall_back():
    data = _snapshot()
    pool = next(p for p in data["pools"] if p["name"] == "range")  # maglev-hash, hash_port only
    text = _render(data)["keepalived.conf"].decode()
    assert "mh-fallback" not in text
    pool["members"][0]["state"] = "drain"
    assert "mh-fallback" in _render(data)["keepalived.conf"].decode()


def test_a_script_check_runs_per_member_with_its_address_and_port_first():
    data = json.loads((GOLDEN / "l4-checks" / "input.json").read_text())
    pool = next(p for p in data["pools"] if p["name"] == "script")
    pool["members"].append({"name": "mx2", "address": "10.77.3.2", "port": 2525, "weight": 10, "state": "enabled"})
    text = _render(data)["keepalived.conf"].decode()
    paths = re.findall(r'misc_path "([^"]+)"', text)
    assert paths == [
        "/etc/fulcrum/checks/smtp-banner 10.77.2.2 25 --port=25 --expect=ESMTP",
        "/etc/fulcrum/checks/smtp-banner 10.77.3.2 2525 --port=25 --expect=ESMTP",
    ]
