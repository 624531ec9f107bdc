"""Telemetry: the agents' reports in, traffic graphs, member health and the dashboard out."""

from django.db.models import Q
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from cluster.api.views import AgentView
from fulcrum.pagination import int_param
from services.models import Member, Rule, VirtualService
from telemetry import ingest, series
from telemetry.api import serializers
from telemetry.models import HealthEvent, MemberHealth
from telemetry.overview import overview


class AgentTelemetryView(AgentView):
    """Traffic and member health the agent saw on its node (every 10 s)."""

    @extend_schema(request=serializers.AgentTelemetrySerializer, responses={204: None})
    def post(self, request):
        report = serializers.AgentTelemetrySerializer(data=request.data)
        report.is_valid(raise_exception=True)
        ingest.record(request.auth, report.validated_data, timezone.now())
        return Response(status=status.HTTP_204_NO_CONTENT)


WINDOW_PARAMETERS = [
    OpenApiParameter(
        "minutes",
        {"type": "integer", "minimum": 1, "maximum": series.MINUTES_MAX},
        description=f"how far back, in minutes (default {series.MINUTES_MAX})",
    ),
    OpenApiParameter("step", int, enum=list(series.STEPS_S), description="seconds per point (default 60)"),
]


def window(request):
    """The time window a metrics request asks for (``minutes``, ``step``)."""
    minutes = int_param(request, "minutes", series.MINUTES_MAX, minimum=1, maximum=series.MINUTES_MAX)
    step = int_param(request, "step", 60)
    if step not in series.STEPS_S:
        raise ValidationError({"step": [f"Must be one of {', '.join(map(str, series.STEPS_S))}."]})
    return series.Window.last(minutes, step, timezone.now())


def metrics(kind, objects, span, every=False):
    """The metrics answer (MetricsSerializer's shape) for ``objects`` ((id, name) pairs) of
    ``kind``; ``every``: they are all there are. Built as plain values, not through the
    serializer: a graph of every service can hold hundreds of thousands of points."""
    points = series.points(kind, span, ids=None if every else [pk for pk, _ in objects])
    return Response(
        {
            "step_s": span.step_s,
            "start": series.iso(span.start),
            "end": series.iso(span.end),
            "series": [{"id": pk, "name": name, "points": points.get(pk, [])} for pk, name in objects],
        }
    )


class ServiceMetricsView(APIView):
    """Each virtual service's traffic over the last hour, in buckets: rates per second added
    over the nodes, connections the nodes' latest gauges added."""

    @extend_schema(
        parameters=[*WINDOW_PARAMETERS, OpenApiParameter("service", int, description="only this service")],
        responses=serializers.MetricsSerializer,
    )
    def get(self, request):
        span = window(request)
        services = VirtualService.objects.order_by("name")
        service = int_param(request, "service")
        if service is not None:
            services = services.filter(pk=service)
        return metrics("service", list(services.values_list("id", "name")), span, every=service is None)


class MemberMetricsView(APIView):
    """A pool's members' traffic over the last hour, one series per member."""

    @extend_schema(
        parameters=[*WINDOW_PARAMETERS, OpenApiParameter("pool", int, required=True, description="the pool")],
        responses=serializers.MetricsSerializer,
    )
    def get(self, request):
        span = window(request)
        pool = int_param(request, "pool")
        if pool is None:
            raise ValidationError({"pool": ["This parameter is required."]})
        members = Member.objects.filter(pool_id=pool).order_by("name")
        return metrics("member", list(members.values_list("id", "name")), span)


def member_filter(request):
    """Q for the rows of the members a list request asks for (``member``, ``pool`` or ``service``)."""
    wanted = Q()
    member = int_param(request, "member")
    if member is not None:
        wanted &= Q(member_id=member)
    pool = int_param(request, "pool")
    if pool is not None:
        wanted &= Q(member__pool_id=pool)
    return wanted


def service_pools(service):
    """Q for a service's pools: its default pool and those its enabled rules send to."""
    used = Rule.objects.filter(virtual_service_id=service, enabled=True, pool__isnull=False).values("pool_id")
    default = VirtualService.objects.filter(pk=service).values("default_pool_id")
    return Q(member__pool_id__in=default) | Q(member__pool_id__in=used)


MEMBER_PARAMETER = OpenApiParameter("member", int, description="only this member's")
POOL_PARAMETER = OpenApiParameter("pool", int, description="only this pool's members'")


@extend_schema_view(
    list=extend_schema(
        parameters=[
            MEMBER_PARAMETER,
            POOL_PARAMETER,
            OpenApiParameter(
                "service", int, description="only the members of this service's pools (default and rules')"
            ),
        ]
    )
)
class MemberHealthViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Each member's health as each node last reported it."""

    queryset = MemberHealth.objects.select_related("member__pool", "node").order_by(
        "member__pool__name", "member__name", "node__name"
    )
    serializer_class = serializers.MemberHealthSerializer

    def get_queryset(self):
        queryset = super().get_queryset().filter(member_filter(self.request))
        service = int_param(self.request, "service")
        return queryset.filter(service_pools(service)) if service is not None else queryset


@extend_schema_view(list=extend_schema(parameters=[MEMBER_PARAMETER, POOL_PARAMETER]))
class HealthEventViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Members' status changes as the nodes saw them, newest first (kept 7 days, 200 per member)."""

    queryset = HealthEvent.objects.select_related("member__pool", "node").order_by("-at", "-id")
    serializer_class = serializers.HealthEventSerializer

    def get_queryset(self):
        return super().get_queryset().filter(member_filter(self.request))


class OverviewView(APIView):
    """The dashboard in one call: every service's state and current traffic (the last minute),
    the nodes, the number of pending changes and the newest revision."""

    @extend_schema(responses=serializers.OverviewSerializer)
    def get(self, request):
        data = overview(timezone.now())
        context = {"node_count": data["node_count"]}
        return Response(serializers.OverviewSerializer(data, context=context).data)
