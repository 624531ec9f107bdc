"""CRUD endpoints for the services app. Logic lives in the serializers and the compiler."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import viewsets

from services.api import serializers
from services.models import HealthCheck, Member, Pool, VirtualService


class VirtualServiceViewSet(viewsets.ModelViewSet):
    queryset = VirtualService.objects.select_related("default_pool")
    serializer_class = serializers.VirtualServiceSerializer


class PoolViewSet(viewsets.ModelViewSet):
    queryset = Pool.objects.prefetch_related("members").select_related("health_check")
    serializer_class = serializers.PoolSerializer


@extend_schema_view(
    list=extend_schema(parameters=[OpenApiParameter("pool", int, description="only this pool's members")])
)
class MemberViewSet(viewsets.ModelViewSet):
    queryset = Member.objects.select_related("pool")
    serializer_class = serializers.MemberSerializer

    def get_queryset(self):
        pool = self.request.query_params.get("pool")
        queryset = super().get_queryset()
        return queryset.filter(pool_id=pool) if pool and pool.isdigit() else queryset


class HealthCheckViewSet(viewsets.ModelViewSet):
    queryset = HealthCheck.objects.select_related("pool")
    serializer_class = serializers.HealthCheckSerializer
