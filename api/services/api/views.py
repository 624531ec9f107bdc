"""CRUD endpoints for the services app. Logic lives in the serializers and the compiler."""

from django.db import transaction
from django.db.models import Count, F
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from accounts import audit
from fulcrum.concurrency import VersionedViewSetMixin
from fulcrum.filters import Ordering, Search
from fulcrum.pagination import int_param
from revisions.api.serializers import PublishErrorSerializer
from revisions.problems import refused_body
from revisions.publish import PublishError, publish_member_runtime
from services.api import bulk as batches
from services.api import serializers
from services.models import HealthCheck, Member, Pool, Rule, VirtualService


class VirtualServiceViewSet(VersionedViewSetMixin, viewsets.ModelViewSet):
    """Virtual services: a VIP and port, layer 7 (HAProxy) or layer 4 (IPVS). Applied with the next revision."""

    queryset = VirtualService.objects.select_related("default_pool").prefetch_related("sni_certificates")
    serializer_class = serializers.VirtualServiceSerializer
    filter_backends = [Search, Ordering]
    search_fields = ["name", "description", "vip", "port", "protocol", "forwarding", "default_pool__name"]
    ordering_fields = {
        "name": "name",
        "vip": "vip",
        "port": "port",
        "protocol": "protocol",
        "default_pool_name": "default_pool__name",
        "enabled": "enabled",
    }

    @extend_schema(request=serializers.ListenerCheckSerializer, responses={204: None})
    @action(detail=False, methods=["post"], url_path="check-listener")
    def check_listener(self, request):
        """Whether a new service could have this name and listener (VIP, port, protocol): 204, or
        400 with the field errors creating it would give. Nothing is saved."""
        serializers.ListenerCheckSerializer(data=request.data).is_valid(raise_exception=True)
        return Response(status=status.HTTP_204_NO_CONTENT)


class PoolViewSet(VersionedViewSetMixin, viewsets.ModelViewSet):
    """Pools: the members a service balances over, with algorithm and persistence. Applied with the next revision."""

    queryset = Pool.objects.prefetch_related("members").select_related("health_check")
    serializer_class = serializers.PoolSerializer
    filter_backends = [Search, Ordering]
    search_fields = [
        "name",
        "description",
        "algorithm",
        "health_check__type",
        "health_check__path",
        "members__name",
        "members__address",
    ]
    ordering_fields = {
        "name": "name",
        "algorithm": "algorithm",
        "members": "member_count",
        "health_check": "health_check__type",
    }

    def get_queryset(self):
        queryset = super().get_queryset()
        # Counted for the list's order only: a write locks its row, and a count cannot be locked.
        return queryset.annotate(member_count=Count("members")) if self.action == "list" else queryset


@extend_schema_view(
    list=extend_schema(
        parameters=[OpenApiParameter("virtual_service", int, description="only this service's rules, in order")]
    )
)
class RuleViewSet(VersionedViewSetMixin, viewsets.ModelViewSet):
    """Content-switching rules. Evaluated by ``position`` within their service, first match wins;
    set ``position`` to move a rule, and the others shift to keep 0..n-1."""

    queryset = Rule.objects.select_related("virtual_service", "pool")
    serializer_class = serializers.RuleSerializer

    def get_queryset(self):
        service = int_param(self.request, "virtual_service")
        queryset = super().get_queryset()
        return queryset.filter(virtual_service_id=service) if service is not None else queryset

    @transaction.atomic
    def perform_destroy(self, instance):
        later = Rule.objects.filter(virtual_service=instance.virtual_service, position__gt=instance.position)
        instance.delete()
        later.update(position=F("position") - 1)

    @extend_schema(
        request=batches.BulkRulesSerializer,
        responses={200: batches.BulkRulesResultSerializer, 400: OpenApiResponse(description="the bad rows, by index")},
    )
    @action(detail=False, methods=["post"], url_path="bulk")
    def bulk(self, request):
        """Many rules of one service in one transaction: ``append`` them, or ``replace`` the
        service's rules with them (in this order). Checked row by row, then verified together;
        one bad row refuses the batch, named by its index in ``rules``. Applied with the next revision."""
        return _batch(request, batches.BulkRulesSerializer(data=request.data), "rule-bulk")

    @extend_schema(request=batches.BulkRuleDeleteSerializer, responses={200: batches.BulkRulesResultSerializer})
    @action(detail=False, methods=["post"], url_path="bulk-delete")
    def bulk_delete(self, request):
        """Delete a service's rules by name, in one transaction; the rest keep their order."""
        return _batch(request, batches.BulkRuleDeleteSerializer(data=request.data), "rule-bulk-delete")


@extend_schema_view(
    list=extend_schema(parameters=[OpenApiParameter("pool", int, description="only this pool's members")])
)
class MemberViewSet(VersionedViewSetMixin, viewsets.ModelViewSet):
    """Members of a pool (real servers). Applied with the next revision; `runtime/` changes a live one at once."""

    queryset = Member.objects.select_related("pool")
    serializer_class = serializers.MemberSerializer
    operator_actions = {"runtime"}  # enable, drain, disable (accounts.permissions)

    @extend_schema(
        request=serializers.MemberRuntimeSerializer,
        responses={
            200: serializers.MemberRuntimeResultSerializer,
            409: OpenApiResponse(PublishErrorSerializer, "not changed: not live yet, or the check failed"),
        },
    )
    @action(detail=True, methods=["post"])
    def runtime(self, request, pk=None):
        """Change a live member's weight or state now, without a reload and without applying
        other pending changes: published as the next revision, made through HAProxy's runtime API."""
        member = self.get_object()
        serializer = serializers.MemberRuntimeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            revision = publish_member_runtime(member, serializer.validated_data, request.user)
        except PublishError as err:
            body = refused_body("Not changed.", err.problems, err.refusal)
            return Response(body, status=status.HTTP_409_CONFLICT)
        member.refresh_from_db()
        return Response({"member": serializers.MemberSerializer(member).data, "revision": revision.number})

    @extend_schema(
        request=batches.BulkMembersSerializer,
        responses={
            200: batches.BulkMembersResultSerializer,
            400: OpenApiResponse(description="the bad rows, by index"),
        },
    )
    @action(detail=False, methods=["post"], url_path="bulk")
    def bulk(self, request):
        """Many members of one pool in one transaction: ``append`` them, or ``replace`` the
        pool's members with them. Checked row by row, then verified together; one bad row
        refuses the batch, named by its index in ``members``. Applied with the next revision."""
        return _batch(request, batches.BulkMembersSerializer(data=request.data), "member-bulk")

    @extend_schema(request=batches.BulkMemberDeleteSerializer, responses={200: batches.BulkMembersResultSerializer})
    @action(detail=False, methods=["post"], url_path="bulk-delete")
    def bulk_delete(self, request):
        """Delete a pool's members by name, in one transaction."""
        return _batch(request, batches.BulkMemberDeleteSerializer(data=request.data), "member-bulk-delete")

    def get_queryset(self):
        pool = int_param(self.request, "pool")
        queryset = super().get_queryset()
        return queryset.filter(pool_id=pool) if pool is not None else queryset


class HealthCheckViewSet(VersionedViewSetMixin, viewsets.ModelViewSet):
    """A pool's health check (one per pool). Applied with the next revision."""

    queryset = HealthCheck.objects.select_related("pool")
    serializer_class = serializers.HealthCheckSerializer


def _batch(request, serializer, event):
    """Run a batch (services.api.bulk), audit what it did to its parent, and answer it."""
    serializer.is_valid(raise_exception=True)
    done = serializer.save()
    kind = getattr(serializer, "batch", None) or type(serializer)
    parent = serializer.validated_data[kind.parent_field]
    counts = {k: done[k] for k in ("created", "updated", "deleted", kind.rows_field)}
    audit.record_event(event, request=request, obj=parent, status_code=200, changes=counts)
    return Response(done)
