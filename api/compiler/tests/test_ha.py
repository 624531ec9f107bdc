"""HA groups: per-node rendering, HAProxy peers, and what verify refuses.

The golden case ``ha`` holds lb1's bytes; these tests look at the other nodes and at the
problems a bad group gets.
"""

import copy
import json
from pathlib import Path

import pytest

from compiler import VerifyError, render_haproxy, render_keepalived, snapshot_from_dict, verify
from revisions.checks import check_keepalived, only_node_local

CASE = json.loads((Path(__file__).parent / "golden" / "ha" / "input.json").read_text())


def _snap(change=None):
    data = copy.deepcopy(CASE)
    if change:
        change(data)
    return snapshot_from_dict(data)


def _group(data, name):
    return next(g for g in data["ha_groups"] if g["name"] == name)


def _problems(change):
    with pytest.raises(VerifyError) as err:
        render_keepalived(verify(_snap(change)), "lb1")
    return dict(err.value.problems)


def test_each_node_gets_its_own_priority_interface_and_peers():
    files = render_keepalived(verify(_snap()), "lb2")
    conf = files["keepalived.conf"].decode()
    ha = json.loads(files["keepalived.d/ha.json"])
    assert ha["standby"] is True and ha["run_dir"] == "/run/fulcrum-agent/lb2"
    front_a = next(g for g in ha["groups"] if g["name"] == "front-a")
    assert (front_a["priority"], front_a["interface"], front_a["peers"]) == (100, "ens3", ["10.77.1.3"])
    assert "10.77.100.10/32 dev ens3" in conf and "unicast_src_ip 10.77.1.4" in conf
    # lb2 is master of front-b by default (150): active/active with lb1.
    front_b = next(g for g in ha["groups"] if g["name"] == "front-b")
    assert front_b["priority"] == 150
    # the group's own interface is always tracked; only eth1 is listed for lb1 (eth0)...
    assert "track_interface" in conf and "        eth0\n    }\n    track_file" in conf  # ...and eth0 for lb2 (ens3)
    assert check_keepalived(files).ok


def test_a_node_in_no_group_gets_no_vrrp_nor_peers():
    assert "keepalived.d/ha.json" not in render_keepalived(verify(_snap()), "lb3")
    cfg = render_haproxy(verify(_snap()), "lb3")["haproxy.cfg"].decode()
    assert "peers" not in cfg and "transparent" not in cfg


def test_peers_list_every_ha_node_with_an_address_and_the_local_one():
    cfg = render_haproxy(verify(_snap()), "lb2")["haproxy.cfg"].decode()
    assert "localpeer lb2" in cfg
    assert "peer lb1 10.77.1.3:10000" in cfg and "peer lb2 10.77.1.4:10000" in cfg
    assert cfg.count(" peers fulcrum\n") == 3  # source, learned cookie and SSL session ID tables


def test_a_lone_node_has_no_peers_and_no_unicast():
    def alone(data):
        data["ha_groups"] = [_group(data, "front-a")]
        _group(data, "front-a")["nodes"] = [{"node": "lb1", "priority": 100}]

    conf = render_keepalived(verify(_snap(alone)), "lb1")["keepalived.conf"].decode()
    assert "unicast_peer" not in conf and "vrrp_instance front-a" in conf
    assert "peers fulcrum" not in render_haproxy(verify(_snap(alone)), "lb1")["haproxy.cfg"].decode()


def test_track_haproxy_only_when_the_node_runs_haproxy():
    def layer4_only(data):
        data["virtual_services"] = [s for s in data["virtual_services"] if s.get("forwarding") == "nat"]

    files = render_keepalived(verify(_snap(layer4_only)), "lb1")
    assert "fulcrum_haproxy" not in files["keepalived.conf"].decode()
    assert "haproxy" not in json.loads(files["keepalived.d/ha.json"])["track_files"]


def test_a_clash_is_reported_on_both_groups():
    problems = _problems(lambda d: _group(d, "front-b").update(vrid=51, vips=["10.77.100.10"]))
    assert problems["ha-groups/front-a/vrid"] == "VRID 51 is also front-b's"
    assert problems["ha-groups/front-a/vips/0"] == "10.77.100.10 is also in HA group front-b"


@pytest.mark.parametrize(
    ("change", "path", "words"),
    [
        (lambda d: _group(d, "front-b").update(vrid=51), "ha-groups/front-b/vrid", "also front-a's"),
        (
            lambda d: _group(d, "front-b").update(vips=["10.77.100.10"]),
            "ha-groups/front-b/vips/0",
            "also in HA group front-a",
        ),
        (
            lambda d: _group(d, "front-b").update(advert_interval_ms=200),
            "ha-groups/front-b/advert_interval_ms",
            "version 3",
        ),
        (
            lambda d: _group(d, "front-a").update(advert_interval_ms=205),
            "ha-groups/front-a/advert_interval_ms",
            "10 ms",
        ),
        (lambda d: _group(d, "front-a").update(auth_password="secret"), "ha-groups/front-a/auth_password", "VRRPv3"),
        (lambda d: _group(d, "front-b").update(auth_password="a b"), "ha-groups/front-b/auth_password", "1-8"),
        (
            lambda d: _group(d, "front-a")["nodes"][1].update(priority=150),
            "ha-groups/front-a/nodes/lb2/priority",
            "own",
        ),
        (
            lambda d: _group(d, "front-a")["nodes"][1].update(priority=255),
            "ha-groups/front-a/nodes/lb2/priority",
            "1..254",
        ),
        (
            lambda d: _group(d, "front-a")["nodes"].append({"node": "lb9", "priority": 9}),
            "ha-groups/front-a/nodes/lb9",
            "no node",
        ),
        (lambda d: d["nodes"][0].update(address=""), "nodes/lb1/address", "unicast"),
        (lambda d: _group(d, "front-a")["vips"].append("2001:db8::1"), "ha-groups/front-a/vips", "separate groups"),
        (
            lambda d: _group(d, "front-a").update(interface="eth0\nvrrp_script x"),
            "ha-groups/front-a/interface",
            "invalid",
        ),
        (
            lambda d: _group(d, "front-a").update(track_interfaces=["eth1 }"]),
            "ha-groups/front-a/track_interfaces/0",
            "invalid",
        ),
        (lambda d: _group(d, "front-a").update(witness="gateway"), "ha-groups/front-a/witness", "not an IP"),
        (lambda d: _group(d, "front-a").update(vips=[]), "ha-groups/front-a/vips", "at least one"),
        (lambda d: d["ipvs_sync"].update(ha_group="nope"), "ipvs-sync/ha_group", "no HA group"),
        (
            lambda d: _group(d, "front-a").update(preempt=False, preempt_delay_s=5),
            "ha-groups/front-a/preempt_delay_s",
            "only",
        ),
    ],
)
def test_verify_refuses_bad_groups(change, path, words):
    problems = _problems(change)
    assert path in problems, problems
    assert words in problems[path]


def test_the_api_check_tolerates_only_interfaces_missing_on_the_api_host():
    files = render_keepalived(verify(_snap()), "lb1")
    assert check_keepalived(files).ok  # eth1 and ens3 exist only on the nodes
    broken = dict(files)
    broken["keepalived.conf"] = files["keepalived.conf"].replace(b"garp_master_delay 1", b"garp_master_dalay 1")
    result = check_keepalived(broken)
    assert not result.ok and "garp_master_dalay" in result.output


def test_track_files_out_of_the_apis_reach_are_the_nodes_business():
    """keepalived 2.3's words when the API, as the user fulcrum, checks the configuration of
    the appliance it runs on, whose agent keeps its track files in a directory of root's
    (the image's pair, after the API moved to an appliance that runs HA groups)."""
    refused = (
        "(<check>/keepalived.conf: Line 27) realpath() error 13 (Permission denied) for fulcrum_standby\n"
        "(<check>/keepalived.conf: Line 32) realpath() error 13 (Permission denied) for fulcrum_haproxy\n"
        "(<check>/keepalived.conf: Line 54) (front) track file fulcrum_standby not found, ignoring...\n"
        "(<check>/keepalived.conf: Line 55) (front) track file fulcrum_haproxy not found, ignoring...\n"
    )
    assert only_node_local(refused)
    assert not only_node_local(refused + "(<check>/keepalived.conf: Line 60) Unknown keyword 'garp_master_dalay'\n")
    assert not only_node_local("realpath() error 13 (Permission denied) for /etc/keepalived/notify.sh\n")
    assert not only_node_local("")


def test_a_new_revision_alone_does_not_change_keepalived_files():
    """The agent reloads keepalived when its files differ; a reload restarts the backup's
    master-down timer, so an unrelated revision must leave them byte for byte."""
    later = _snap(lambda d: d.update(revision=d["revision"] + 1))
    assert render_keepalived(verify(later), "lb1") == render_keepalived(verify(_snap()), "lb1")
