"""What the benchmark measures: the listeners, pools, rule sets and files, as plain data.

Three systems serve the same jobs side by side in the lab's lb namespace, each on its own
block of VIPs so they can all run at once, with the daemons the appliance ships (Debian
13's, from shipped.py). A fourth column runs Fulcrum's configuration on the build host's
own HAProxy, to show what the version changes:

    system        VIPs                  configuration, daemon
    fulcrum       10.77.100.10 + i      Fulcrum's compiler (api/compiler), from a snapshot; shipped HAProxy
    haproxy       10.77.100.40 + i      hand-written HAProxy, as an expert would write it; shipped HAProxy
    nginx         10.77.100.70 + i      nginx as a reverse proxy (location blocks, upstream keepalive); shipped nginx
    fulcrum-host  10.77.100.100 + i     Fulcrum's compiler, as ``fulcrum``; the host's HAProxy

where ``i`` is the listener's index below. Everything here is pure: no processes, no files.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.harness.lab import SERVER_ADDRS, Lab

SYSTEMS = ("fulcrum", "haproxy", "nginx", "fulcrum-host")
SYSTEM_LABELS = {
    "fulcrum": "Fulcrum",
    "haproxy": "hand-written HAProxy",
    "nginx": "nginx",
    "fulcrum-host": "Fulcrum on the host's HAProxy",
}
VIP_BASE = {"fulcrum": 10, "haproxy": 40, "nginx": 70, "fulcrum-host": 100}
# The systems whose configuration Fulcrum's compiler writes, and which daemon runs each.
COMPILED = ("fulcrum", "fulcrum-host")
ON_HOST = ("fulcrum-host",)

# Pools after the seed-000 rule set (".gif -> 3 servers, .htm -> the other 3, anything
# else -> all 6"), scaled to the lab's three servers: the two halves overlap in s2.
POOLS = {"images": ("s1", "s2"), "pages": ("s2", "s3"), "all": ("s1", "s2", "s3")}
# Which servers may answer which content type once the rules have routed the request.
ROUTED_SERVERS = {"image/gif": frozenset(POOLS["images"]), "text/html": frozenset(POOLS["pages"])}
COOKIE_NAMES = {"images": "IMG", "pages": "PAGE"}
# In the persistence row, one request in this many comes from a new visitor (no cookie):
# the proxy balances it and inserts a cookie; the others carry a valid one.
NEW_VISITOR_EVERY = 10

RULE_COUNTS = (3, 50, 5000)
# seed 003: response sizes for connections per second.
CPS_SIZES = (64, 512, 2048, 45056, 102400, 1048576)
# seed 001: a 1 KiB object for the multiplexing test.
MUX_OBJECT_SIZE = 1024
SIZED_FILE_PREFIX = "/wb/size-"

TLS_KEY_TYPES = ("rsa", "ecdsa")
TLS_KEY_LABELS = {"rsa": "RSA-2048", "ecdsa": "ECDSA P-256"}

# Fulcrum's "capped" multiplexing pool and the hand-written equivalent.
MUX_CAPPED_REUSE = "always"
MUX_CAPPED_IDLE_PER_SERVER = 4
NGINX_UPSTREAM_KEEPALIVE = 32  # idle connections per upstream group and worker


@dataclass(frozen=True)
class Listener:
    """One VIP:port that every system (or only Fulcrum) serves."""

    name: str
    index: int
    port: int = 80
    rules: int = 0  # total rules as the seed counts them, default pool included; 0 = none
    cookies: bool = False
    tls: str = ""  # "" = plain HTTP; else a TLS_KEY_TYPES entry
    client_certs: bool = False
    mux: bool = False
    fulcrum_only: bool = False


LISTENERS = (
    Listener("l7-3", 0, rules=3),
    Listener("l7-50", 1, rules=50),
    Listener("l7-5000", 2, rules=5000),
    Listener("cookie", 3, rules=3, cookies=True),
    Listener("plain", 4),
    Listener("tls-rsa", 5, port=443, tls="rsa"),
    Listener("tls-rsa-client", 6, port=443, tls="rsa", client_certs=True),
    Listener("tls-ecdsa", 7, port=443, tls="ecdsa"),
    Listener("tls-ecdsa-client", 8, port=443, tls="ecdsa", client_certs=True),
    Listener("mux", 9, mux=True),
    Listener("mux-default", 10, mux=True, fulcrum_only=True),
)
LISTENER = {listener.name: listener for listener in LISTENERS}


def listeners_of(system: str) -> tuple[Listener, ...]:
    return tuple(x for x in LISTENERS if system in COMPILED or not x.fulcrum_only)


def vip(system: str, listener: Listener) -> str:
    return Lab.vip(VIP_BASE[system] + listener.index)


def url(system: str, listener: Listener) -> str:
    scheme = "https" if listener.tls else "http"
    return f"{scheme}://{vip(system, listener)}" + (f":{listener.port}" if listener.port not in (80, 443) else "")


def non_matching_prefixes(rules: int) -> list[str]:
    """The rules that never match a WebBench URL: all but .gif, .htm and the default pool."""
    return [f"/app{i:04d}/" for i in range(max(0, rules - 3))]


def sized_path(size: int) -> str:
    return f"{SIZED_FILE_PREFIX}{size}.bin"


def sized_files() -> dict[str, int]:
    """Extra files the servers need (URL path -> size): seed 003 sizes and the mux object."""
    return {sized_path(size): size for size in (*CPS_SIZES, MUX_OBJECT_SIZE)}


def sized_file_content(size: int) -> bytes:
    return (b"fulcrum bench\n" * (size // 14 + 1))[:size]


def member_address(name: str) -> str:
    return SERVER_ADDRS[name]


def mux_timeout_ms(think_ms: int) -> int:
    """Client keep-alive timeout of the multiplexing listeners: outlives the longest think."""
    return max(10_000, 2 * think_ms + 10_000)


def format_size(size: int) -> str:
    for unit, factor in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} B"
