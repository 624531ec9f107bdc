"""Serializers for revisions and for the agent protocol."""

from rest_framework import serializers

from cluster.models import Node
from fulcrum.serializers import StrictModelSerializer, StrictSerializer
from revisions.backup import FORMAT
from revisions.choices import ApplyRefusal, ConfirmState, NodeRevisionState
from revisions.models import NodeRevision, Revision


class PublishProblemSerializer(serializers.Serializer):
    """One reason for a refusal (revisions.problems): the object and field at fault, and,
    when a daemon refused the files, the daemon's own words. Only ever answered: read-only."""

    path = serializers.CharField(
        read_only=True,
        help_text="The object and field, as the API names them: pools/web/members/s1/address. "
        "nodes/<node>/<daemon> when the daemon named none of the operator's objects.",
    )
    message = serializers.CharField(read_only=True)
    object = serializers.CharField(
        read_only=True,
        allow_null=True,
        help_text="The kind of object the path names: virtual-service, pool, certificate, ha-group, node or "
        "ipvs-sync; null when it names none.",
    )
    name = serializers.CharField(
        read_only=True, allow_null=True, allow_blank=True, help_text="The object's name; empty for ipvs-sync."
    )
    id = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="The object's id; null when no such object exists now."
    )
    field = serializers.CharField(
        read_only=True,
        allow_blank=True,
        help_text="The field inside the object: members/s1/address, health_check; empty: the object.",
    )
    daemon = serializers.CharField(
        read_only=True,
        allow_null=True,
        help_text="haproxy, keepalived or nftables: the daemon whose check refused the files.",
    )
    node = serializers.CharField(read_only=True, allow_null=True, help_text="The node whose files the daemon refused.")
    daemon_message = serializers.CharField(
        read_only=True, allow_null=True, help_text="The daemon's complaint in its own words, without process IDs."
    )


class NodeRevisionSerializer(serializers.ModelSerializer):
    """One node's outcome for a revision: a failed apply says why, and the node keeps
    running its last good revision (``running_revision``)."""

    node = serializers.CharField(source="node.name", read_only=True)
    message = serializers.CharField(read_only=True, help_text="The agent's report: what it did, or why it failed.")
    problems = PublishProblemSerializer(
        many=True,
        read_only=True,
        help_text="A failed report's complaints that HAProxy or keepalived made about a place in the node's "
        "files, with the object and field at fault; the rest is in message.",
    )
    running_revision = serializers.IntegerField(
        source="node.applied_revision.number",
        read_only=True,
        default=None,
        allow_null=True,
        help_text="The revision the node actually runs: its last good one.",
    )

    class Meta:
        model = NodeRevision
        fields = ["node", "state", "message", "problems", "running_revision", "updated_at"]
        read_only_fields = fields


class RevisionSerializer(StrictModelSerializer):
    author = serializers.CharField(
        source="author.username", read_only=True, default=None, allow_null=True,
        help_text="Who applied it; null when that user was deleted or the system published it.",
    )  # fmt: skip
    nodes = NodeRevisionSerializer(source="node_states", many=True, read_only=True)
    live = serializers.SerializerMethodField(help_text="Every registered node has applied this revision.")
    force = serializers.BooleanField(
        write_only=True,
        default=False,
        help_text="Publish even when nothing changed since the last revision (409 nothing_to_apply "
        "otherwise): the nodes get the same configuration again as a new revision.",
    )

    class Meta:
        model = Revision
        fields = [
            "id",
            "number",
            "message",
            "author",
            "created_at",
            "nodes",
            "live",
            "rollback_of",
            "confirm_within_s",
            "confirm_by",
            "confirm_state",
            "confirm_problem",
            "force",
        ]
        read_only_fields = [
            "id",
            "number",
            "author",
            "created_at",
            "nodes",
            "live",
            "rollback_of",
            "confirm_by",
            "confirm_state",
            "confirm_problem",
        ]
        extra_kwargs = {
            "confirm_within_s": {
                "help_text": "Apply with confirm: unless confirmed (confirm/) within this many seconds "
                "(10-3600), the objects go back to the previous revision, published as a new one."
            }
        }

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


class PublishErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    problems = PublishProblemSerializer(many=True)
    daemon_output = serializers.CharField(
        allow_null=True, help_text="All the daemon said, when a daemon refused the files; null otherwise."
    )


class NothingToApplySerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = serializers.ChoiceField(choices=ApplyRefusal.choices)
    base_revision = serializers.IntegerField(
        allow_null=True, help_text="The revision the objects equal; null: no objects and no revision yet."
    )


class FieldChangeSerializer(serializers.Serializer):
    field = serializers.CharField(help_text="Path inside the object, e.g. members/s1/weight.")
    old = serializers.JSONField(allow_null=True)
    new = serializers.JSONField(allow_null=True)
    default = serializers.BooleanField(
        help_text="In an object added or removed: the field is at its default (a console folds these away)."
    )


class ObjectChangeSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="The object, as the API names it: pools/web.")
    change = serializers.ChoiceField(choices=["added", "removed", "changed"])
    fields = FieldChangeSerializer(many=True)


class FileChangeSerializer(serializers.Serializer):
    node = serializers.CharField()
    file = serializers.CharField()
    change = serializers.ChoiceField(choices=["added", "removed", "changed"])
    diff = serializers.CharField(help_text="Unified diff; certificate bundles are not shown.")


class ChangeSummarySerializer(serializers.Serializer):
    """How many objects were added, changed and removed: all of them, whatever the page."""

    added = serializers.IntegerField()
    changed = serializers.IntegerField()
    removed = serializers.IntegerField()


PAGE_HELP = "The page asked for (limit, offset), in the order of path; all of them without a limit."


class RevisionDiffSerializer(serializers.Serializer):
    from_revision = serializers.IntegerField(allow_null=True, help_text="null: compared with nothing.")
    to_revision = serializers.IntegerField()
    count = serializers.IntegerField(help_text="How many objects differ.")
    summary = ChangeSummarySerializer()
    objects = ObjectChangeSerializer(many=True, help_text=PAGE_HELP)
    files = FileChangeSerializer(many=True, help_text="Empty when asked without them (files=false).")
    problems = serializers.ListField(
        child=serializers.CharField(), help_text="Nodes whose files could not be compiled for the comparison."
    )


class RevisionRollbackSerializer(StrictSerializer):
    message = serializers.CharField(
        max_length=500, required=False, allow_blank=True, help_text="Default: rollback to rN."
    )


class NotAwaitingSerializer(serializers.Serializer):
    detail = serializers.CharField()
    confirm_state = serializers.ChoiceField(choices=ConfirmState.choices)


class PendingCountSerializer(serializers.Serializer):
    pending = serializers.BooleanField(help_text="The objects differ from the last published revision.")
    base_revision = serializers.IntegerField(allow_null=True, help_text="The last published revision; null: none yet.")
    count = serializers.IntegerField(help_text="How many objects differ (added, changed or removed).")
    summary = ChangeSummarySerializer()


class PendingSerializer(PendingCountSerializer):
    objects = ObjectChangeSerializer(many=True, help_text=PAGE_HELP)


class BackupDocumentSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=[FORMAT])
    format_version = serializers.IntegerField()
    objects = serializers.DictField(
        help_text="certificates (with PEMs and keys), pools, virtual_services, nodes, ha_groups, ipvs_sync."
    )


class BackupRestoreSerializer(StrictSerializer):
    document = serializers.JSONField(help_text="A document from GET backup/.")
    dry_run = serializers.BooleanField(help_text="true: only show what would change.")


class BackupRestoreResultSerializer(serializers.Serializer):
    changes = ObjectChangeSerializer(many=True)
    applied = serializers.BooleanField(help_text="false for a dry run. Not published: apply it as a revision.")
    node_tokens = serializers.DictField(
        child=serializers.CharField(), help_text="Agent tokens of nodes the restore created (shown only here)."
    )
