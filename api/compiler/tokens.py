"""API words to daemon tokens: the tables made from compiler.catalog, and the daemons' own
sets and presets."""

from compiler import catalog

HAPROXY_BALANCE = catalog.tokens(catalog.ALGORITHMS, "haproxy")

# IPVS schedulers (ip_vs_<name> kernel modules). ``dllc`` is Fulcrum's own module, which
# keepalived does not know: keepalived.conf names KEEPALIVED_FALLBACK instead and the node
# agent sets the kernel scheduler itself (see keepalived.d/ipvs.json).
IPVS_SCHEDULER = catalog.tokens(catalog.ALGORITHMS, "ipvs")
KEEPALIVED_SCHEDULERS = frozenset(
    {"rr", "wrr", "lc", "wlc", "lblc", "sh", "mh", "dh", "fo", "ovf", "lblcr", "sed", "nq"}
)
KEEPALIVED_FALLBACK = "wlc"
HASH_SCHEDULERS = frozenset({"sh", "mh"})  # take the port / fallback flags

# keepalived's words for the forwarding methods.
IPVS_METHOD = catalog.tokens(catalog.FORWARDING, "ipvs")

# Plain round robin ignores operator weights (as F5's "Round Robin" ignores ratios);
# every other algorithm honours them.
ALGORITHMS_WITH_WEIGHTS = frozenset(HAPROXY_BALANCE) - {"round-robin"}

# HAProxy's proxy mode for each listener protocol (https is TLS offload in front of http).
HAPROXY_MODE = {"http": "http", "https": "http", "tcp": "tcp"}

_TLS13_SUITES = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"

# TLS presets after Mozilla's server-side guidelines (DHE left out: every client that
# has it also has ECDHE). "legacy" lowers OpenSSL's security level so TLS 1.0/1.1 clients
# can still connect where the OpenSSL build allows it.
TLS_POLICIES = {
    "modern": {"min": "TLSv1.3", "ciphers": "", "ciphersuites": _TLS13_SUITES},
    "intermediate": {
        "min": "TLSv1.2",
        "ciphers": "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
        "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305",
        "ciphersuites": _TLS13_SUITES,
    },
    "legacy": {
        "min": "TLSv1.0",
        "ciphers": "ECDHE+AESGCM:ECDHE+CHACHA20:ECDHE+AES:AES:!aNULL:!eNULL:!MD5:!RC4:!3DES:@SECLEVEL=0",
        "ciphersuites": _TLS13_SUITES,
    },
}
