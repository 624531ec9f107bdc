"""Choice lists for the services app; the words come from compiler.rules."""

from django.db import models


class Protocol(models.TextChoices):
    HTTP = "http", "HTTP (layer 7)"
    HTTPS = "https", "HTTPS (TLS offload, layer 7)"
    TCP = "tcp", "TCP (layer 4 proxy)"


class Algorithm(models.TextChoices):
    ROUND_ROBIN = "round-robin", "Round robin (weights ignored)"
    WEIGHTED_ROUND_ROBIN = "weighted-round-robin", "Weighted round robin"
    LEAST_CONNECTIONS = "least-connections", "Least connections (weighted)"
    SOURCE_HASH = "source-hash", "Source address hash"


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


def choices(words, labels=None):
    """Django choices from one of compiler.rules' word tuples."""
    labels = labels or {}
    return [(w, labels.get(w, str(w).replace("_", " ").capitalize())) for w in words]
