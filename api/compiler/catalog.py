"""The catalogue of choices: every word an operator picks from a list, once.

Each choice has the API's word, the label people read, the layers that have it (``proxy``:
HAProxy, ``ipvs``: IPVS through keepalived) and, where the word becomes one, the daemon's
token. Everything else is made from here: compiler.rules' word lists, compiler.tokens'
tables, the Django choices (services.choices), the OpenAPI schema's ``x-fulcrum-catalog``
and the console's generated module (webui/src/lib/api/catalog.gen.ts, ``make openapi``),
so a new algorithm or check type is one line below.
"""

from dataclasses import dataclass

PROXY, IPVS = "proxy", "ipvs"
BOTH = (PROXY, IPVS)


@dataclass(frozen=True)
class Choice:
    word: str
    label: str
    layers: tuple[str, ...] = BOTH
    haproxy: str = ""  # HAProxy's token for it, where there is one
    ipvs: str = ""  # IPVS's (the scheduler's kernel module, keepalived's forwarding word)


ALGORITHMS = (
    Choice("round-robin", "Round robin (weights ignored)", BOTH, "roundrobin", "rr"),
    Choice("weighted-round-robin", "Weighted round robin", BOTH, "roundrobin", "wrr"),
    Choice("least-connections", "Least connections (weighted)", BOTH, "leastconn", "wlc"),
    Choice("least-connections-unweighted", "Least connections, weights ignored (layer 4)", (IPVS,), ipvs="lc"),
    Choice("source-hash", "Source address hash", BOTH, "source", "sh"),
    Choice("maglev-hash", "Maglev consistent hash (layer 4)", (IPVS,), ipvs="mh"),
    Choice("shortest-expected-delay", "Shortest expected delay (layer 4)", (IPVS,), ipvs="sed"),
    Choice("never-queue", "Never queue (layer 4)", (IPVS,), ipvs="nq"),
    # DLLC for HAProxy: fulcrum-loadd's agent-check sets each server's weight to a share
    # inversely proportional to its load, so leastconn's connections / weight is DLLC's
    # connections * load / weight (agents/internal/dllc). For IPVS, Fulcrum's own module.
    Choice("dynamic-least-load", "Dynamic least load and connection (DLLC)", BOTH, "leastconn", "dllc"),
)

CHECK_TYPES = (
    Choice("tcp", "TCP connect"),
    Choice("http", "HTTP request"),
    Choice("https", "HTTPS request"),
    Choice("agent", "Agent check (load agent on the member)", (PROXY,)),
    Choice("ping", "Ping (ICMP echo)"),
    Choice("dns", "DNS query (layer 4)", (IPVS,)),
    Choice("script", "Script on the balancer (layer 4)", (IPVS,)),
)

PERSISTENCE_TYPES = (
    Choice("none", "None"),
    Choice("cookie_insert", "Cookie inserted by the balancer", (PROXY,)),
    Choice("cookie_rewrite", "Rewrite the application's cookie", (PROXY,)),
    Choice("cookie_prefix", "Prefix the application's cookie", (PROXY,)),
    Choice("app_cookie", "Learn the application's session cookie", (PROXY,)),
    Choice("source", "Client source address"),
    Choice("ssl_session_id", "TLS session ID (TCP services)", (PROXY,)),
    Choice("header", "Request header", (PROXY,)),
)

PROTOCOLS = (
    Choice("http", "HTTP (layer 7)", (PROXY,)),
    Choice("https", "HTTPS (TLS offload, layer 7)", (PROXY,)),
    Choice("tcp", "TCP (HAProxy TCP proxy, or layer 4 with IPVS forwarding)"),
    Choice("udp", "UDP (layer 4, IPVS forwarding only)", (IPVS,)),
)

FORWARDING = (
    Choice("proxy", "Proxy (HAProxy)", (PROXY,)),
    Choice("nat", "NAT (IPVS masquerading; replies return through the balancer)", (IPVS,), ipvs="NAT"),
    Choice(
        "direct-routing",
        "Direct routing (IPVS; same network, VIP on the servers' loopback)",
        (IPVS,),
        ipvs="DR",
    ),
    Choice("tunnel", "IP-in-IP tunnel (IPVS; VIP on the servers' tunl0)", (IPVS,), ipvs="TUN"),
)

MEMBER_STATES = (
    Choice("enabled", "Enabled"),
    Choice("drain", "Drain (no new connections, sessions kept)"),
    Choice("disabled", "Disabled (maintenance)"),
)

HTTP_REUSE = (
    Choice("never", "Never", (PROXY,)),
    Choice("safe", "Safe (first request of a client on its own)", (PROXY,)),
    Choice("aggressive", "Aggressive", (PROXY,)),
    Choice("always", "Always", (PROXY,)),
)

PROXY_PROTOCOLS = (
    Choice("none", "None", (PROXY,)),
    Choice("v1", "PROXY protocol v1 (text)", (PROXY,)),
    Choice("v2", "PROXY protocol v2 (binary)", (PROXY,)),
)

ON_FAILURE = (
    Choice("remove", "Remove the member", (IPVS,)),
    Choice("quiesce", "Quiesce (weight 0, connections kept)", (IPVS,)),
)

# The catalogue by the name the schema and the console know it by.
CATALOG = {
    "algorithm": ALGORITHMS,
    "check_type": CHECK_TYPES,
    "persistence_type": PERSISTENCE_TYPES,
    "protocol": PROTOCOLS,
    "forwarding": FORWARDING,
    "member_state": MEMBER_STATES,
    "http_reuse": HTTP_REUSE,
    "proxy_protocol": PROXY_PROTOCOLS,
    "on_failure": ON_FAILURE,
}


def words(choices, layer=None):
    """The words of ``choices`` (those ``layer`` has, given one), in the catalogue's order."""
    return tuple(c.word for c in choices if layer is None or layer in c.layers)


def labels(choices):
    """Django's (word, label) pairs."""
    return [(c.word, c.label) for c in choices]


def tokens(choices, daemon):
    """{word: token} of the choices ``daemon`` ("haproxy" or "ipvs") has a token for."""
    return {c.word: getattr(c, daemon) for c in choices if getattr(c, daemon)}


def exported():
    """The catalogue as JSON, for the schema and the console: {kind: [{value, label, layers}]}."""
    return {
        kind: [{"value": c.word, "label": c.label, "layers": list(c.layers)} for c in choices]
        for kind, choices in CATALOG.items()
    }
