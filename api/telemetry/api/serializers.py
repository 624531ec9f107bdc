"""Serializers for the agents' telemetry reports and for reading traffic and health back."""

from django.utils import timezone
from rest_framework import serializers

from cluster.models import VrrpState
from compiler import rules
from fulcrum.serializers import AgentReport, StrictSerializer
from revisions.api.serializers import RevisionSerializer
from telemetry.choices import HealthStatus, NodeState, ServiceState
from telemetry.models import CHECK_MAX, DETAIL_MAX, HealthEvent, MemberHealth
from telemetry.overview import FRESH

COUNT_MAX = 2**63 - 1  # a bigint column
LATENCY_MAX_MS = 2**31 - 1
ITEMS_MAX = 10_000
NAME_MAX = 63


# ---- agent -> API


class TrafficFiguresSerializer(StrictSerializer):
    """Traffic through one service or member on one node."""

    connections = serializers.IntegerField(min_value=0, max_value=COUNT_MAX, help_text="Current connections (gauge).")
    requests = serializers.IntegerField(
        min_value=0, max_value=COUNT_MAX, help_text="Requests (layer 7) or new connections (layer 4) in the interval."
    )
    errors = serializers.IntegerField(
        min_value=0,
        max_value=COUNT_MAX,
        help_text="Layer 7: request errors and 5xx answers in the interval; layer 4: 0.",
    )
    bytes_in = serializers.IntegerField(min_value=0, max_value=COUNT_MAX, help_text="In the interval.")
    bytes_out = serializers.IntegerField(min_value=0, max_value=COUNT_MAX, help_text="In the interval.")


class ServiceTrafficSerializer(AgentReport, TrafficFiguresSerializer):
    service = serializers.CharField(max_length=NAME_MAX, help_text="The virtual service's name.")


class HealthReportSerializer(AgentReport, StrictSerializer):
    """The result of a member's last health check on the node."""

    status = serializers.ChoiceField(choices=HealthStatus.choices)
    check = serializers.CharField(
        max_length=CHECK_MAX,
        allow_blank=True,
        required=False,
        default="",
        help_text='HAProxy\'s check_status word ("L7OK", "L4CON", "L7STS", "L4TOUT"...); "" if none.',
    )
    detail = serializers.CharField(
        max_length=DETAIL_MAX, allow_blank=True, required=False, default="", help_text='The check\'s words; "" if none.'
    )
    code = serializers.IntegerField(
        min_value=0,
        max_value=999,
        allow_null=True,
        required=False,
        default=None,
        help_text="HTTP status of the last check; null if none.",
    )
    latency_ms = serializers.IntegerField(
        min_value=0,
        max_value=LATENCY_MAX_MS,
        allow_null=True,
        required=False,
        default=None,
        help_text="How long the last check took; null if unknown.",
    )


class MemberTrafficSerializer(AgentReport, TrafficFiguresSerializer):
    pool = serializers.CharField(max_length=NAME_MAX)
    member = serializers.CharField(max_length=NAME_MAX)
    health = HealthReportSerializer()


class AgentTelemetrySerializer(AgentReport, StrictSerializer):
    """What an agent saw on its node over the last ``interval_s`` (sent every 10 s). Names that
    match no object are skipped. The counts are graphed at ``read_at`` when the API's clock finds
    it plausible, else at their arrival; health is dated by its arrival."""

    interval_s = serializers.IntegerField(min_value=1, max_value=300, help_text="Seconds the counts cover.")
    read_at = serializers.DateTimeField(
        required=False,
        default=None,
        allow_null=True,
        help_text="When the agent read the counts, by its clock: the end of the interval. A report that "
        "arrives late is still graphed where it was read; one the API's clock finds implausible "
        "(ahead of it, or older than the interval and a minute) is placed at its arrival.",
    )
    services = ServiceTrafficSerializer(many=True, max_length=ITEMS_MAX, required=False, default=list)
    members = MemberTrafficSerializer(many=True, max_length=ITEMS_MAX, required=False, default=list)


# ---- traffic over time


class PointSerializer(serializers.Serializer):
    t = serializers.DateTimeField(help_text="The start of the bucket.")
    connections = serializers.IntegerField(help_text="The nodes' latest gauges in the bucket, added.")
    requests_per_s = serializers.FloatField()
    errors_per_s = serializers.FloatField()
    bytes_in_per_s = serializers.FloatField()
    bytes_out_per_s = serializers.FloatField()


class SeriesSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    points = PointSerializer(many=True, help_text="Buckets with samples, oldest first; a missing bucket is a gap.")


class MetricsSerializer(serializers.Serializer):
    step_s = serializers.IntegerField()
    start = serializers.DateTimeField(help_text="The start of the first bucket.")
    end = serializers.DateTimeField(help_text="Now.")
    series = SeriesSerializer(many=True)


# ---- health


class HealthRowSerializer(serializers.ModelSerializer):
    """What a health row and a health event both show of their member and node."""

    member_name = serializers.CharField(source="member.name", read_only=True)
    pool = serializers.IntegerField(source="member.pool_id", read_only=True)
    pool_name = serializers.CharField(source="member.pool.name", read_only=True)
    node_name = serializers.CharField(source="node.name", read_only=True)
    check = serializers.CharField(
        source="check_status", read_only=True, help_text="HAProxy's check_status word; empty if none."
    )


class MemberHealthSerializer(HealthRowSerializer):
    """A member's health as one node last reported it."""

    stale = serializers.SerializerMethodField(
        help_text=f"The node has not reported it for more than {int(FRESH.total_seconds())} s."
    )

    class Meta:
        model = MemberHealth
        fields = [
            "member",
            "member_name",
            "pool",
            "pool_name",
            "node",
            "node_name",
            "status",
            "check",
            "detail",
            "code",
            "latency_ms",
            "checked_at",
            "since",
            "last_failure",
            "last_failure_at",
            "stale",
        ]
        read_only_fields = fields

    def get_stale(self, row) -> bool:
        return timezone.now() - row.checked_at > FRESH


class HealthEventSerializer(HealthRowSerializer):
    """A change of a member's status on one node, with the check's result that showed it."""

    previous = serializers.ChoiceField(
        choices=HealthStatus.choices,
        allow_blank=True,
        read_only=True,
        help_text="The status before; empty for the first.",
    )

    class Meta:
        model = HealthEvent
        fields = [
            "id",
            "member",
            "member_name",
            "pool",
            "pool_name",
            "node",
            "node_name",
            "at",
            "status",
            "previous",
            "check",
            "detail",
            "code",
            "latency_ms",
        ]
        read_only_fields = fields


# ---- the dashboard


class OverviewServiceSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="service.id")
    name = serializers.CharField(source="service.name")
    vip = serializers.CharField(source="service.vip")
    port = serializers.IntegerField(source="service.port")
    port_end = serializers.IntegerField(source="service.port_end")
    protocol = serializers.CharField(source="service.protocol")
    forwarding = serializers.CharField(source="service.forwarding")
    layer = serializers.SerializerMethodField(help_text="l4: IPVS forwarding; l7: HAProxy (proxy).")
    enabled = serializers.BooleanField(source="service.enabled")
    state = serializers.ChoiceField(
        choices=ServiceState.choices,
        help_text="disabled: the service is; unknown: no node reported its members' health in the last minute; "
        "down: no member up; degraded: some enabled member not up (drained or disabled ones do not count); up.",
    )
    members_up = serializers.IntegerField()
    members_total = serializers.IntegerField(
        help_text="Enabled members of the default pool and of the pools its rules send to."
    )
    connections = serializers.IntegerField()
    requests_per_s = serializers.FloatField()
    errors_per_s = serializers.FloatField()
    bytes_in_per_s = serializers.FloatField()
    bytes_out_per_s = serializers.FloatField()

    def get_layer(self, row) -> str:
        return "l4" if row["service"].forwarding in rules.IPVS_FORWARDING else "l7"


class OverviewHaSerializer(serializers.Serializer):
    group = serializers.CharField()
    state = serializers.ChoiceField(choices=VrrpState.choices)


class OverviewNodeSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="node.id")
    name = serializers.CharField(source="node.name")
    state = serializers.ChoiceField(choices=NodeState.choices)
    running_revision = serializers.IntegerField(allow_null=True, help_text="The revision the node runs.")
    last_seen = serializers.DateTimeField(source="node.last_seen", allow_null=True)
    ha = OverviewHaSerializer(many=True, help_text="The node's VRRP state in each HA group, as last reported.")


class OverviewRevisionSerializer(RevisionSerializer):
    class Meta(RevisionSerializer.Meta):
        fields = ["number", "live", "confirm_state", "confirm_by"]
        read_only_fields = fields


class OverviewSerializer(serializers.Serializer):
    services = OverviewServiceSerializer(many=True)
    nodes = OverviewNodeSerializer(many=True)
    pending_changes = serializers.IntegerField(help_text="Objects that differ from the last published revision.")
    revision = OverviewRevisionSerializer(
        allow_null=True, help_text="The newest revision; null before the first apply."
    )
