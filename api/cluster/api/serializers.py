"""Serializers for nodes and the agent protocol."""

from rest_framework import serializers

from cluster.models import Node
from fulcrum.serializers import StrictModelSerializer
from revisions.choices import NodeRevisionState


class NodeSerializer(StrictModelSerializer):
    applied_revision = serializers.IntegerField(
        source="applied_revision.number", read_only=True, default=None, allow_null=True
    )

    class Meta:
        model = Node
        fields = ["id", "name", "last_seen", "applied_revision"]
        read_only_fields = ["last_seen", "applied_revision"]


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
