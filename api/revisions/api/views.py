"""Revisions: apply (POST) and history."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.response import Response

from revisions.api import serializers
from revisions.models import Revision
from revisions.publish import PublishError, publish


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
