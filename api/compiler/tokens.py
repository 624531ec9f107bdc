"""The one table from API words to HAProxy tokens."""

HAPROXY_BALANCE = {
    "round-robin": "roundrobin",
    "weighted-round-robin": "roundrobin",
    "least-connections": "leastconn",
    "source-hash": "source",
}

# Plain round robin ignores operator weights (as F5's "Round Robin" ignores ratios);
# every other algorithm honours them.
ALGORITHMS_WITH_WEIGHTS = frozenset(HAPROXY_BALANCE) - {"round-robin"}

HAPROXY_MODE = {"http": "http", "tcp": "tcp"}
