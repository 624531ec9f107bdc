"""Choice lists for the telemetry app."""

from django.db import models


class HealthStatus(models.TextChoices):
    """A member's state as one node's checks see it (HAProxy's words, keepalived's mapped to them)."""

    UP = "up"
    DOWN = "down"
    DRAIN = "drain"
    MAINT = "maint", "Maintenance"
    UNCHECKED = "unchecked", "Not checked"


class ServiceState(models.TextChoices):
    """A virtual service's state on the dashboard, from its members' fresh health."""

    UP = "up"
    DEGRADED = "degraded"
    DOWN = "down"
    DISABLED = "disabled"
    UNKNOWN = "unknown", "Unknown (no fresh health report)"


class NodeState(models.TextChoices):
    """A node's state on the dashboard, from when its agent last called and the operator's standby."""

    ONLINE = "online"
    OFFLINE = "offline", "Offline (its agent stopped calling)"
    STANDBY = "standby", "Standby (maintenance handover)"
    NEVER_SEEN = "never-seen", "Never seen (no agent has called yet)"
