"""Layer 7 input: verify refuses what cannot be rendered safely; switching keeps rule order."""

import copy
import ipaddress

import pytest

from compiler import VerifyError, render_haproxy, snapshot_from_dict, verify
from compiler.advice import service_warnings
from compiler.facts import derive
from compiler.snapshot import Condition, Rule
from compiler.switching import MAP_MIN_RUN, compile_rules, quote
from compiler.templating import haproxy_address
from compiler.tests.test_verify import GOOD
from revisions.checks import check_haproxy


def _service(**fields):
    data = copy.deepcopy(GOOD)
    data["pools"].append({**data["pools"][0], "name": "api", "health_check": None})
    data["virtual_services"][0].update(fields)
    return data


def _rule(name="r", conditions=None, action="use_pool", **fields):
    conditions = [{"kind": "path_prefix", "values": ["/api"]}] if conditions is None else conditions
    return {"name": name, "conditions": conditions, "action": action, **fields}


def _problems(data):
    with pytest.raises(VerifyError) as err:
        verify(snapshot_from_dict(data))
    return dict(err.value.problems)


BAD = [
    # (service fields, problem path, message fragment)
    ({"rules": [_rule(pool="nope")]}, "virtual-services/web/rules/r/pool", "does not exist"),
    (
        {"rules": [_rule(pool="api", conditions=[{"kind": "path_regex", "values": ["(unclosed"]}])]},
        "virtual-services/web/rules/r/conditions/0/values/0",
        "does not compile",
    ),
    (
        {"rules": [_rule(action="set_request_header", header_name="X-A", header_value="a\nserver x 1.2.3.4:22")]},
        "virtual-services/web/rules/r/header_value",
        "no control characters",
    ),
    (
        {"rules": [_rule(action="set_request_header", header_name="X A", header_value="v")]},
        "virtual-services/web/rules/r/header_name",
        "invalid name",
    ),
    (
        {"rules": [_rule(pool="api", conditions=[{"kind": "header_equals", "values": ["it's"], "name": "X"}])]},
        "virtual-services/web/rules/r/conditions/0/values/0",
        "invalid value",
    ),
    (
        {"rules": [_rule(pool="api", conditions=[{"kind": "header_present", "values": []}])]},
        "virtual-services/web/rules/r/conditions/0/name",
        "invalid name",
    ),
    (
        {"rules": [_rule(pool="api", conditions=[{"kind": "source_cidr", "values": ["10.0.0.0/33"]}])]},
        "virtual-services/web/rules/r/conditions/0/values/0",
        "not an address",
    ),
    ({"rules": [_rule(pool="api", conditions=[])]}, "virtual-services/web/rules/r/conditions", "at least one"),
    (
        {"rules": [_rule(action="redirect", redirect_location="java script:")]},
        "virtual-services/web/rules/r/redirect_location",
        "invalid location",
    ),
    ({"rules": [_rule(action="deny", deny_status=418)]}, "virtual-services/web/rules/r/deny_status", "not one of"),
    ({"protocol": "https"}, "virtual-services/web/certificates", "at least one certificate"),
    ({"certificates": ["www"]}, "virtual-services/web/certificates", "only an https service"),
    ({"allow_cidrs": ["10.0.0.0/8", "nonsense"]}, "virtual-services/web/allow_cidrs/1", "not an address"),
    ({"compression_types": ["text/html; charset=x"]}, "virtual-services/web/compression_types/0", "media type"),
    ({"protocol": "tcp", "rules": [_rule(pool="api")]}, "virtual-services/web/rules", "http or https"),
    ({"protocol": "tcp", "max_body_bytes": 10}, "virtual-services/web/max_body_bytes", "http or https"),
    ({"error_pages": [{"status": 418, "body": "x"}]}, "virtual-services/web/error_pages/418/status", "not one of"),
]


@pytest.mark.parametrize(("fields", "path", "fragment"), BAD)
def test_bad_layer7_input_names_its_path(fields, path, fragment):
    problems = _problems(_service(**fields))
    assert path in problems, problems
    assert fragment in problems[path]


def test_cookie_persistence_on_a_tcp_service_is_refused():
    data = _service(protocol="tcp")
    data["pools"][0]["persistence"] = {"type": "cookie_insert"}
    assert "needs an http or https service" in _problems(data)["pools/web/persistence/type"]


def test_https_service_renders_only_with_its_pem():
    data = _service(protocol="https", certificates=["www"])
    data["certificates"] = [{"name": "www", "fingerprint": "ab" * 32}]
    proved = verify(snapshot_from_dict(data))
    with pytest.raises(VerifyError, match="certificates/www: PEM not available"):
        render_haproxy(proved, "lb1", {})


def _switch(rules):
    snap = snapshot_from_dict(_service(rules=rules))
    verify(snap)
    return compile_rules(snap.virtual_services[0])


def test_short_runs_stay_acls_and_long_runs_become_one_map():
    short = _switch([_rule(f"r{i}", [{"kind": "path_prefix", "values": [f"/{i}/"]}], pool="api") for i in range(3)])
    assert not short.maps and sum(line.startswith("acl ") for line in short.acls) == 3
    n = MAP_MIN_RUN
    long = _switch([_rule(f"r{i}", [{"kind": "path_prefix", "values": [f"/{i}/"]}], pool="api") for i in range(n)])
    assert long.acls == [] and len(long.maps) == 1
    (content,) = long.maps.values()
    assert content.count("pool-api") == n


def test_map_keeps_first_match_semantics_by_dropping_shadowed_prefixes():
    rules = [_rule(f"r{i}", [{"kind": "path_prefix", "values": [f"/p{i}/"]}], pool="api") for i in range(MAP_MIN_RUN)]
    rules.insert(1, _rule("deeper", [{"kind": "path_prefix", "values": ["/p0/deep/"]}], pool="web"))  # shadowed by r0
    rules.insert(0, _rule("longer-first", [{"kind": "path_prefix", "values": ["/p3/x/"]}], pool="web"))  # wins over r3
    (content,) = _switch(rules).maps.values()
    keys = [line.split()[0] for line in content.splitlines()]
    assert "/p0/deep/" not in keys
    assert keys.index("/p3/x/") < keys.index("/p3/")
    assert "/p3/x/ pool-web" in content


def test_rules_after_a_routing_rule_are_guarded():
    out = _switch(
        [
            _rule("a", pool="api"),
            _rule("b", [{"kind": "path_prefix", "values": ["/b"]}], action="deny"),
        ]
    )
    deny = [line for line in out.request if "deny" in line]
    assert deny and "!fulcrum_routed" in deny[0]


def test_disabled_rules_are_left_out():
    out = _switch([_rule("a", pool="api", enabled=False)])
    assert out.request == [] and not out.routes


def test_many_values_split_over_lines_that_haproxy_can_read():
    values = [f"/{i:04}/" + "x" * 100 for i in range(100)]
    out = _switch([_rule("a", [{"kind": "path_prefix", "values": values}], pool="api")])
    assert len(out.acls) > 3
    assert all(len(line) < 2048 and len(line.split()) < 64 for line in out.acls)


@pytest.mark.parametrize("text", ["it's", "a\nb", "tab\there", "nul\x00", "del\x7f", "\x1f"])
def test_quote_refuses_what_would_escape_strong_quotes(text):
    with pytest.raises(ValueError):
        quote(text)


def test_quote_keeps_what_strong_quotes_hold():
    text = 'a "b" \\ $x #y %[src] é'
    assert quote(text) == f"'{text}'"


@pytest.mark.parametrize(
    "address",
    ["10.0.0.1", "255.255.255.255", "0.0.0.0", "1.2.3.04", "1.2.3.256", "1.2.3", "1.2.3.4 ", "1.2.3.4\n",
     "2001:db8::0:1", "::ffff:1.2.3.4", "::1", "fe80::1%eth0", "web.internal", ""],
)  # fmt: skip
def test_a_server_address_renders_as_ipaddress_writes_it_or_is_refused(address):
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        with pytest.raises(ValueError):
            haproxy_address(address, 80)
        return
    want = f"[{ip.compressed}]:80" if ip.version == 6 else f"{ip.compressed}:80"
    assert haproxy_address(address, 80) == want


def test_dataclass_rule_defaults():
    rule = Rule(name="x", conditions=(Condition(kind="method", values=("GET",)),), action="deny")
    assert rule.deny_status == 403 and rule.enabled


# Patterns HAProxy's engine (PCRE2) and Python's re disagree on, and some both take.
PATTERNS = [
    "^/api/v[0-9]+/",
    "(?i)^/admin",
    r"\d{2,4}$",
    "a{1,65535}",
    "(?<id>[0-9]+)",
    "[[:alpha:]]+",
    r"\p{Lu}",
    "a++b",
    "(?u)abc",  # Python only
    "a{1,100000}",  # Python only
    "(unclosed",
    "x{2,1}",
    r"(a)\1",  # plain PCRE2 only: HAProxy's acls capture nothing (issue 20)
    r"(?<n>a)\k<n>",  # a named group captures even there
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_regex_is_refused_exactly_when_haproxy_refuses_it(pattern):
    """What the API accepts, haproxy -c accepts; what it refuses, haproxy -c refuses too (the
    configuration rendered regardless, to ask it)."""
    snap = snapshot_from_dict(
        _service(rules=[_rule(pool="api", conditions=[{"kind": "path_regex", "values": [pattern]}])])
    )
    try:
        verify(snap)
        refused = ""
    except VerifyError as err:
        refused = dict(err.problems)["virtual-services/web/rules/r/conditions/0/values/0"]
    checked = check_haproxy(render_haproxy(derive(snap), "lb1", {}))  # what verify refuses, too
    assert checked.checked
    assert checked.ok == (not refused), (refused, checked.output)
    if refused:
        assert "(PCRE2)" in refused and f"regex '{pattern}' is invalid" in checked.output, (refused, checked.output)


def test_the_most_compression_types_the_api_takes_pass_haproxy():
    """64 media types of 100 characters each: more words and bytes than one haproxy.cfg line
    holds, so they are spread over several "compression type" lines, which HAProxy adds up."""
    types = [f"application/vnd.fulcrum-{i:02}-" + "x" * 73 for i in range(64)]
    assert {len(t) for t in types} == {100}
    files = render_haproxy(verify(snapshot_from_dict(_service(compression=True, compression_types=types))), "lb1", {})
    lines = [line.split() for line in files["haproxy.cfg"].decode().splitlines() if "compression type" in line]
    assert len(lines) > 1 and [t for line in lines for t in line[2:]] == types
    checked = check_haproxy(files)
    assert checked.checked and checked.ok, checked.output
    too_many = _problems(_service(compression=True, compression_types=[*types, "text/plain"]))
    assert "more than 64" in too_many["virtual-services/web/compression_types"]


def test_pools_of_one_service_sharing_a_cookie_name_get_a_warning():
    data = _service(rules=[_rule(pool="api")])
    for pool in data["pools"]:
        pool["persistence"] = {"type": "cookie_insert"}  # both default to SERVERID
    snap = snapshot_from_dict(data)
    verify(snap)
    (warning,) = service_warnings(snap, {})["web"]
    assert warning.startswith("pools web, api keep their clients with the same cookie, SERVERID"), warning
    data["pools"][1]["persistence"]["cookie_name"] = "API_SERVER"
    assert "web" not in service_warnings(snapshot_from_dict(data), {})
