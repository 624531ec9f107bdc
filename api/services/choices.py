"""Choice lists for the services app; the words come from compiler.rules."""

from django.db import models


class Protocol(models.TextChoices):
    HTTP = "http", "HTTP (layer 7)"
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
    HTTP = "http", "HTTP GET"
