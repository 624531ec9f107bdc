"""What the node agents observe: traffic over the last hour and each member's health.

Telemetry is not configuration: it is never part of a revision, a backup or a restore, and
it goes with the node, service or member it describes. Every time stored here is the API's
own clock when the report arrived, never the agent's.
"""

from datetime import timedelta

from django.db import models

from telemetry.choices import HealthStatus

# Traffic samples are kept a little longer than the longest graph (60 minutes) so that the
# first bucket of a 5-minute step, aligned before the window, is still whole.
SAMPLES_KEPT = timedelta(minutes=65)
EVENTS_KEPT = timedelta(days=7)
EVENTS_PER_MEMBER = 200
CHECK_MAX = 32
DETAIL_MAX = 1000


class TrafficSample(models.Model):
    """One node's traffic figures for one virtual service or one member over ``interval_s``."""

    node = models.ForeignKey("cluster.Node", on_delete=models.CASCADE, related_name="+")
    at = models.DateTimeField(help_text="When the API received the report.")
    interval_s = models.PositiveSmallIntegerField(help_text="Seconds the counts cover.")
    # Indexed with ``at`` below (db_index off: a second index on the column alone only slows writes).
    service = models.ForeignKey(
        "services.VirtualService", null=True, blank=True, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    member = models.ForeignKey(
        "services.Member", null=True, blank=True, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    connections = models.BigIntegerField(help_text="Current connections when reported (a gauge).")
    requests = models.BigIntegerField(help_text="Requests (layer 7) or new connections (layer 4) in the interval.")
    errors = models.BigIntegerField(help_text="Request errors and 5xx answers in the interval (layer 7).")
    bytes_in = models.BigIntegerField()
    bytes_out = models.BigIntegerField()

    class Meta:
        verbose_name = "traffic sample"
        verbose_name_plural = "traffic samples"
        indexes = [
            models.Index(fields=["service", "at"], name="trafficsample_service_at"),
            models.Index(fields=["member", "at"], name="trafficsample_member_at"),
            models.Index(fields=["at"], name="trafficsample_at"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(service__isnull=True) ^ models.Q(member__isnull=True),
                name="trafficsample_service_xor_member",
            )
        ]

    def __str__(self):
        return f"{self.at} {self.node_id}: {self.service_id or self.member_id}"


class HealthFields(models.Model):
    """The result of a member's last check, as a node reported it."""

    status = models.CharField(max_length=16, choices=HealthStatus.choices)
    # Not ``check``: that would hide Model.check() (Django's system checks). The API says ``check``.
    check_status = models.CharField(
        max_length=CHECK_MAX, blank=True, help_text="HAProxy's check_status word (L7OK, L4CON, L4TOUT...)."
    )
    detail = models.CharField(max_length=DETAIL_MAX, blank=True, help_text="The check's own words.")
    code = models.PositiveSmallIntegerField(null=True, blank=True, help_text="HTTP status of the last check.")
    latency_ms = models.PositiveIntegerField(null=True, blank=True, help_text="How long the last check took.")

    class Meta:
        abstract = True


class MemberHealth(HealthFields):
    """A member's current health as one node sees it (one row per member and node)."""

    member = models.ForeignKey(
        "services.Member", on_delete=models.CASCADE, related_name="health", db_index=False
    )  # the unique (member, node) index serves
    node = models.ForeignKey("cluster.Node", on_delete=models.CASCADE, related_name="+")
    checked_at = models.DateTimeField(help_text="When the node last reported it.")
    since = models.DateTimeField(help_text="When the status last changed.")
    last_failure = models.TextField(blank=True, help_text="The check's words when the member last failed.")
    last_failure_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "member health"
        verbose_name_plural = "member health"
        constraints = [models.UniqueConstraint(fields=["member", "node"], name="memberhealth_unique_member_node")]

    def __str__(self):
        return f"{self.member_id} on {self.node_id}: {self.status}"


class HealthEvent(HealthFields):
    """A change of a member's status on one node (the first report counts as one)."""

    member = models.ForeignKey(
        "services.Member", on_delete=models.CASCADE, related_name="+", db_index=False
    )  # the (member, -at) index serves
    node = models.ForeignKey("cluster.Node", on_delete=models.CASCADE, related_name="+")
    at = models.DateTimeField(help_text="When the API received the report that showed the change.")
    previous = models.CharField(
        max_length=16, blank=True, choices=HealthStatus.choices, help_text="The status before; empty for the first."
    )

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name = "health event"
        verbose_name_plural = "health events"
        indexes = [
            models.Index(fields=["member", "-at"], name="healthevent_member_at"),
            models.Index(fields=["at"], name="healthevent_at"),
        ]

    def __str__(self):
        return f"{self.at} {self.member_id} on {self.node_id}: {self.previous or '-'} -> {self.status}"
