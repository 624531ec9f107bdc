"""Serializers for nodes and the agent protocol."""

import ipaddress

from django.conf import settings
from django.db import transaction
from rest_framework import serializers

from cluster import replication
from cluster.models import (
    Daemon,
    DaemonEvent,
    DaemonOutcome,
    HaEvent,
    HaGroup,
    HaGroupNode,
    IpvsSync,
    JoinCode,
    JoinCodeState,
    Node,
    VrrpState,
)
from compiler import rules
from compiler.snapshot import IpvsSync as SyncSettings
from compiler.verify import verify_sync
from fulcrum.concurrency import VersionedSerializerMixin
from fulcrum.serializers import AgentReport, StrictModelSerializer, StrictSerializer
from fulcrum.validators import validate_interface, validate_name
from revisions.choices import NodeRevisionState
from services.api.serializers import MemberFiguresSerializer, compiler_check
from snapshots import freeze as snapshot
from snapshots.freeze import sync_dict

VRRP_STATES = VrrpState.choices


class IpvsStatusSerializer(AgentReport, StrictSerializer):
    key = serializers.CharField(max_length=128)
    name = serializers.CharField(max_length=63, allow_blank=True, required=False, default="")
    scheduler_wanted = serializers.CharField(max_length=16)
    scheduler_in_force = serializers.CharField(max_length=16, allow_blank=True)
    message = serializers.CharField(max_length=1000, allow_blank=True, required=False, default="")


class MemberStatusSerializer(AgentReport, MemberFiguresSerializer):
    """The live state of one member of a dynamic-least-load pool on one node."""

    pool = serializers.CharField(max_length=63)
    member = serializers.CharField(max_length=63)


class VrrpStatusSerializer(AgentReport, StrictSerializer):
    """A node's VRRP state in one HA group, as its agent reports it."""

    group = serializers.CharField(max_length=63)
    state = serializers.ChoiceField(choices=VRRP_STATES)
    priority = serializers.IntegerField(min_value=0, max_value=255, required=False, default=0)
    since = serializers.DateTimeField(required=False, allow_null=True, default=None)


class NodeSerializer(VersionedSerializerMixin, StrictModelSerializer):
    applied_revision = serializers.IntegerField(source="applied_revision.number", read_only=True, allow_null=True)
    networks = serializers.ListField(child=serializers.CharField(), read_only=True)
    ipvs_status = IpvsStatusSerializer(many=True, read_only=True)
    vrrp = VrrpStatusSerializer(source="vrrp_status", many=True, read_only=True)

    class Meta:
        model = Node
        fields = [
            "id",
            "name",
            "address",
            "standby",
            "last_seen",
            "applied_revision",
            "networks",
            "ipvs_status",
            "vrrp",
            "management",
            "status_at",
        ]
        read_only_fields = [
            "standby", "last_seen", "applied_revision", "networks", "ipvs_status", "management", "status_at",
        ]  # fmt: skip

    def validate(self, attrs):
        name, address = self.merged(attrs, "name", "address").values()
        frozen = snapshot.freeze_around()  # nodes and HA groups: no service verifies by them
        old = self.instance.name if self.instance is not None else None
        entry = {"name": name, "address": address or "", "standby": self.instance.standby if self.instance else False}
        frozen["nodes"] = snapshot.replace(frozen["nodes"], old, entry)
        if old and old != name:
            for group in frozen["ha_groups"]:
                for n in group["nodes"]:
                    n["node"] = name if n["node"] == old else n["node"]
        compiler_check(frozen, f"nodes/{name}", {})
        return attrs


class NodeStandbySerializer(StrictSerializer):
    standby = serializers.BooleanField(help_text="true: give up every master role now; false: take part again.")


class NodeStandbyResultSerializer(serializers.Serializer):
    node = NodeSerializer()
    revision = serializers.IntegerField(help_text="The revision that carries the change.")


class NodeCreateSerializer(NodeSerializer):
    token = serializers.CharField(read_only=True, help_text="The agent's secret; shown only in this answer.")

    class Meta(NodeSerializer.Meta):
        fields = NodeSerializer.Meta.fields + ["token"]

    def create(self, validated_data):
        validated_data.pop("version", None)
        node = Node(**validated_data)
        node.token = node.rotate_token()
        node.save()
        return node


class AgentBundleSerializer(serializers.Serializer):
    """One revision's files for one node, as the agent's long-poll delivers them."""

    revision = serializers.IntegerField()
    node = serializers.CharField()
    files = serializers.DictField(child=serializers.CharField())
    confirm_by = serializers.DateTimeField(
        allow_null=True,
        help_text="When the revision must be confirmed by, while it awaits confirmation; null otherwise. "
        "A node that hears nothing from the API from then on (plus a grace) goes back to the revision it ran before.",
    )


class AgentReportSerializer(AgentReport, StrictSerializer):
    revision = serializers.IntegerField(min_value=1)
    state = serializers.ChoiceField(choices=[NodeRevisionState.APPLIED, NodeRevisionState.FAILED])
    message = serializers.CharField(allow_blank=True, max_length=8000, required=False, default="")


class AgentStatusSerializer(AgentReport, StrictSerializer):
    """What the agent sees on its node, sent when it changes and at least every minute."""

    networks = serializers.ListField(child=serializers.CharField(max_length=64), max_length=1024)
    ipvs = IpvsStatusSerializer(many=True, max_length=10_000, required=False, default=list)
    members = MemberStatusSerializer(many=True, max_length=100_000, required=False, default=list)
    vrrp = VrrpStatusSerializer(many=True, max_length=1_000, required=False, default=list)
    management = serializers.ChoiceField(
        choices=VRRP_STATES, required=False, allow_blank=True, default="",
        help_text="The appliance's state for the management VIP (fulcrum-management); absent: none.",
    )  # fmt: skip

    def validate_networks(self, value):
        for cidr in value:
            try:
                ipaddress.ip_interface(cidr)
            except ValueError as err:
                raise serializers.ValidationError(f"not an address with prefix: {cidr!r}") from err
        return value


class IpvsSyncSerializer(VersionedSerializerMixin, StrictModelSerializer):
    ha_group = serializers.PrimaryKeyRelatedField(
        queryset=HaGroup.objects.all(),
        allow_null=True,
        required=False,
        help_text="The HA group whose master sends the connection table; null = both daemons on every node.",
    )

    class Meta:
        model = IpvsSync
        fields = ["enabled", "interface", "sync_id", "port", "ttl", "max_packet", "group", "ha_group"]

    def validate(self, attrs):
        candidate = (
            IpvsSync(**{f: getattr(self.instance, f) for f in self.Meta.fields}) if self.instance else IpvsSync()
        )
        for name, value in attrs.items():
            setattr(candidate, name, value)
        problems = verify_sync(SyncSettings(**sync_dict(candidate)), "ipvs-sync")
        if problems:
            raise serializers.ValidationError({path.split("/")[-1]: [message] for path, message in problems})
        return attrs


class HaGroupNodeSerializer(StrictSerializer):
    node = serializers.PrimaryKeyRelatedField(queryset=Node.objects.all())
    priority = serializers.IntegerField(min_value=rules.VRRP_PRIORITY_MIN, max_value=rules.VRRP_PRIORITY_MAX)
    interface = serializers.CharField(
        max_length=15, allow_blank=True, required=False, default="", validators=[validate_interface]
    )


class HaGroupSerializer(VersionedSerializerMixin, StrictModelSerializer):
    """An HA group (VRRP instance) with each node's own priority and, if it differs, interface."""

    nodes = HaGroupNodeSerializer(many=True, max_length=32)
    vips = serializers.ListField(
        child=serializers.CharField(max_length=64), max_length=rules.HA_VIPS_MAX, allow_empty=False
    )
    track_interfaces = serializers.ListField(
        child=serializers.CharField(max_length=15, validators=[validate_interface]),
        max_length=rules.TRACK_INTERFACES_MAX,
        required=False,
    )
    auth_password = serializers.CharField(
        max_length=8, allow_blank=True, required=False, write_only=True, help_text="VRRPv2 only; never shown again."
    )
    authentication = serializers.SerializerMethodField(help_text="True when a VRRPv2 password is set.")

    class Meta:
        model = HaGroup
        fields = [
            "id",
            "name",
            "vrid",
            "interface",
            "vips",
            "vrrp_version",
            "advert_interval_ms",
            "preempt",
            "preempt_delay_s",
            "auth_password",
            "authentication",
            "track_haproxy",
            "track_interfaces",
            "witness",
            "garp_refresh_s",
            "garp_repeat",
            "nodes",
        ]

    def get_authentication(self, group) -> bool:
        return bool(group.auth_password)

    # The cluster's management VIP is its own VRRP instance (appliance/api/fulcrum-management):
    # a group may take neither its VRID nor its address.
    def validate_vrid(self, vrid):
        if settings.FULCRUM_MGMT_VIP and vrid == settings.FULCRUM_MGMT_VRID:
            raise serializers.ValidationError(f"VRID {vrid} is the cluster's management VIP's; choose another one")
        return vrid

    def validate_vips(self, vips):
        vip = settings.FULCRUM_MGMT_VIP
        if vip and any(str(v).split("/")[0] == vip for v in vips):
            raise serializers.ValidationError(f"{vip} is the cluster's management VIP, which only it may hold")
        return vips

    def validate(self, attrs):
        fields = [f for f in self.Meta.fields if f not in ("id", "nodes", "authentication")]
        values = self.merged(attrs, *fields)
        group = HaGroup(**values)
        if "nodes" in attrs:
            rows = [HaGroupNode(group=group, **entry) for entry in attrs["nodes"]]
        else:
            rows = list(self.instance.nodes.select_related("node")) if self.instance else []
        frozen = snapshot.freeze_around()  # HA groups, nodes and the sync settings
        old = self.instance.name if self.instance is not None else None
        frozen["ha_groups"] = snapshot.replace(frozen["ha_groups"], old, snapshot.ha_group_dict(group, rows))
        sync = frozen["ipvs_sync"]
        if sync is not None and old is not None and sync["ha_group"] == old:
            sync["ha_group"] = group.name  # stored by key, the sync settings follow a rename
        # A VRID or VIP clash is reported on both groups; the other group's copy is an echo.
        echoes = [f"ha-groups/{g['name']}/{f}" for g in frozen["ha_groups"] for f in ("vrid", "vips/")]
        compiler_check(frozen, f"ha-groups/{group.name}", {}, renames={"version": "vrrp_version"}, echoes=echoes)
        return attrs

    @transaction.atomic
    def create(self, validated_data):
        nodes = validated_data.pop("nodes")
        group = super().create(validated_data)
        self._save_nodes(group, nodes)
        return group

    @transaction.atomic
    def update(self, instance, validated_data):
        nodes = validated_data.pop("nodes", None)
        group = super().update(instance, validated_data)
        if nodes is not None:
            group.nodes.all().delete()
            self._save_nodes(group, nodes)
        return group

    @staticmethod
    def _save_nodes(group, nodes):
        HaGroupNode.objects.bulk_create(HaGroupNode(group=group, **entry) for entry in nodes)


class HaEventSerializer(serializers.ModelSerializer):
    node = serializers.CharField(source="node.name", read_only=True)

    class Meta:
        model = HaEvent
        fields = ["id", "node", "group", "at", "old_state", "new_state", "priority", "reason", "received_at"]
        read_only_fields = fields


class AgentEventSerializer(AgentReport, StrictSerializer):
    at = serializers.DateTimeField()
    group = serializers.CharField(max_length=63)
    old_state = serializers.ChoiceField(choices=VRRP_STATES)
    new_state = serializers.ChoiceField(choices=VRRP_STATES)
    priority = serializers.IntegerField(min_value=0, max_value=255, required=False, default=0)
    reason = serializers.CharField(max_length=500, allow_blank=True, required=False, default="")


class AgentEventsSerializer(AgentReport, StrictSerializer):
    events = AgentEventSerializer(many=True, max_length=100)


class DaemonEventSerializer(serializers.ModelSerializer):
    node = serializers.CharField(source="node.name", read_only=True)

    class Meta:
        model = DaemonEvent
        fields = ["id", "node", "daemon", "at", "outcome", "detail", "received_at"]
        read_only_fields = fields


class AgentDaemonEventSerializer(AgentReport, StrictSerializer):
    at = serializers.DateTimeField()
    daemon = serializers.ChoiceField(choices=Daemon.choices)
    outcome = serializers.ChoiceField(choices=DaemonOutcome.choices)
    detail = serializers.CharField(max_length=500, allow_blank=True, required=False, default="")


class AgentDaemonEventsSerializer(AgentReport, StrictSerializer):
    events = AgentDaemonEventSerializer(many=True, max_length=100)


class JoinCodeSerializer(serializers.ModelSerializer):
    """A join code as listed: never the code itself, which only its creation shows."""

    created_by = serializers.CharField(source="created_by.username", read_only=True, allow_null=True)
    node = serializers.CharField(source="node.name", read_only=True, allow_null=True)
    state = serializers.ChoiceField(choices=JoinCodeState.choices, read_only=True)

    class Meta:
        model = JoinCode
        fields = ["id", "code_id", "created_by", "created_at", "expires_at", "used_at", "node", "state"]
        read_only_fields = fields


class JoinCodeCreatedSerializer(JoinCodeSerializer):
    """A new join code, with the code itself: this answer is the only place it is shown."""

    code = serializers.CharField(read_only=True, help_text="The code to give the new appliance; shown only here.")

    class Meta(JoinCodeSerializer.Meta):
        fields = JoinCodeSerializer.Meta.fields + ["code"]
        read_only_fields = fields


class JoinDiscoverySerializer(serializers.Serializer):
    info = serializers.CharField(
        help_text="JSON text: certificate (the console's, PEM) and version. Parse it only after checking the signature."
    )
    signature = serializers.CharField(help_text="HMAC-SHA256 of info, keyed by the code's secret part (hex).")


class JoinSerializer(StrictSerializer):
    """What a joining appliance says about itself."""

    join_code = serializers.CharField(
        max_length=64, help_text="The join code, as shown (dashes and case do not matter)."
    )
    name = serializers.CharField(
        max_length=63, validators=[validate_name], help_text="The appliance's short host name: its node name."
    )
    address = serializers.IPAddressField(help_text="Its management address.")
    version = serializers.CharField(max_length=100, help_text="Its Fulcrum package version.")
    time = serializers.DateTimeField(help_text="Its clock, now.")

    def validate_address(self, value):
        return str(ipaddress.ip_address(value))


class ReplicationOfferSerializer(serializers.Serializer):
    user = serializers.CharField(help_text="The replication role.")
    password = serializers.CharField(help_text="Its password; shown only here.")
    port = serializers.IntegerField(help_text="The primary's PostgreSQL port, on the address joined.")
    slot = serializers.CharField(help_text="The replication slot named for the new node.")
    management_vip = serializers.CharField(
        allow_null=True, help_text="The cluster's management VIP, which every appliance may hold; null: none."
    )
    console_key = serializers.CharField(
        allow_null=True,
        help_text="The console certificate's private key (PEM), so that every appliance serves the same "
        "console at the management VIP; shown only here. Null where the API cannot read it.",
    )


class JoinResultSerializer(serializers.Serializer):
    node = serializers.CharField(help_text="The node's name.")
    token = serializers.CharField(help_text="The node's agent token; shown only here.")
    version = serializers.CharField(help_text="The cluster's Fulcrum version.")
    replication = ReplicationOfferSerializer(
        allow_null=True,
        help_text="What the node's database needs to become a standby of the primary's; null where "
        "the cluster's database does not replicate.",
    )


class MembershipSerializer(serializers.Serializer):
    member_of = serializers.CharField(
        allow_null=True, help_text="The console of the cluster this appliance joined (manage it there); null: its own."
    )
    node = serializers.CharField(allow_null=True, allow_blank=True, help_text="This appliance's node name there.")
    read_only = serializers.ChoiceField(
        ["standby", "fenced"],
        allow_null=True,
        help_text="Why this appliance takes no changes: standby (its database is the primary's copy) or fenced "
        "(a primary without the management VIP); null: it takes them.",
    )
    primary = serializers.CharField(
        allow_null=True, help_text="Where changes are made: the management VIP's console, else the appliance joined."
    )


class SwitchoverSerializer(serializers.Serializer):
    standby = serializers.CharField(help_text="The synchronous standby that takes the management VIP over.")
    detail = serializers.CharField()


class StandbySerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The standby's node name.")
    address = serializers.CharField(allow_null=True)
    state = serializers.CharField(help_text="startup, catchup, streaming, backup or stopping.")
    sync_state = serializers.CharField(help_text="async, potential, sync or quorum (confirms commits).")
    lag_bytes = serializers.IntegerField(allow_null=True, help_text="WAL it has not replayed yet.")
    silent_s = serializers.FloatField(allow_null=True, help_text="Seconds since it last answered.")
    flushes = serializers.BooleanField(help_text="It confirms what it flushed (a standby, not a base backup).")


class ReplicationSerializer(serializers.Serializer):
    role = serializers.ChoiceField(replication.ROLES, help_text="This appliance's database.")
    state = serializers.ChoiceField(
        replication.STATES,
        help_text="primary: synchronous (a standby confirms each commit), catching-up (a standby is connected, "
        "commits do not wait for it yet), degraded (a standby is away: commits are on this disk only), single "
        "(no standby). standby: streaming or disconnected.",
    )
    synchronous_standby_names = serializers.CharField(allow_blank=True)
    standbys = StandbySerializer(many=True, help_text="The connected standbys (primary).")
    slots = serializers.ListField(child=serializers.CharField(), help_text="The standbys the primary keeps WAL for.")
    primary = serializers.CharField(allow_null=True, help_text="standby: the host it streams from.")
    lag_bytes = serializers.IntegerField(allow_null=True, help_text="standby: WAL received, not replayed yet.")
    fenced = serializers.BooleanField(
        help_text="primary: read-only, for this appliance lost the management VIP to another one (it rejoins as a "
        "standby)."
    )
