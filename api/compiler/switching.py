"""Content switching: a virtual service's ordered rules as HAProxy frontend lines and maps.

Semantics: rules are evaluated in order and the first matching *terminal* rule (use_pool,
redirect, deny) ends evaluation; a matching header rule applies and evaluation goes on.

Every rule becomes ``http-request`` lines guarded by ``!fulcrum_routed`` once an earlier
use_pool rule may have matched, so HAProxy evaluates exactly in the operator's order even
though ``use_backend`` runs after all ``http-request`` rules. A use_pool rule sets
``txn.fulcrum_pool``; one ``use_backend`` line then routes on it.

Large rule sets stay fast: a run of consecutive use_pool rules whose single condition is a
path prefix, a file extension or an exact host compiles to one map lookup (a prefix tree for
``map_beg``, a hash-like tree for ``map_str``) instead of one ACL per rule. A prefix tree
returns the *longest* matching prefix; the compiler first drops every prefix shadowed by an
earlier shorter one, after which longest match and first match are the same rule.
"""

import re
from dataclasses import dataclass, field

from compiler import names

# A run of at least this many map-able rules becomes a map lookup; shorter runs stay ACLs,
# which read better in the generated file.
MAP_MIN_RUN = 8

# HAProxy splits a line into at most 64 words and reads at most 2048 bytes of it.
_VALUES_PER_LINE = 32
_LINE_BUDGET = 1500

ROUTED_ACL = "fulcrum_routed"
POOL_VAR = "txn.fulcrum_pool"

# kind -> (sample fetch and converters, match method); values are lower-cased where the
# fetch lower-cases the input.
_FETCH = {
    "path_prefix": ("path", "beg"),
    "path_suffix": ("path", "end"),
    "path_contains": ("path", "sub"),
    "path_regex": ("path", "reg"),
    "path_extension": ("path,field(-1,.),lower", "str"),
    "host_exact": ("req.hdr(host),field(1,:),lower", "str"),
    "host_suffix": ("req.hdr(host),field(1,:),lower", "end"),
    "host_wildcard": ("req.hdr(host),field(1,:),lower", "reg"),
    "header_present": ("req.hdr({name})", "found"),
    "header_equals": ("req.fhdr({name})", "str"),
    "header_regex": ("req.fhdr({name})", "reg"),
    "cookie_present": ("req.cook({name})", "found"),
    "cookie_equals": ("req.cook({name})", "str"),
    "query_present": ("url_param({name})", "found"),
    "query_equals": ("url_param({name})", "str"),
    "method": ("method", "str"),
    "source_cidr": ("src", "ip"),
}
_LOWERED = frozenset({"path_extension", "host_exact", "host_suffix", "host_wildcard"})
# Map-able kinds and the map converter that looks them up.
_MAP_CONVERTER = {"path_prefix": "map_beg", "path_extension": "map_str", "host_exact": "map_str"}


@dataclass
class Switching:
    """What a service's rules add to its frontend."""

    acls: list[str] = field(default_factory=list)
    request: list[str] = field(default_factory=list)  # http-request lines, in order
    response: list[str] = field(default_factory=list)  # http-response lines
    routes: bool = False  # some rule may set txn.fulcrum_pool
    maps: dict[str, str] = field(default_factory=dict)  # haproxy.d leaf -> content
    # Each line above -> the part of the service it renders ("rules/<rule>/conditions/0",
    # "rules/<rule>", "rules" for a map lookup), to read HAProxy's complaints back by.
    fields: dict[str, str] = field(default_factory=dict)

    def claim(self, since, owner):
        """Give ``owner`` the lines added since the line counts ``since`` that have none."""
        for lines, count in zip((self.acls, self.request, self.response), since, strict=True):
            for line in lines[count:]:
                self.fields.setdefault(line, owner)


# What strong quotes cannot hold: the quote itself and control characters.
_UNQUOTABLE = re.compile(r"['\x00-\x1f\x7f]")


def quote(text):
    """HAProxy strong quoting: nothing inside is interpreted. Callers validated ``text``."""
    if _UNQUOTABLE.search(text):
        raise ValueError(f"refusing to quote {text!r} for haproxy.cfg")
    return f"'{text}'"


def log_format(text):
    """A literal inside a log-format argument (header values, redirect locations)."""
    return quote(text.replace("%", "%%"))


def wildcard_regex(pattern):
    """``*.example.com`` -> ``^[^.]+\\.example\\.com$`` (``*`` is exactly one label)."""
    return "^" + r"\.".join("[^.]+" if label == "*" else re.escape(label) for label in pattern.split(".")) + "$"


def conf_file(leaf):
    """How haproxy.cfg names a file the agent keeps next to it."""
    return f'"${{FULCRUM_CONF_DIR}}/haproxy.d/{leaf}"'


def _values(cond):
    values = [v.lower() for v in cond.values] if cond.kind in _LOWERED else list(cond.values)
    if cond.kind == "host_wildcard":
        values = [wildcard_regex(v) for v in values]
    return values


def value_lines(values):
    """Split pattern values into groups that fit on one haproxy.cfg line."""
    chunk, size = [], 0
    for value in values:
        if chunk and (len(chunk) == _VALUES_PER_LINE or size + len(value) > _LINE_BUDGET):
            yield chunk
            chunk, size = [], 0
        chunk.append(value)
        size += len(value) + 3
    if chunk:
        yield chunk


def _acl_lines(name, cond):
    """``acl`` lines declaring ``name``; several lines with one name are ORed by HAProxy.

    ``--`` ends the acl's options: HAProxy reads a first pattern that starts with '-' as one
    (quoted or not), so an operator's ``-f /etc/passwd`` would load a file's lines as patterns.
    """
    fetch, method = _FETCH[cond.kind]
    fetch = fetch.format(name=cond.name)
    if method == "found":
        return [f"acl {name} {fetch} -m found"]
    lines = value_lines(_values(cond))
    return [f"acl {name} {fetch} -m {method} -- {' '.join(quote(v) for v in chunk)}" for chunk in lines]


def _map_kind(rule):
    if rule.action != "use_pool" or len(rule.conditions) != 1:
        return None
    cond = rule.conditions[0]
    return cond.kind if cond.kind in _MAP_CONVERTER and not cond.negate else None


def _map_entries(kind, rules):
    """(key, backend) pairs in which the first rule to match a request is the map's answer."""
    entries, seen = [], []
    for rule in rules:
        for value in _values(rule.conditions[0]):
            if value in seen or (kind == "path_prefix" and any(value.startswith(p) for p in seen)):
                continue  # an earlier rule already takes every request this value would
            seen.append(value)
            entries.append((value, names.backend(rule.pool)))
    return entries


def _runs(rules):
    """Split rules into (start, "map", kind, [rules]) runs and (start, "acl", None, [rule])."""
    i = 0
    while i < len(rules):
        kind = _map_kind(rules[i])
        j = i + 1
        while kind and j < len(rules) and _map_kind(rules[j]) == kind:
            j += 1
        if kind and j - i >= MAP_MIN_RUN:
            yield i, "map", kind, rules[i:j]
        else:
            j = i + 1
            yield i, "acl", None, rules[i:j]
        i = j


def compile_rules(service):
    """The frontend lines and map files for ``service``'s enabled rules."""
    out = Switching()
    rules = [r for r in service.rules if r.enabled]
    for start, form, kind, run in _runs(rules):
        guard = f"!{ROUTED_ACL}" if out.routes else ""
        since = (len(out.acls), len(out.request), len(out.response))
        if form == "map":
            _compile_map(out, service, start, kind, run, guard)
            out.claim(since, "rules")
        else:
            _compile_rule(out, start, run[0], guard)
            out.claim(since, f"rules/{run[0].name}")
    return out


def _compile_map(out, service, start, kind, run, guard):
    leaf = names.rules_map_file(service.name, start)
    out.request.append(f"# rules {run[0].name} .. {run[-1].name}: {len(run)} {kind} rules as one map lookup")
    out.maps[leaf] = "".join(f"{key} {backend}\n" for key, backend in _map_entries(kind, run))
    fetch = _FETCH[kind][0]
    lookup = f"{fetch},{_MAP_CONVERTER[kind]}({conf_file(leaf)})"
    out.request.append(f"http-request set-var({POOL_VAR}) {lookup}" + (f" if {guard}" if guard else ""))
    out.routes = True


def _compile_rule(out, index, rule, guard):
    out.request.append(f"# rule {rule.name}")
    tests = []
    for j, cond in enumerate(rule.conditions):
        name = f"r{index}_{j}"
        for line in _acl_lines(name, cond):
            out.acls.append(line)
            out.fields[line] = f"rules/{rule.name}/conditions/{j}"
        tests.append(f"!{name}" if cond.negate else name)
    condition = " ".join(filter(None, [guard, *tests]))
    action = rule.action
    if action == "use_pool":
        out.request.append(f"http-request set-var({POOL_VAR}) str({names.backend(rule.pool)}) if {condition}")
        out.routes = True
    elif action == "redirect":
        location = log_format(rule.redirect_location)
        out.request.append(f"http-request redirect location {location} code {rule.redirect_code} if {condition}")
    elif action == "deny":
        out.request.append(f"http-request deny deny_status {rule.deny_status} if {condition}")
    elif action == "set_request_header":
        value = log_format(rule.header_value)
        out.request.append(f"http-request set-header {rule.header_name} {value} if {condition}")
    elif action == "remove_request_header":
        out.request.append(f"http-request del-header {rule.header_name} if {condition}")
    else:  # response headers: decide on the request, act on the response
        var = f"txn.fulcrum_rh{index}"
        out.request.append(f"http-request set-var({var}) bool(1) if {condition}")
        if action == "set_response_header":
            value = log_format(rule.header_value)
            line = f"http-response set-header {rule.header_name} {value}"
        else:
            line = f"http-response del-header {rule.header_name}"
        out.response.append(f"{line} if {{ var({var}) -m bool }}")
