from django.urls import path
from rest_framework.routers import DefaultRouter

from telemetry.api import views

router = DefaultRouter(trailing_slash=True)
router.register("health", views.MemberHealthViewSet, basename="health")
router.register("health-events", views.HealthEventViewSet)
urlpatterns = router.urls + [
    path("agent/telemetry/", views.AgentTelemetryView.as_view(), name="agent-telemetry"),
    path("metrics/services/", views.ServiceMetricsView.as_view(), name="metrics-services"),
    path("metrics/members/", views.MemberMetricsView.as_view(), name="metrics-members"),
    path("overview/", views.OverviewView.as_view(), name="overview"),
]
