from django.urls import path
from rest_framework.routers import DefaultRouter

from cluster.api import views

router = DefaultRouter(trailing_slash=True)
router.register("nodes", views.NodeViewSet)
router.register("ha-groups", views.HaGroupViewSet)
router.register("ha-events", views.HaEventViewSet)
router.register("daemon-events", views.DaemonEventViewSet)
router.register("join-codes", views.JoinCodeViewSet)
urlpatterns = router.urls + [
    path("agent/desired/", views.AgentDesiredView.as_view(), name="agent-desired"),
    path("agent/reports/", views.AgentReportView.as_view(), name="agent-reports"),
    path("agent/status/", views.AgentStatusView.as_view(), name="agent-status"),
    path("agent/events/", views.AgentEventsView.as_view(), name="agent-events"),
    path("agent/daemon-events/", views.AgentDaemonEventsView.as_view(), name="agent-daemon-events"),
    path("ipvs-sync/", views.IpvsSyncView.as_view(), name="ipvs-sync"),
    path("cluster/", views.MembershipView.as_view(), name="cluster-membership"),
    path("cluster/join/", views.JoinRedeemView.as_view(), name="cluster-join"),
    path("cluster/replication/", views.ReplicationView.as_view(), name="cluster-replication"),
    path("cluster/switchover/", views.SwitchoverView.as_view(), name="cluster-switchover"),
    path("cluster/join/<str:code_id>/", views.JoinDiscoveryView.as_view(), name="cluster-join-discovery"),
]
