"""Dynamic least load (DLLC): what HAProxy and the node agent are given for such pools."""

import json
import re
from pathlib import Path

import pytest

from compiler import VerifyError, render_haproxy, render_keepalived, snapshot_from_dict, verify

GOLDEN = Path(__file__).parent / "golden"


def _data():
    return json.loads((GOLDEN / "dllc" / "input.json").read_text())


def _pool(data, name):
    return next(p for p in data["pools"] if p["name"] == name)


def _servers(data):
    files = render_haproxy(verify(snapshot_from_dict(data)), "lb1")
    return {s["server"]: s for s in json.loads(files["haproxy.d/servers.json"])["servers"]}, files


def test_the_heaviest_weight_becomes_haproxys_maximum_and_ratios_are_kept():
    servers, files = _servers(_data())
    # Weights 4 and 1 (the drained 8 does not count): 256 and 64; drained stays 0.
    assert {n: s["weight"] for n, s in servers.items()} == {"big": 256, "small": 64, "resting": 0, "off": 128}
    text = files["haproxy.cfg"].decode()
    assert re.search(r"backend pool-app\n(?:    .*\n)*    balance leastconn\n", text)
    assert "server small 10.77.2.12:8080 weight 64 check agent-check agent-port 3333 agent-inter 500ms" in text


def test_a_weight_change_in_a_dllc_pool_is_structural_but_not_in_others():
    """The agent's percentages are relative to the weight HAProxy loaded: reload, not set weight."""
    data = _data()
    _pool(data, "app")["members"][1]["weight"] = 2
    after, _ = _servers(data)
    assert after["small"]["weight"] == 128
    structure = [
        json.loads(render_haproxy(verify(snapshot_from_dict(d)), "lb1")["haproxy.d/servers.json"])["structure"]
        for d in (_data(), data)
    ]
    assert structure[0] != structure[1]

    plain = _data()
    _pool(plain, "app")["algorithm"] = "least-connections"
    changed = json.loads(json.dumps(plain))
    _pool(changed, "app")["members"][1]["weight"] = 2
    hashes = [
        json.loads(render_haproxy(verify(snapshot_from_dict(d)), "lb1")["haproxy.d/servers.json"])["structure"]
        for d in (plain, changed)
    ]
    assert hashes[0] == hashes[1]


def test_only_dllc_pools_get_an_agent_and_feedback_targets():
    data = _data()
    _pool(data, "app")["algorithm"] = "least-connections"
    servers, files = _servers(data)
    assert "agent-check" not in files["haproxy.cfg"].decode()
    assert all("feedback" not in s for s in servers.values())
    assert servers["big"]["weight"] == 4  # unscaled


def test_ipvs_json_lists_where_each_real_server_answers_with_its_load():
    files = render_keepalived(verify(snapshot_from_dict(_data())), "lb1")
    service = json.loads(files["keepalived.d/ipvs.json"])["services"][0]
    assert service["scheduler"] == "dllc" and service["keepalived_scheduler"] == "wlc"
    assert service["feedback"] == [
        {"pool": "l4app", "member": "r1", "address": "10.77.3.11", "port": 4334, "dest_port": 80, "weight": 2},
        {"pool": "l4app", "member": "r2", "address": "10.77.3.12", "port": 4334, "dest_port": 80, "weight": 0},
    ]


def test_other_schedulers_have_no_feedback():
    data = _data()
    _pool(data, "l4app")["algorithm"] = "least-connections"
    service = json.loads(render_keepalived(verify(snapshot_from_dict(data)), "lb1")["keepalived.d/ipvs.json"])[
        "services"
    ][0]
    assert "feedback" not in service


@pytest.mark.parametrize(
    ("pool", "change", "path"),
    [
        (
            "app",
            {
                "health_check": {
                    "type": "agent",
                    "agent_port": 3333,
                    "interval_ms": 1000,
                    "timeout_ms": 500,
                    "rise": 1,
                    "fall": 1,
                }
            },
            "pools/app/health_check/type",
        ),
        ("app", {"feedback_agent_port": 0}, "pools/app/feedback_agent_port"),
        ("app", {"feedback_http_port": 70000}, "pools/app/feedback_http_port"),
        ("app", {"feedback_interval_ms": 10}, "pools/app/feedback_interval_ms"),
        (
            "l4app",
            {
                "health_check": {
                    "type": "script",
                    "script": "/etc/fulcrum/checks/load",
                    "script_dynamic": True,
                    "interval_ms": 1000,
                    "timeout_ms": 500,
                    "rise": 1,
                    "fall": 1,
                }
            },
            "pools/l4app/health_check/script_dynamic",
        ),
    ],
)
def test_settings_that_would_fight_dllc_or_cannot_render_are_refused(pool, change, path):
    data = _data()
    _pool(data, pool).update(change)
    with pytest.raises(VerifyError) as err:
        render_haproxy(verify(snapshot_from_dict(data)), "lb1")
    assert path in [p for p, _ in err.value.problems]
