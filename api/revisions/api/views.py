"""Revisions: apply (POST) and history."""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from cluster.models import Node
from revisions.api import serializers
from revisions.diff import file_changes, object_changes
from revisions.models import Revision
from revisions.publish import PublishError, node_revision, publish


class RevisionViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """History of applied revisions; POST applies the current objects as a new revision."""

    queryset = Revision.objects.select_related("author").prefetch_related("node_states__node")
    serializer_class = serializers.RevisionSerializer

    def get_serializer_class(self):
        if self.action == "retrieve":
            return serializers.RevisionDetailSerializer
        return super().get_serializer_class()

    @extend_schema(
        responses={
            201: serializers.RevisionSerializer,
            400: OpenApiResponse(serializers.PublishErrorSerializer, "not published: the reasons, per object"),
        }
    )
    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            revision = publish(request.user, serializer.validated_data.get("message", ""))
        except PublishError as err:
            problems = [{"path": p, "message": m} for p, m in err.problems]
            return Response({"detail": "Not published.", "problems": problems}, status=status.HTTP_400_BAD_REQUEST)
        revision = self.get_queryset().get(pk=revision.pk)
        return Response(self.get_serializer(revision).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[
            OpenApiParameter("from", int, description="revision number to compare with (default: the one before this)")
        ],
        responses=serializers.RevisionDiffSerializer,
    )
    @action(detail=True, methods=["get"])
    def diff(self, request, pk=None):
        """What this revision changed: the objects, and every node's rendered files."""
        to = self.get_object()
        since = self._since(request, to)
        problems, files = [], []
        for node in Node.objects.order_by("name"):
            try:
                new = node_revision(to, node).files
                old = node_revision(since, node).files if since else {}
            except PublishError as err:
                problems.append(f"{node.name}: {err}")
                continue
            old_label = f"r{since.number}" if since else "none"
            for change in file_changes(old, new, old_label, f"r{to.number}"):
                files.append({"node": node.name, **change})
        body = {
            "from_revision": since.number if since else None,
            "to_revision": to.number,
            "objects": object_changes(since.snapshot if since else {}, to.snapshot),
            "files": files,
            "problems": problems,
        }
        return Response(serializers.RevisionDiffSerializer(body).data)

    @staticmethod
    def _since(request, to):
        raw = request.query_params.get("from")
        if raw is None:
            return Revision.objects.filter(number__lt=to.number).order_by("-number").first()
        try:
            number = int(raw)
        except ValueError:
            raise ValidationError({"from": ["Must be a revision number."]}) from None
        since = Revision.objects.filter(number=number).first()
        if since is None:
            raise NotFound(f"No revision {number}.")
        return since
