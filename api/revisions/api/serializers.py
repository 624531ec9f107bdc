"""Serializers for revisions and for the agent protocol."""

from rest_framework import serializers

from cluster.models import Node
from fulcrum.serializers import StrictModelSerializer
from revisions.choices import NodeRevisionState
from revisions.models import NodeRevision, Revision


class NodeRevisionSerializer(serializers.ModelSerializer):
    node = serializers.CharField(source="node.name", read_only=True)

    class Meta:
        model = NodeRevision
        fields = ["node", "state", "message", "updated_at"]
        read_only_fields = fields


class RevisionSerializer(StrictModelSerializer):
    author = serializers.CharField(source="author.username", read_only=True, default=None)
    nodes = NodeRevisionSerializer(source="node_states", many=True, read_only=True)
    live = serializers.SerializerMethodField(help_text="Every registered node has applied this revision.")

    class Meta:
        model = Revision
        fields = ["id", "number", "message", "author", "created_at", "nodes", "live"]
        read_only_fields = ["id", "number", "author", "created_at", "nodes", "live"]

    def get_live(self, revision) -> bool:
        # The node count is asked once per answer, not once per revision listed.
        if "node_count" not in self.context:
            self.context["node_count"] = Node.objects.count()
        applied = [c for c in revision.node_states.all() if c.state == NodeRevisionState.APPLIED]
        return self.context["node_count"] > 0 and len(applied) == self.context["node_count"]


class RevisionDetailSerializer(RevisionSerializer):
    class Meta(RevisionSerializer.Meta):
        fields = RevisionSerializer.Meta.fields + ["snapshot"]
        read_only_fields = RevisionSerializer.Meta.read_only_fields + ["snapshot"]


class PublishProblemSerializer(serializers.Serializer):
    path = serializers.CharField()
    message = serializers.CharField()


class PublishErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    problems = PublishProblemSerializer(many=True)


class FieldChangeSerializer(serializers.Serializer):
    field = serializers.CharField(help_text="Path inside the object, e.g. members/s1/weight.")
    old = serializers.JSONField(allow_null=True)
    new = serializers.JSONField(allow_null=True)


class ObjectChangeSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="The object, as the API names it: pools/web.")
    change = serializers.ChoiceField(choices=["added", "removed", "changed"])
    fields = FieldChangeSerializer(many=True)


class FileChangeSerializer(serializers.Serializer):
    node = serializers.CharField()
    file = serializers.CharField()
    change = serializers.ChoiceField(choices=["added", "removed", "changed"])
    diff = serializers.CharField(help_text="Unified diff; certificate bundles are not shown.")


class RevisionDiffSerializer(serializers.Serializer):
    from_revision = serializers.IntegerField(allow_null=True, help_text="null: compared with nothing.")
    to_revision = serializers.IntegerField()
    objects = ObjectChangeSerializer(many=True)
    files = FileChangeSerializer(many=True)
    problems = serializers.ListField(
        child=serializers.CharField(), help_text="Nodes whose files could not be compiled for the comparison."
    )
