"""The frozen, typed form of a revision's JSON snapshot: the compiler's input contract.

``snapshot_from_dict`` only checks shape (keys and types) and fills defaults;
``verify`` checks meaning. Every optional field has the default an operator gets when
they leave it out, so old snapshots keep compiling as the model grows.

Secrets are not part of a snapshot: a certificate appears by name and fingerprint, and
its PEM (with the private key) is handed to the renderer separately.
"""

import dataclasses
import functools
import types
import typing
from dataclasses import MISSING, dataclass, fields, is_dataclass
from functools import cached_property

from compiler import rules
from compiler.errors import VerifyError


@dataclass(frozen=True)
class HealthCheck:
    # tcp: connect; http / https: a request and its answer; agent: HAProxy agent-check
    # protocol on agent_port; ping: ICMP echo through an external check.
    type: str
    interval_ms: int
    timeout_ms: int
    rise: int
    fall: int
    method: str = "GET"
    path: str = "/"
    expected_status: int = 200
    host: str = ""
    # Body match: "" = none; match "string" or "regex" against expect_body.
    expect_body: str = ""
    expect_body_match: str = "string"  # string | regex | digest (layer 4: MD5 of the page)
    agent_port: int = 0
    # After a failure, probe at this interval until the state settles (HAProxy fastinter,
    # keepalived delay_before_retry); 0 = interval_ms.
    retry_interval_ms: int = 0
    # Layer 4 (keepalived): alpha = real servers start down until a check passes; omega =
    # run down-notifications when keepalived stops.
    alpha: bool = False
    omega: bool = False
    dns_type: str = "SOA"  # dns: query type and name; the check passes on an answer
    dns_name: str = "."
    # script: program (under CHECK_SCRIPT_DIRS) and arguments; it is run per member with the
    # member's address and port before those arguments; exit 0 = up
    script: str = ""
    script_dynamic: bool = False  # script: exit status 2..255 sets the weight to status - 2


@dataclass(frozen=True)
class Member:
    name: str
    address: str
    port: int
    weight: int
    # enabled | drain (no new clients, persisted ones stay) | disabled (maintenance)
    state: str
    backup: bool = False  # serves only when no active member is up (sorry server)
    max_connections: int = 0  # 0 = unlimited; beyond it requests queue
    max_queue: int = 0  # 0 = unlimited queue for this member
    slowstart_ms: int = 0  # ramp weight up over this time after coming back
    min_connections: int = 0  # layer 4: back in rotation below this after max_connections; 0 = off
    forwarding: str = ""  # layer 4: nat | direct-routing | tunnel; "" = the service's method
    loopback: bool = False  # a service on each node itself: a loopback address is allowed


@dataclass(frozen=True)
class Persistence:
    # none | cookie_insert | cookie_rewrite | cookie_prefix | app_cookie | source
    # | ssl_session_id | header
    type: str = "none"
    cookie_name: str = "SERVERID"
    indirect: bool = True
    nocache: bool = True
    httponly: bool = True
    secure: bool = False
    max_idle_s: int = 0  # 0 = no limit
    max_life_s: int = 0
    header_name: str = ""
    timeout_s: int = 1800  # stick-table expiry for app_cookie, source, ssl_session_id, header
    ipv4_mask: int = 32
    ipv6_mask: int = 128
    table_size: int = 100_000
    # ssl_session_id only: balance by source hash so a TLS 1.3 client (no usable
    # session ID) still lands on the same server.
    fallback_source: bool = False


@dataclass(frozen=True)
class Pool:
    name: str
    algorithm: str
    members: tuple[Member, ...]
    health_check: HealthCheck | None = None
    persistence: Persistence = Persistence()
    http_reuse: str = rules.HTTP_REUSE_DEFAULT  # never | safe | aggressive | always
    pool_max_conn: int = -1  # idle connections kept per member; -1 = unlimited
    pool_purge_delay_ms: int = 5000
    # Re-encryption to members.
    tls: bool = False
    tls_verify: bool = True
    tls_ca: str = ""  # certificate name whose chain verifies the members
    tls_sni: str = ""  # "" = none; a host name; or "@host" to forward the client's Host
    proxy_protocol: str = "none"  # none | v1 | v2
    connect_timeout_ms: int = 5000
    server_timeout_ms: int = 30000
    queue_timeout_ms: int = 30000
    # Served (503) when no member can take the request; "" = HAProxy's own page.
    maintenance_page: str = ""
    # Layer 4: source-hash / maglev-hash also hash the source port, and skip a member
    # that is unavailable (weight 0) instead of failing the connection (always on while a
    # member is drained or failed members are quiesced).
    hash_port: bool = False
    hash_fallback: bool = False
    on_failure: str = "remove"  # layer 4: remove | quiesce (keep with weight 0)
    # dynamic-least-load: fulcrum-loadd's ports on every member, and HAProxy's agent interval.
    feedback_agent_port: int = rules.FEEDBACK_AGENT_PORT
    feedback_http_port: int = rules.FEEDBACK_HTTP_PORT
    feedback_interval_ms: int = 1000


@dataclass(frozen=True)
class Condition:
    # path_prefix | path_suffix | path_extension | path_contains | path_regex
    # | host_exact | host_suffix | host_wildcard | header_present | header_equals
    # | header_regex | cookie_present | cookie_equals | query_present | query_equals
    # | method | source_cidr
    kind: str
    values: tuple[str, ...] = ()  # any of them matches; empty for *_present
    name: str = ""  # the header, cookie or query parameter name
    negate: bool = False


@dataclass(frozen=True)
class Rule:
    name: str
    conditions: tuple[Condition, ...]
    # use_pool | redirect | deny | set_request_header | remove_request_header
    # | set_response_header | remove_response_header
    action: str
    pool: str = ""
    redirect_code: int = 302
    redirect_location: str = ""
    deny_status: int = 403
    header_name: str = ""
    header_value: str = ""
    enabled: bool = True


@dataclass(frozen=True)
class ErrorPage:
    status: int
    body: str
    content_type: str = "text/html"


@dataclass(frozen=True)
class RateLimit:
    requests: int
    period_s: int = 10


@dataclass(frozen=True)
class VirtualService:
    name: str
    vip: str
    port: int
    protocol: str  # http | https (TLS offload, mode http) | tcp | udp
    enabled: bool
    default_pool: str
    # proxy (HAProxy) | nat | direct-routing | tunnel (IPVS through keepalived)
    forwarding: str = "proxy"
    port_end: int = 0  # layer 4: a port range port..port_end (a firewall-mark service); 0 = one port
    one_packet_scheduling: bool = False  # layer 4 UDP: schedule every datagram on its own
    rules: tuple[Rule, ...] = ()
    # TLS (https): the first certificate is the default, SNI picks among all.
    certificates: tuple[str, ...] = ()
    tls_policy: str = "intermediate"  # modern | intermediate | legacy
    client_auth: str = "none"  # none | optional | required
    client_ca: str = ""  # certificate name holding the CA bundle
    alpn_h2: bool = True
    hsts_max_age_s: int = 0  # 0 = no Strict-Transport-Security header
    redirect_https: bool = False  # http: answer every request with a redirect to https
    # Protection and plumbing.
    allow_cidrs: tuple[str, ...] = ()  # empty = everyone
    deny_cidrs: tuple[str, ...] = ()
    rate_limit: RateLimit | None = None  # per source address, answers 429
    conn_limit: int = 0  # concurrent connections per source address; 0 = off
    max_connections: int = 0  # whole listener; 0 = HAProxy's default
    max_body_bytes: int = 0  # 0 = no limit; over it answers 413
    compression: bool = False
    compression_types: tuple[str, ...] = ("text/html", "text/plain", "text/css", "application/json")
    forwarded: str = "x-forwarded-for"  # none | x-forwarded-for | forwarded | both
    client_timeout_ms: int = 30000
    http_request_timeout_ms: int = 10000  # whole request headers; slow-client guard
    keep_alive_timeout_ms: int = 10000
    error_pages: tuple[ErrorPage, ...] = ()

    @property
    def ipvs(self):
        """True for a layer-4 service forwarded by IPVS rather than proxied by HAProxy."""
        return self.forwarding != "proxy"

    @property
    def last_port(self):
        return self.port_end or self.port


@dataclass(frozen=True)
class Certificate:
    name: str
    fingerprint: str  # SHA-256 of the DER certificate, lower-case hex
    has_key: bool = True  # False: a CA bundle, usable only for verification


@dataclass(frozen=True)
class IpvsSync:
    """IPVS connection synchronisation between balancers (keepalived's lvs_sync_daemon)."""

    interface: str
    sync_id: int = 0
    port: int = 8848
    ttl: int = 1
    max_packet: int = 0  # 0 = the kernel's choice (from the MTU)
    group: str = ""  # multicast group; "" = 224.0.0.81
    # The HA group whose master sends the connection table and whose backups receive it;
    # "" = both daemons on every node.
    ha_group: str = ""


@dataclass(frozen=True)
class Node:
    """An appliance node as HA sees it; node-specific values live here, never in a group."""

    name: str
    address: str = ""  # its own address on the HA segment: VRRP unicast source, HAProxy peer
    standby: bool = False  # an operator asked it to give up every master role


@dataclass(frozen=True)
class HaNode:
    """A node's place in an HA group: its own priority, and its interface when it differs."""

    node: str
    priority: int
    interface: str = ""  # "" = the group's


@dataclass(frozen=True)
class HaGroup:
    """A VRRP instance: the VIPs that move together between the nodes of the group."""

    name: str
    vrid: int
    vips: tuple[str, ...]  # address or address/prefix, one family
    nodes: tuple[HaNode, ...]
    interface: str = "eth0"
    version: int = 3  # VRRPv3 allows sub-second adverts; v2 allows a password
    advert_interval_ms: int = 1000
    preempt: bool = True  # a returning higher-priority node takes the master role back
    preempt_delay_s: int = 0
    auth_password: str = ""  # VRRPv2 only (PASS); cleartext on the wire
    track_haproxy: bool = True  # give up the master role when HAProxy is not running
    track_interfaces: tuple[str, ...] = ()
    witness: str = ""  # an address that must answer ping, or the node does not claim the VIPs
    garp_refresh_s: int = 60  # the master repeats gratuitous ARP / unsolicited NA; 0 = only on takeover
    garp_repeat: int = 3


@dataclass(frozen=True)
class Snapshot:
    revision: int
    virtual_services: tuple[VirtualService, ...]
    pools: tuple[Pool, ...]
    certificates: tuple[Certificate, ...] = ()
    ipvs_sync: IpvsSync | None = None
    nodes: tuple[Node, ...] = ()
    ha_groups: tuple[HaGroup, ...] = ()

    def pool(self, name):
        return self._named["pools"].get(name)

    def certificate(self, name):
        return self._named["certificates"].get(name)

    def node(self, name):
        return self._named["nodes"].get(name)

    @cached_property
    def _named(self):
        """{section: {name: the first item of that name}}, made once: a lookup costs the same
        at 10 and at 20,000 pools."""
        index = {}
        for section in ("pools", "certificates", "nodes"):
            named = index[section] = {}
            for item in getattr(self, section):
                named.setdefault(item.name, item)
        return index

    def groups_of(self, node):
        """The HA groups ``node`` (a name) belongs to, with its own entry in each."""
        return [(g, e) for g in self.ha_groups for e in g.nodes if e.node == node]


# Converting a snapshot's JSON runs once per field of every object (10,000 services: about a
# million values), so each annotation's converter is made once, and a value's path (which
# only an error names) is kept as (parent path, label) and joined only then.


def _path(path):
    """A lazy path as the API names it: "pools/web/members/s1/port"."""
    if isinstance(path, str):
        return path
    parent, label = path
    return f"{_path(parent)}/{label}"


def _refuse(path, message):
    raise VerifyError([(_path(path), message)])


@functools.cache
def _converter(annotation):
    """A function (value, path) -> ``value`` as ``annotation`` (a scalar, dataclass, tuple of
    them, or X | None), raising VerifyError at ``path``."""
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        (inner,) = [a for a in typing.get_args(annotation) if a is not type(None)]
        convert = _converter(inner)
        return lambda value, path: None if value is None else convert(value, path)
    if origin is tuple:
        convert = _converter(typing.get_args(annotation)[0])

        def as_tuple(value, path):
            if not isinstance(value, list | tuple):
                _refuse(path, f"expected a list, got {type(value).__name__}")
            return tuple(convert(item, (path, _label(item, i))) for i, item in enumerate(value))

        return as_tuple
    if is_dataclass(annotation):
        return _builder(annotation)

    def scalar(value, path):
        # bool is an int in Python; a snapshot must not confuse the two.
        if not isinstance(value, annotation) or (annotation is int and isinstance(value, bool)):
            _refuse(path, f"expected {annotation.__name__}, got {type(value).__name__}")
        return value

    return scalar


def _scalar(annotation):
    """(type, None allowed) of a scalar field, X or X | None; None for any other field."""
    nullable = typing.get_origin(annotation) in (types.UnionType, typing.Union)
    inner = _unwrap_optional(annotation)
    if typing.get_origin(inner) is not None or is_dataclass(inner):
        return None
    return inner, nullable


def _builder(cls):
    """The converter of dataclass ``cls``: its fields' converters, made once. A scalar field's
    value (most of them) is checked here rather than by its converter: the same test, without
    a call and a path for each of a million values."""
    known = {
        f.name: (_converter(f.type), f.default is MISSING and f.default_factory is MISSING, _scalar(f.type))
        for f in fields(cls)
    }

    def build(data, path):
        if not isinstance(data, dict):
            _refuse(path, f"expected an object, got {type(data).__name__}")
        if not data.keys() <= known.keys():
            _refuse(path, f"unknown field(s): {', '.join(sorted(data.keys() - known.keys()))}")
        values = {}
        for name, (convert, required, scalar) in known.items():  # in the dataclass's order: its first problem
            if name in data:
                value = data[name]
                # Not a scalar, or not one of its exact type (a subclass, a wrong type): the converter decides.
                if scalar is None or (type(value) is not scalar[0] and not (value is None and scalar[1])):
                    value = convert(value, (path, name))
                values[name] = value
            elif required:
                _refuse((path, name), "missing")
        return cls(**values)

    return build


def _convert(value, annotation, path):
    """``value`` as ``annotation``; a VerifyError at ``path`` if it is not one."""
    return _converter(annotation)(value, path)


def _build(cls, data, path):
    return _converter(cls)(data, path)


def _label(item, index):
    return item.get("name", index) if isinstance(item, dict) else index


# The sections of named objects, with the path prefix the API uses for them.
SECTIONS = {
    "virtual_services": "virtual-services",
    "pools": "pools",
    "certificates": "certificates",
    "nodes": "nodes",
    "ha_groups": "ha-groups",
}


def snapshot_from_dict(data):
    """Turn a snapshot's JSON (as stored in a Revision) into frozen dataclasses."""
    if not isinstance(data, dict):
        raise VerifyError([("", "a snapshot is a JSON object")])
    # Paths read like the API: virtual-services/web/rules/0/... rather than /virtual_services/...
    data = dict(data)
    built = {}
    for key, label in SECTIONS.items():
        items = data.pop(key, [])
        annotation = Snapshot.__dataclass_fields__[key].type
        built[key] = _convert(items, annotation, label) if items != [] else ()
    snap = _build(Snapshot, {**data, **{k: [] for k in SECTIONS}}, "")
    return dataclasses.replace(snap, **built)


NO_DEFAULT = object()


def _unwrap_optional(annotation):
    if typing.get_origin(annotation) in (types.UnionType, typing.Union):
        (annotation,) = [a for a in typing.get_args(annotation) if a is not type(None)]
    return annotation


def field_default(section, path):
    """The default of the field at ``path`` ("members/s1/weight") inside an object of snapshot
    ``section`` ("pools"), as JSON (a tuple as a list, a dataclass as an object), or NO_DEFAULT.
    Lists of objects are walked by entry name; an entry has no default of its own."""
    annotation = _unwrap_optional(Snapshot.__dataclass_fields__[section].type)
    if typing.get_origin(annotation) is tuple:
        annotation = typing.get_args(annotation)[0]  # the section's entries: path starts inside one
    default, segments = NO_DEFAULT, path.split("/")
    while segments:
        annotation = _unwrap_optional(annotation)
        if typing.get_origin(annotation) is tuple:
            annotation, default = typing.get_args(annotation)[0], NO_DEFAULT
            segments.pop(0)  # the entry's name
            continue
        field = annotation.__dataclass_fields__.get(segments.pop(0)) if is_dataclass(annotation) else None
        if field is None:
            return NO_DEFAULT
        if field.default is not MISSING:
            default = field.default
        elif field.default_factory is not MISSING:
            default = field.default_factory()
        else:
            default = NO_DEFAULT
        annotation = field.type
    if is_dataclass(default):
        return dataclasses.asdict(default)
    return list(default) if isinstance(default, tuple) else default
