"""Serializers for nodes and the agent protocol."""

import ipaddress

from rest_framework import serializers

from cluster.models import IpvsSync, Node
from compiler.snapshot import IpvsSync as SyncSettings
from compiler.verify import verify_sync
from fulcrum.serializers import StrictModelSerializer, StrictSerializer
from revisions.choices import NodeRevisionState
from services.api.serializers import MemberFiguresSerializer
from services.snapshot import sync_dict


class IpvsStatusSerializer(StrictSerializer):
    key = serializers.CharField(max_length=128)
    name = serializers.CharField(max_length=63, allow_blank=True, required=False, default="")
    scheduler_wanted = serializers.CharField(max_length=16)
    scheduler_in_force = serializers.CharField(max_length=16, allow_blank=True)
    message = serializers.CharField(max_length=1000, allow_blank=True, required=False, default="")


class MemberStatusSerializer(MemberFiguresSerializer):
    """The live state of one member of a dynamic-least-load pool on one node."""

    pool = serializers.CharField(max_length=63)
    member = serializers.CharField(max_length=63)


class NodeSerializer(StrictModelSerializer):
    applied_revision = serializers.IntegerField(
        source="applied_revision.number", read_only=True, default=None, allow_null=True
    )
    networks = serializers.ListField(child=serializers.CharField(), read_only=True)
    ipvs_status = IpvsStatusSerializer(many=True, read_only=True)

    class Meta:
        model = Node
        fields = ["id", "name", "last_seen", "applied_revision", "networks", "ipvs_status", "status_at"]
        read_only_fields = ["last_seen", "applied_revision", "networks", "ipvs_status", "status_at"]


class NodeCreateSerializer(NodeSerializer):
    token = serializers.CharField(read_only=True, help_text="The agent's secret; shown only in this answer.")

    class Meta(NodeSerializer.Meta):
        fields = NodeSerializer.Meta.fields + ["token"]

    def create(self, validated_data):
        node = Node(**validated_data)
        node.token = node.rotate_token()
        node.save()
        return node


class AgentBundleSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    node = serializers.CharField()
    files = serializers.DictField(child=serializers.CharField())


class AgentReportSerializer(serializers.Serializer):
    revision = serializers.IntegerField(min_value=1)
    state = serializers.ChoiceField(choices=[NodeRevisionState.APPLIED, NodeRevisionState.FAILED])
    message = serializers.CharField(allow_blank=True, max_length=8000, required=False, default="")


class AgentStatusSerializer(StrictSerializer):
    """What the agent sees on its node, sent when it changes and at least every minute."""

    networks = serializers.ListField(child=serializers.CharField(max_length=64), max_length=1024)
    ipvs = IpvsStatusSerializer(many=True, max_length=10_000, required=False, default=list)
    members = MemberStatusSerializer(many=True, max_length=100_000, required=False, default=list)

    def validate_networks(self, value):
        for cidr in value:
            try:
                ipaddress.ip_interface(cidr)
            except ValueError as err:
                raise serializers.ValidationError(f"not an address with prefix: {cidr!r}") from err
        return value


class IpvsSyncSerializer(StrictModelSerializer):
    class Meta:
        model = IpvsSync
        fields = ["enabled", "interface", "sync_id", "port", "ttl", "max_packet", "group"]

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
