"""verify() refuses what cannot be rendered safely, naming the object path."""

import copy
import random

import pytest

from compiler import VerifyError, render_haproxy, snapshot_from_dict, verify
from compiler.facts import listeners_clash
from compiler.snapshot import VirtualService
from compiler.templating import haproxy_word
from compiler.verify.fields import address_problems
from compiler.verify.services import listener_clashes

GOOD = {
    "revision": 3,
    "virtual_services": [
        {"name": "web", "vip": "10.0.0.10", "port": 80, "protocol": "http", "enabled": True, "default_pool": "web"}
    ],
    "pools": [
        {
            "name": "web",
            "algorithm": "round-robin",
            "health_check": {
                "type": "http",
                "path": "/health",
                "expected_status": 200,
                "interval_ms": 2000,
                "timeout_ms": 1000,
                "rise": 2,
                "fall": 3,
            },
            "members": [{"name": "s1", "address": "10.0.1.1", "port": 80, "weight": 1, "state": "enabled"}],
        }
    ],
}


def _with(change):
    data = copy.deepcopy(GOOD)
    change(data)
    return data


def _problems(data):
    with pytest.raises(VerifyError) as err:
        verify(snapshot_from_dict(data))
    return dict(err.value.problems)


def test_good_snapshot_verifies():
    snap = snapshot_from_dict(GOOD)
    proved = verify(snap)
    assert proved.snapshot is snap and dict(proved.pool_modes) == {"web": {"http"}} and not proved.marks


def test_the_renderers_take_only_a_verified_snapshot():
    """One way: a bare snapshot (never verified) is not rendered."""
    with pytest.raises(TypeError, match=r"render_haproxy takes what compiler\.verify"):
        render_haproxy(snapshot_from_dict(GOOD), "lb1")


@pytest.mark.parametrize(
    ("change", "path", "fragment"),
    [
        (
            lambda d: d["virtual_services"][0].update(name="web\n    bind :22"),
            "virtual-services/web\n    bind :22/name",
            "invalid name",
        ),
        (lambda d: d["virtual_services"][0].update(vip="10.0.0.300"), "virtual-services/web/vip", "not an IP"),
        # Addresses no traffic can use (issue 20: 0.0.0.0 made HAProxy proxy to itself).
        *[
            (lambda d, a=address: d["pools"][0]["members"][0].update(address=a), "pools/web/members/s1/address", why)
            for address, why in [
                ("0.0.0.0", "unspecified"),
                ("::", "unspecified"),
                ("224.0.0.1", "multicast"),
                ("ff02::1", "multicast"),
                ("255.255.255.255", "broadcast"),
                ("fe80::1%eth0", "scoped"),
                ("127.0.0.1", "a loopback address, which reaches each node itself: set loopback"),
                ("::1", "a loopback address"),
            ]
        ],
        (
            lambda d: d["pools"][0]["members"][0].update(loopback=True),
            "pools/web/members/s1/loopback",
            "is not a loopback address",
        ),
        *[
            (lambda d, a=address: d["virtual_services"][0].update(vip=a), "virtual-services/web/vip", why)
            for address, why in [
                ("::ffff:10.0.0.10", "IPv4-mapped IPv6 address (make 10.0.0.10 the VIP)"),
                ("fe80::1%eth0", "scoped"),
                ("fe80::1", "link-local"),
                ("239.1.1.1", "multicast"),
            ]
        ],
        (lambda d: d["virtual_services"][0].update(port=0), "virtual-services/web/port", "outside 1..65535"),
        (
            lambda d: d["virtual_services"][0].update(default_pool="nope"),
            "virtual-services/web/default_pool",
            "does not exist",
        ),
        (lambda d: d["virtual_services"][0].update(protocol="sctp"), "virtual-services/web/protocol", "not one of"),
        (lambda d: d["pools"][0].update(algorithm="random"), "pools/web/algorithm", "not one of"),
        (lambda d: d["pools"][0]["members"][0].update(port=70000), "pools/web/members/s1/port", "outside"),
        (lambda d: d["pools"][0]["members"][0].update(weight=257), "pools/web/members/s1/weight", "outside 0..256"),
        (lambda d: d["pools"][0]["members"][0].update(state="gone"), "pools/web/members/s1/state", "not one of"),
        (lambda d: d["pools"][0]["health_check"].update(path="/x y"), "pools/web/health_check/path", "invalid path"),
        (lambda d: d["pools"][0]["health_check"].update(path="/a'#"), "pools/web/health_check/path", "invalid path"),
        (
            lambda d: d["pools"][0]["health_check"].update(timeout_ms=5000),
            "pools/web/health_check/timeout_ms",
            "outside",
        ),
        (lambda d: d["pools"][0]["health_check"].update(host="a b"), "pools/web/health_check/host", "not a host"),
        # A mask HAProxy would read otherwise (issue 20).
        (
            lambda d: d["virtual_services"][0].update(allow_cidrs=["10.0.0.0/0.255.255.255"]),
            "virtual-services/web/allow_cidrs/0",
            "write the prefix length, such as 10.0.0.0/8",
        ),
        # Pages HAProxy answers from one buffer, counted in bytes (issue 20).
        (lambda d: d["pools"][0].update(maintenance_page="a" * 15_361), "pools/web/maintenance_page", "15361 bytes"),
        (
            lambda d: d["virtual_services"][0].update(error_pages=[{"status": 503, "body": "\u00e9" * 7681}]),
            "virtual-services/web/error_pages/503/body",
            "15362 bytes (UTF-8)",
        ),
    ],
)
def test_bad_input_names_its_path(change, path, fragment):
    problems = _problems(_with(change))
    assert path in problems, problems
    assert fragment in problems[path]


def test_a_loopback_member_is_allowed_when_it_says_so():
    for address in ("127.0.0.1", "127.8.0.2", "::1"):
        data = _with(lambda d, a=address: d["pools"][0]["members"][0].update(address=a, loopback=True))
        assert verify(snapshot_from_dict(data)).snapshot.pools[0].members[0].address == address


def test_listener_clash_including_wildcard():
    def two_services(d):
        d["virtual_services"].append({**d["virtual_services"][0], "name": "other", "vip": "0.0.0.0"})

    problems = _problems(_with(two_services))
    assert "clashes with virtual service 'web'" in problems["virtual-services/other/vip"]


def test_listener_clashes_found_by_address_are_every_pair_that_clashes():
    """The clash check looks services up by address; it reports exactly what trying every
    pair does, in the same order, over addresses, wildcards, ranges and both transports."""
    rng = random.Random(21)
    vips = ["10.0.0.1", "10.0.0.2", "0.0.0.0", "::1", "::", "10.0.0.01", "fe80::1%eth0"]
    services = []
    for i in range(300):
        port = rng.randrange(1, 40)
        services.append(
            VirtualService(
                name=f"s{i}", vip=rng.choice(vips), port=port, port_end=rng.choice([0, 0, port + rng.randrange(5)]),
                protocol=rng.choice(["http", "tcp", "udp", "https"]), enabled=True, default_pool="p",
            )
        )  # fmt: skip
    valid = [s for s in services if not address_problems(s.vip, "")]
    pairwise = [
        (f"virtual-services/{s.name}/vip", other.name)
        for i, s in enumerate(valid)
        for other in valid[:i]
        if listeners_clash(s, other)
    ]
    found = [(path, message.split("'")[1]) for path, message in listener_clashes(services)]
    assert len(found) > 100 and found == pairwise


def test_same_port_different_vip_is_fine():
    def two(d):
        d["virtual_services"].append({**d["virtual_services"][0], "name": "other", "vip": "10.0.0.11"})

    verify(snapshot_from_dict(_with(two)))


def test_pool_shared_by_http_and_tcp_is_refused():
    def mixed(d):
        d["virtual_services"].append({**d["virtual_services"][0], "name": "t", "port": 81, "protocol": "tcp"})

    assert "pools/web" in _problems(_with(mixed))


def test_unused_pool_verifying_tls_needs_a_ca():
    """A pool no service uses is still rendered as a backend, so its CA is checked too."""
    data = _with(lambda d: d["pools"].append({"name": "spare", "algorithm": "round-robin", "tls": True, "members": []}))
    assert _problems(data) == {"pools/spare/tls_ca": "verifying members' certificates needs a CA bundle"}


def test_duplicate_member_endpoint_is_refused():
    def dup(d):
        d["pools"][0]["members"].append({**d["pools"][0]["members"][0], "name": "s2"})

    assert "already a member" in _problems(_with(dup))["pools/web/members/s2"]


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"revision": "1", "virtual_services": [], "pools": []}, "expected int"),
        ({"revision": 1, "virtual_services": [{"name": "x"}], "pools": []}, "missing"),
        ({"revision": 1, "virtual_services": [], "pools": [], "extra": 1}, "unknown field"),
        ({"revision": True, "virtual_services": [], "pools": []}, "expected int"),
    ],
)
def test_malformed_snapshot_is_refused(data, fragment):
    with pytest.raises(VerifyError, match=fragment):
        snapshot_from_dict(data)


class Name(str):
    pass


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("port", True, "expected int, got bool"),
        ("port", 80.0, "expected int, got float"),
        ("port", None, "expected int, got NoneType"),
        ("weight", "1", "expected int, got str"),
        ("backup", 0, "expected bool, got int"),
        ("address", None, "expected str, got NoneType"),
    ],
)
def test_a_members_scalar_of_another_type_is_refused_at_its_path(field, value, expected):
    data = _with(lambda d: d["pools"][0]["members"][0].update({field: value}))
    with pytest.raises(VerifyError) as err:
        snapshot_from_dict(data)
    assert err.value.problems == [(f"pools/web/members/s1/{field}", expected)]


def test_a_scalar_of_a_subclass_of_its_type_is_taken():
    data = _with(lambda d: d["pools"][0]["members"][0].update(name=Name("s1")))
    assert snapshot_from_dict(data).pools[0].members[0].name == "s1"


def test_render_refuses_unverified_input():
    bad = _with(lambda d: d["pools"][0]["members"][0].update(name="s1\nserver evil 1.2.3.4:22"))
    with pytest.raises(VerifyError):
        render_haproxy(verify(snapshot_from_dict(bad)), "lb1")


@pytest.mark.parametrize("word", ["a b", "x\ny", "#c", "'q'", '"q"', "$HOME", "a\\b", ""])
def test_word_filter_rejects_parser_significant_text(word):
    with pytest.raises(ValueError):
        haproxy_word(word)


def test_node_name_cannot_inject():
    with pytest.raises(ValueError):
        render_haproxy(verify(snapshot_from_dict(GOOD)), "lb1\nglobal")
