"""Revisions: apply (POST), history, pending changes, rollback, confirm; backup and restore."""

from django.db.models import Prefetch
from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from cluster.models import Node
from fulcrum.pagination import MAX_LIMIT, bool_param, int_param, page_of
from revisions import backup
from revisions.api import serializers
from revisions.choices import ApplyRefusal
from revisions.diff import file_changes, object_changes, with_fields
from revisions.models import NodeRevision, Revision
from revisions.problems import refused_body
from revisions.publish import NothingToApply, PublishError, last_published, node_files, pending_changes, publish
from revisions.restore import RestoreError, restore
from revisions.rollback import NotAwaiting, confirm, expire_confirmations, rollback
from snapshots.freeze import current

NOT_PUBLISHED = OpenApiResponse(serializers.PublishErrorSerializer, "not published: the reasons, per object")
CHANGES_PAGE = [
    OpenApiParameter(
        "limit",
        {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
        description="at most this many objects (default: all)",
    ),
    OpenApiParameter(
        "offset", {"type": "integer", "minimum": 0}, description="from this one on, counted from 0 in the order of path"
    ),
]


def _counted(objects):
    """How many objects changed, and how: what a banner or the head of a long list shows."""
    summary = dict.fromkeys(("added", "changed", "removed"), 0)
    for change in objects:
        summary[change["change"]] += 1
    return {"count": len(objects), "summary": summary}


def _changes(request, old, new):
    """The objects changed from snapshot ``old`` to ``new`` counted, and the page of them the
    request asks for with their fields: a page's fields cost a page, not every object's."""
    objects = object_changes(old, new, fields=False)
    return {**_counted(objects), "objects": with_fields(old, new, page_of(request, objects))}


def _problems(detail, err, code=status.HTTP_400_BAD_REQUEST):
    # A backup document that does not read has problems, but no daemon refused anything.
    return Response(refused_body(detail, err.problems, getattr(err, "refusal", None)), status=code)


@extend_schema_view(
    list=extend_schema(parameters=[OpenApiParameter("number", int, description="only the revision with this number")])
)
class RevisionViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """History of applied revisions; POST applies the current objects as a new revision.

    Reading the history also enforces a confirmation deadline that has passed."""

    queryset = (
        Revision.objects.listed()
        .select_related("author")
        .prefetch_related(Prefetch("node_states", NodeRevision.objects.listed()))
    )
    serializer_class = serializers.RevisionSerializer
    operator_actions = {"create", "rollback", "confirm"}

    def get_queryset(self):
        queryset = super().get_queryset()
        number = int_param(self.request, "number") if self.action == "list" else None
        return queryset.filter(number=number) if number is not None else queryset

    def get_serializer_class(self):
        if self.action == "retrieve":
            return serializers.RevisionDetailSerializer
        return super().get_serializer_class()

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if self.action in ("list", "retrieve", "pending", "pending_count"):
            expire_confirmations()

    @extend_schema(
        responses={
            201: serializers.RevisionSerializer,
            400: NOT_PUBLISHED,
            409: OpenApiResponse(
                serializers.NothingToApplySerializer, "nothing to apply: the objects are the last revision's"
            ),
        }
    )
    def create(self, request, *args, **kwargs):
        """Apply: publish the current objects. With nothing pending (revisions/pending/), 409
        nothing_to_apply and nothing published, unless force. With confirm_within_s the revision
        rolls back by itself unless confirmed in time; a new apply confirms a revision that awaits."""
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            revision = publish(request.user, data.get("message", ""), data.get("confirm_within_s"), data["force"])
        except PublishError as err:
            return _problems("Not published.", err)
        except NothingToApply as err:
            body = {"detail": str(err), "code": ApplyRefusal.NOTHING_TO_APPLY, "base_revision": err.base}
            return Response(body, status=status.HTTP_409_CONFLICT)
        revision = self.get_queryset().get(pk=revision.pk)
        return Response(self.get_serializer(revision).data, status=status.HTTP_201_CREATED)

    @extend_schema(parameters=CHANGES_PAGE, responses=serializers.PendingSerializer)
    @action(detail=False, methods=["get"])
    def pending(self, request):
        """What an apply would change now: the objects compared with the last published revision."""
        last = last_published()
        changes = _changes(request, last.snapshot if last else {}, current())
        body = {"pending": changes["count"] > 0, "base_revision": last.number if last else None, **changes}
        return Response(serializers.PendingSerializer(body).data)

    @extend_schema(responses=serializers.PendingCountSerializer)
    @action(detail=False, methods=["get"], url_path="pending/count")
    def pending_count(self, request):
        """How many objects an apply would change now, without them: what a banner polls."""
        last, objects = pending_changes(fields=False)
        body = {"pending": bool(objects), "base_revision": last.number if last else None, **_counted(objects)}
        return Response(serializers.PendingCountSerializer(body).data)

    @extend_schema(
        request=serializers.RevisionRollbackSerializer,
        responses={201: serializers.RevisionSerializer, 400: NOT_PUBLISHED},
    )
    @action(detail=True, methods=["post"])
    def rollback(self, request, pk=None):
        """Re-apply this revision: its objects are restored (ids kept) and published as a new
        revision that records rollback_of."""
        target = self.get_object()
        body = serializers.RevisionRollbackSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            revision = rollback(target, request.user, body.validated_data.get("message", ""))
        except RestoreError as err:
            return _problems("Not rolled back.", err)
        revision = self.get_queryset().get(pk=revision.pk)
        return Response(self.get_serializer(revision).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=None,
        responses={
            200: serializers.RevisionSerializer,
            409: OpenApiResponse(serializers.NotAwaitingSerializer, "not awaiting confirmation"),
        },
    )
    @action(detail=True, methods=["post"])
    def confirm(self, request, pk=None):
        """Keep this revision: it no longer rolls back by itself."""
        try:
            revision = confirm(self.get_object())
        except NotAwaiting as err:
            return Response({"detail": str(err), "confirm_state": err.state}, status=status.HTTP_409_CONFLICT)
        return Response(serializers.RevisionSerializer(self.get_queryset().get(pk=revision.pk)).data)

    @extend_schema(
        parameters=[
            OpenApiParameter("from", int, description="revision number to compare with (default: the one before this)"),
            *CHANGES_PAGE,
            OpenApiParameter("files", bool, description="with every node's rendered files compared (default true)"),
        ],
        responses=serializers.RevisionDiffSerializer,
    )
    @action(detail=True, methods=["get"])
    def diff(self, request, pk=None):
        """What this revision changed: the objects, and every node's rendered files."""
        to = self.get_object()
        since = self._since(request, to)
        problems, files = [], []
        nodes = Node.objects.order_by("name") if bool_param(request, "files", True) else []
        for node in nodes:
            try:
                new = node_files(to, node)
                old = node_files(since, node) if since else {}
            except PublishError as err:
                problems.append(f"{node.name}: {err}")
                continue
            old_label = f"r{since.number}" if since else "none"
            for change in file_changes(old, new, old_label, f"r{to.number}"):
                files.append({"node": node.name, **change})
        body = {
            "from_revision": since.number if since else None,
            "to_revision": to.number,
            **_changes(request, since.snapshot if since else {}, to.snapshot),
            "files": files,
            "problems": problems,
        }
        return Response(serializers.RevisionDiffSerializer(body).data)

    @staticmethod
    def _since(request, to):
        number = int_param(request, "from")
        if number is None:
            return Revision.objects.filter(number__lt=to.number).order_by("-number").first()
        since = Revision.objects.filter(number=number).first()
        if since is None:
            raise NotFound(f"No revision {number}.")
        return since


class BackupView(APIView):
    """The whole configuration as one JSON document, private keys included (admins only).

    The same configuration always gives the same bytes; the time is in the file name."""

    admin_only = True

    @extend_schema(responses={(200, "application/json"): serializers.BackupDocumentSerializer})
    def get(self, request):
        response = HttpResponse(backup.render(backup.export_document()), content_type="application/json")
        name = f"fulcrum-backup-{timezone.now():%Y%m%dT%H%M%SZ}.json"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


class BackupRestoreView(APIView):
    """Make the objects equal to a backup (admins only); a dry run only shows what would change.

    Objects are matched by name and keep their ids; nothing is published: the result shows
    as pending changes until it is applied."""

    admin_only = True

    @extend_schema(
        request=serializers.BackupRestoreSerializer,
        responses={
            200: serializers.BackupRestoreResultSerializer,
            400: OpenApiResponse(serializers.PublishErrorSerializer, "not restored: the reasons, per object"),
        },
    )
    def post(self, request):
        body = serializers.BackupRestoreSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        dry_run = body.validated_data["dry_run"]
        try:
            result = restore(backup.read_document(body.validated_data["document"]), dry_run=dry_run)
        except backup.DocumentError as err:
            return _problems("Not a backup this appliance reads.", err)
        except RestoreError as err:
            return _problems("Not restored.", err)
        answer = {"changes": result.changes, "applied": not dry_run, "node_tokens": result.node_tokens}
        return Response(serializers.BackupRestoreResultSerializer(answer).data)
