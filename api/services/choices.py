"""Choice lists for the services app; the words come from compiler.rules."""

from django.db import models

from compiler import rules


class Protocol(models.TextChoices):
    HTTP = "http", "HTTP (layer 7)"
    HTTPS = "https", "HTTPS (TLS offload, layer 7)"
    TCP = "tcp", "TCP (HAProxy TCP proxy, or layer 4 with IPVS forwarding)"
    UDP = "udp", "UDP (layer 4, IPVS forwarding only)"


class Algorithm(models.TextChoices):
    ROUND_ROBIN = "round-robin", "Round robin (weights ignored)"
    WEIGHTED_ROUND_ROBIN = "weighted-round-robin", "Weighted round robin"
    LEAST_CONNECTIONS = "least-connections", "Least connections (weighted)"
    LEAST_CONNECTIONS_UNWEIGHTED = "least-connections-unweighted", "Least connections, weights ignored (layer 4)"
    SOURCE_HASH = "source-hash", "Source address hash"
    MAGLEV_HASH = "maglev-hash", "Maglev consistent hash (layer 4)"
    SHORTEST_EXPECTED_DELAY = "shortest-expected-delay", "Shortest expected delay (layer 4)"
    NEVER_QUEUE = "never-queue", "Never queue (layer 4)"
    DYNAMIC_LEAST_LOAD = "dynamic-least-load", "Dynamic least load and connection, DLLC"


class MemberState(models.TextChoices):
    ENABLED = "enabled", "Enabled"
    DRAIN = "drain", "Drain (no new connections, sessions kept)"
    DISABLED = "disabled", "Disabled (maintenance)"


class CheckType(models.TextChoices):
    TCP = "tcp", "TCP connect"
    HTTP = "http", "HTTP request"
    HTTPS = "https", "HTTPS request"
    AGENT = "agent", "Agent check (load agent on the member)"
    PING = "ping", "Ping (ICMP echo)"
    DNS = "dns", "DNS query (layer 4)"
    SCRIPT = "script", "Script on the balancer (layer 4)"


class Forwarding(models.TextChoices):
    PROXY = "proxy", "Proxy (HAProxy)"
    NAT = "nat", "NAT (IPVS masquerading; replies return through the balancer)"
    DIRECT_ROUTING = "direct-routing", "Direct routing (IPVS; same network, VIP on the servers' loopback)"
    TUNNEL = "tunnel", "IP-in-IP tunnel (IPVS; VIP on the servers' tunl0)"


def choices(words, labels=None):
    """Django choices from one of compiler.rules' word tuples."""
    labels = labels or {}
    return [(w, labels.get(w, str(w).replace("_", " ").capitalize())) for w in words]


# A member's own IPVS forwarding method, or its service's (the OpenAPI schema names this set).
MEMBER_FORWARDING = choices(rules.MEMBER_FORWARDING, {"": "The service's method"})
