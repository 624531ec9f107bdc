"""Nodes, and the node agent's protocol: long-poll for the desired revision, report the outcome."""

import threading
import time

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import audit
from accounts.choices import AuditAction
from accounts.throttling import OpenThrottledView
from cluster import handover, join, replication, standby
from cluster.api import serializers
from cluster.authentication import IsNode, NodeTokenAuthentication
from cluster.models import DaemonEvent, HaEvent, HaGroup, IpvsSync, JoinCode, Node
from fulcrum.concurrency import IF_MATCH, VersionedViewSetMixin, bump, check_version, expected_version
from fulcrum.pagination import int_param
from revisions.api.serializers import PublishErrorSerializer
from revisions.choices import ConfirmState, NodeRevisionState
from revisions.models import NodeRevision, Revision
from revisions.news import NEWS
from revisions.problems import refused_body, report_problems
from revisions.publish import PublishError, node_revision, publish_node_standby
from revisions.rollback import confirm_deadline, expire_confirmations

LONG_POLL_MAX_S = 55
# Long-polls that may wait at once in one API process. Each holds one of its threads
# (api/gunicorn.conf.py: threads), and the others are left to everything else. One more
# is answered 503 at once, with when to try again.
LONG_POLL_WAITERS = 96
LONG_POLL_FULL_RETRY_S = 5
WAITERS = threading.BoundedSemaphore(LONG_POLL_WAITERS)


class NodeViewSet(VersionedViewSetMixin, viewsets.ModelViewSet):
    """Appliance nodes. Creating one returns its agent token once; it cannot be read again."""

    queryset = Node.objects.with_applied_revision()
    operator_actions = {"standby"}  # maintenance handover (accounts.permissions)

    def get_serializer_class(self):
        return serializers.NodeCreateSerializer if self.action == "create" else serializers.NodeSerializer

    @extend_schema(
        request=serializers.NodeStandbySerializer,
        responses={
            200: serializers.NodeStandbyResultSerializer,
            409: OpenApiResponse(PublishErrorSerializer, "not changed: the node is not live yet, or the check failed"),
        },
    )
    @action(detail=True, methods=["post"])
    def standby(self, request, pk=None):
        """Hand the node's master roles to its peers now (maintenance), or let it take part again.

        Published as the next revision with only this change; the node's VRRP instances go
        to FAULT, so the peers take over at once whether or not the groups preempt."""
        node = self.get_object()
        serializer = serializers.NodeStandbySerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            revision = publish_node_standby(node, serializer.validated_data["standby"], request.user)
        except PublishError as err:
            body = refused_body("Not changed.", err.problems, err.refusal)
            return Response(body, status=status.HTTP_409_CONFLICT)
        node.refresh_from_db()
        return Response({"node": serializers.NodeSerializer(node).data, "revision": revision.number})


class HaGroupViewSet(VersionedViewSetMixin, viewsets.ModelViewSet):
    """HA groups: VRRP instances with per-node priorities. Applied with the next revision."""

    queryset = HaGroup.objects.prefetch_related("nodes__node")
    serializer_class = serializers.HaGroupSerializer


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter("node", str, description="only this node's events (its name)"),
            OpenApiParameter("group", str, description="only this HA group's events"),
            OpenApiParameter("after", int, description="only events with a larger id (new since the last fetch)"),
        ]
    )
)
class HaEventViewSet(viewsets.ReadOnlyModelViewSet):
    """VRRP role changes reported by the nodes' agents, newest first."""

    queryset = HaEvent.objects.select_related("node")
    serializer_class = serializers.HaEventSerializer

    def get_queryset(self):
        queryset = super().get_queryset()
        node, group = (self.request.query_params.get(k) for k in ("node", "group"))
        if node:
            queryset = queryset.filter(node__name=node)
        if group:
            queryset = queryset.filter(group=group)
        after = int_param(self.request, "after", None)
        return queryset.filter(id__gt=after) if after is not None else queryset


class IpvsSyncView(APIView):
    """IPVS connection sync between the balancers: one settings object. Applied with the next revision."""

    @extend_schema(responses=serializers.IpvsSyncSerializer)
    def get(self, request):
        return Response(serializers.IpvsSyncSerializer(IpvsSync.load()).data)

    @extend_schema(
        request=serializers.IpvsSyncSerializer, responses=serializers.IpvsSyncSerializer, parameters=[IF_MATCH]
    )
    def put(self, request):
        return self._save(request, partial=False)

    @extend_schema(
        request=serializers.IpvsSyncSerializer, responses=serializers.IpvsSyncSerializer, parameters=[IF_MATCH]
    )
    def patch(self, request):
        return self._save(request, partial=True)

    @transaction.atomic
    def _save(self, request, partial):
        form = serializers.IpvsSyncSerializer(IpvsSync.load(), data=request.data, partial=partial)
        form.is_valid(raise_exception=True)
        check_version(form.instance, expected_version(request, form))
        form.save()
        bump(form.instance)
        return Response(serializers.IpvsSyncSerializer(form.instance).data)


class AgentView(APIView):
    authentication_classes = [NodeTokenAuthentication]
    permission_classes = [IsNode]


class AgentDesiredView(AgentView):
    """Long-poll: answers at once when the newest revision differs from ``known``, or when the
    agent holds ``known`` as awaiting confirmation (``awaiting=1``) and it no longer awaits."""

    @extend_schema(
        parameters=[
            OpenApiParameter("known", int, description="revision number the node runs (0: none)"),
            OpenApiParameter("wait", int, description=f"seconds to wait for a change (max {LONG_POLL_MAX_S})"),
            OpenApiParameter(
                "awaiting",
                int,
                enum=[0, 1],
                description="1: the node holds `known` as awaiting confirmation; answer at once when it stops "
                "awaiting (confirmed), so that the node stops watching its deadline",
            ),
        ],
        responses={
            200: serializers.AgentBundleSerializer,
            204: OpenApiResponse(description="no change"),
            409: OpenApiResponse(description="this node's files for the revision failed their check: nothing to apply"),
            503: OpenApiResponse(
                description="as many agents as this API process lets wait are waiting: try again after Retry-After s"
            ),
        },
    )
    def get(self, request):
        known = int_param(request, "known", 0)
        awaiting = int_param(request, "awaiting", 0, minimum=0, maximum=1)
        deadline = time.monotonic() + min(max(int_param(request, "wait", 0), 0), LONG_POLL_MAX_S)
        # A revision applied with confirm rolls back when its deadline passes unconfirmed:
        # the agents poll all the time, so the poll that spans the deadline does it.
        confirm_by = confirm_deadline()
        waiting = False
        try:
            while True:
                seen = NEWS.seen()
                if confirm_by is not None and timezone.now() >= confirm_by:
                    expire_confirmations()
                    confirm_by = None
                # Without its snapshot: every waiting agent reads this at each wake.
                newest = Revision.objects.defer("snapshot").order_by("-number").first()
                if newest is not None and _is_news(newest, known, awaiting):
                    return self._bundle(newest, request.auth)
                left = deadline - time.monotonic()
                if left <= 0:
                    return Response(status=status.HTTP_204_NO_CONTENT)
                if not waiting:
                    if not WAITERS.acquire(blocking=False):
                        return Response(
                            {"detail": f"{LONG_POLL_WAITERS} agents already wait on this API process; try again."},
                            status=status.HTTP_503_SERVICE_UNAVAILABLE,
                            headers={"Retry-After": str(LONG_POLL_FULL_RETRY_S)},
                        )
                    waiting = True
                if confirm_by is not None:
                    left = min(left, (confirm_by - timezone.now()).total_seconds() + 0.05)
                if not connection.in_atomic_block:  # (a test's transaction keeps its connection)
                    connection.close()  # a waiting poll holds no connection
                NEWS.wait(seen, left)
        finally:
            if waiting:
                WAITERS.release()

    def _bundle(self, revision, node):
        try:
            copy = node_revision(revision, node)
        except PublishError as err:  # the node's own render failed its check: say why, apply nothing
            return Response({"detail": str(err)}, status=status.HTTP_409_CONFLICT)
        bundle = {
            "revision": revision.number,
            "node": node.name,
            "files": copy.files,
            "confirm_by": revision.confirm_by if revision.confirm_state == ConfirmState.AWAITING else None,
        }
        return Response(serializers.AgentBundleSerializer(bundle).data)


def _is_news(newest, known, awaiting):
    """Whether an agent that runs ``known`` must hear of ``newest``: another revision, or its own
    one no longer awaiting confirmation while the agent watches that deadline (``awaiting``)."""
    return newest.number != known or (awaiting and newest.confirm_state != ConfirmState.AWAITING)


class AgentReportView(AgentView):
    """The agent's outcome for one revision."""

    @extend_schema(
        request=serializers.AgentReportSerializer,
        responses={204: None, 404: OpenApiResponse(description="this node was never sent that revision")},
    )
    def post(self, request):
        report = serializers.AgentReportSerializer(data=request.data)
        report.is_valid(raise_exception=True)
        node = request.auth
        copy = (
            NodeRevision.objects.select_related("revision", "node")
            .defer("files", "revision__snapshot")  # a failure's report reads them (report_problems)
            .filter(node=node, revision__number=report.validated_data["revision"])
            .first()
        )
        if copy is None:
            raise NotFound("This node was never sent that revision.")
        copy.state = report.validated_data["state"]
        copy.message = report.validated_data["message"]
        failed = copy.state == NodeRevisionState.FAILED
        copy.problems = report_problems(copy, copy.message) if failed else []
        copy.save(update_fields=["state", "message", "problems", "updated_at"])
        if copy.state == "applied":
            Node.objects.filter(pk=node.pk).update(applied_revision=copy.revision)
        return Response(status=status.HTTP_204_NO_CONTENT)


class AgentStatusView(AgentView):
    """What the agent sees on its node: its networks, the IPVS schedulers in force, DLLC members' loads,
    its VRRP states, and the appliance's part in the management VIP."""

    @extend_schema(request=serializers.AgentStatusSerializer, responses={204: None})
    def post(self, request):
        status_ = serializers.AgentStatusSerializer(data=request.data)
        status_.is_valid(raise_exception=True)
        node = request.auth
        node.networks = status_.validated_data["networks"]
        node.ipvs_status = status_.validated_data["ipvs"]
        node.member_status = serializers.MemberStatusSerializer(status_.validated_data["members"], many=True).data
        node.vrrp_status = serializers.VrrpStatusSerializer(status_.validated_data["vrrp"], many=True).data
        node.management = status_.validated_data["management"]
        node.status_at = timezone.now()
        node.save(update_fields=["networks", "ipvs_status", "member_status", "vrrp_status", "management", "status_at"])
        return Response(status=status.HTTP_204_NO_CONTENT)


class AgentEventsView(AgentView):
    """VRRP role changes the agent saw on its node (time, group, old -> new state, reason)."""

    @extend_schema(request=serializers.AgentEventsSerializer, responses={204: None})
    def post(self, request):
        batch = serializers.AgentEventsSerializer(data=request.data)
        batch.is_valid(raise_exception=True)
        HaEvent.objects.bulk_create(HaEvent(node=request.auth, **e) for e in batch.validated_data["events"])
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter("node", str, description="only this node's events (its name)"),
            OpenApiParameter("daemon", str, description="only this daemon's events (haproxy, keepalived)"),
        ]
    )
)
class DaemonEventViewSet(viewsets.ReadOnlyModelViewSet):
    """HAProxy or keepalived found stopped by a node's agent between applies, and started again
    from the live configuration (or not, and why), newest first."""

    queryset = DaemonEvent.objects.select_related("node")
    serializer_class = serializers.DaemonEventSerializer

    def get_queryset(self):
        queryset = super().get_queryset()
        node, daemon = (self.request.query_params.get(k) for k in ("node", "daemon"))
        if node:
            queryset = queryset.filter(node__name=node)
        if daemon:
            queryset = queryset.filter(daemon=daemon)
        return queryset


class AgentDaemonEventsView(AgentView):
    """Daemons the agent found stopped on its node and started again (or could not)."""

    @extend_schema(request=serializers.AgentDaemonEventsSerializer, responses={204: None})
    def post(self, request):
        batch = serializers.AgentDaemonEventsSerializer(data=request.data)
        batch.is_valid(raise_exception=True)
        node = request.auth
        with transaction.atomic():
            DaemonEvent.objects.bulk_create(DaemonEvent(node=node, **e) for e in batch.validated_data["events"])
            kept = DaemonEvent.objects.filter(node=node).values_list("id", flat=True)[DaemonEvent.KEPT_PER_NODE :]
            DaemonEvent.objects.filter(node=node, id__in=list(kept)).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class JoinCodeViewSet(mixins.CreateModelMixin, mixins.DestroyModelMixin, viewsets.ReadOnlyModelViewSet):
    """One-time codes that let a new appliance join this cluster (admins only). Creating one
    shows the code, this once; it works once, for 30 minutes. ``DELETE`` revokes it."""

    admin_only = True
    queryset = JoinCode.objects.select_related("created_by", "node")
    serializer_class = serializers.JoinCodeSerializer

    @extend_schema(request=None, responses={201: serializers.JoinCodeCreatedSerializer})
    def create(self, request):
        row, row.code = join.issue(request.user)
        return Response(serializers.JoinCodeCreatedSerializer(row).data, status=status.HTTP_201_CREATED)


class JoinView(OpenThrottledView):
    """For a new appliance joining this cluster with a join code (no sign-in: the code is the
    credential); throttled per address like signing in."""

    throttle_scope = "join"
    audit_actions = {"post": AuditAction.APPLIANCE_JOIN_REFUSED}


class JoinDiscoveryView(JoinView):
    @extend_schema(
        responses={200: serializers.JoinDiscoverySerializer, 404: OpenApiResponse(description="no such usable code")}
    )
    def get(self, request, code_id):
        """The cluster's information for a join code's ID (its first four characters), signed
        with the code's secret: check the signature, then pin the certificate in it."""
        answer = join.discovery(code_id.upper())
        if answer is None:
            raise NotFound("No usable join code with this ID: wrong, used, revoked or expired.")
        return Response(serializers.JoinDiscoverySerializer(answer).data)


class JoinRedeemView(JoinView):
    @extend_schema(
        request=serializers.JoinSerializer,
        responses={
            201: serializers.JoinResultSerializer,
            400: OpenApiResponse(description="refused: wrong, used or expired code, another version, a clock off"),
            409: OpenApiResponse(description="refused: the name or address already belongs to a node"),
            429: OpenApiResponse(description="throttled"),
        },
    )
    def post(self, request):
        """Join: spends the code and registers the appliance as a node; its agent token is in
        the answer, once. A refusal says why and changes nothing."""
        form = serializers.JoinSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        wanted = form.validated_data
        actor = f"appliance {wanted['name']}"
        try:
            node, token = join.redeem(
                wanted["join_code"], wanted["name"], wanted["address"], wanted["version"], wanted["time"]
            )
        except join.JoinRefused as refused:
            audit.record_event(
                AuditAction.APPLIANCE_JOIN_REFUSED, request=request, actor_name=actor, status_code=refused.status,
                detail=refused.message, object_type="node", object_name=wanted["name"],
            )  # fmt: skip
            return Response({refused.field: [refused.message]}, status=refused.status)
        audit.record_event(
            AuditAction.APPLIANCE_JOIN, request=request, actor_name=actor, obj=node, status_code=201,
            changes={"name": node.name, "address": node.address, "version": wanted["version"]},
        )  # fmt: skip
        body = {
            "node": node.name, "token": token, "version": settings.FULCRUM_VERSION,
            "replication": join.replication_offer(node),
        }  # fmt: skip
        return Response(serializers.JoinResultSerializer(body).data, status=status.HTTP_201_CREATED)


class MembershipView(APIView):
    """Whether this appliance joined another's cluster, whether it takes changes, and where
    the cluster's console is: the console's sign-in page and its read-only banner say so (no
    sign-in needed; it names no secret)."""

    permission_classes = [permissions.AllowAny]
    authentication_classes = []

    @extend_schema(responses={200: serializers.MembershipSerializer})
    def get(self, request):
        joined = join.membership() or {"member_of": None, "node": None}
        body = {**joined, "read_only": standby.read_only(), "primary": standby.primary_console()}
        return Response(serializers.MembershipSerializer(body).data)


class ReplicationView(APIView):
    """How the cluster database replicates: this appliance's role, and on the primary each
    connected standby, its lag, and whether commits wait for it (synchronous) or not
    (catching up, degraded: a standby is away)."""

    @extend_schema(responses={200: serializers.ReplicationSerializer})
    def get(self, request):
        connection.ensure_connection()
        state = replication.read_status(connection.connection)
        return Response(serializers.ReplicationSerializer(state.as_json()).data)


class SwitchoverView(APIView):
    """Hand the management VIP, and the writable cluster database with it, over to the
    synchronous standby, on purpose (admins only; at the management VIP). Nothing is lost:
    this appliance's database is fenced, the standby catches up, then it is promoted and takes
    the VIP; this one follows it as its standby. The answer comes once it has started; the
    handover takes seconds, during which changes are refused (503) and the console signs in
    again at most once. Refused (409) when this appliance does not hold the VIP or no standby
    is synchronous."""

    admin_only = True
    audit_actions = {"post": AuditAction.CLUSTER_SWITCHOVER}

    @extend_schema(
        request=None,
        responses={
            202: serializers.SwitchoverSerializer,
            409: OpenApiResponse(description="refused: no management VIP here, or no synchronous standby"),
        },
    )
    def post(self, request):
        def record(standby, code=202, why=""):
            audit.record_event(
                AuditAction.CLUSTER_SWITCHOVER, request=request, status_code=code, object_type="node",
                object_name=standby, detail=why or f"the management VIP goes to {standby}",
            )  # fmt: skip

        ready = []

        def started(standby):  # before the root side starts: this database still takes changes
            ready.append(standby)
            record(standby)

        try:
            standby = handover.switchover(started)
        except handover.Refused as refused:
            if ready:  # audited as started: say that it did not
                record(ready[0], status.HTTP_409_CONFLICT, str(refused))
            return Response({"detail": str(refused)}, status=status.HTTP_409_CONFLICT)
        detail = f"Switching over: {standby} takes the management VIP and the cluster database; this one follows it."
        return Response({"standby": standby, "detail": detail}, status=status.HTTP_202_ACCEPTED)
