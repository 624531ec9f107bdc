from rest_framework.routers import DefaultRouter

from services.api import views

router = DefaultRouter(trailing_slash=True)
router.register("virtual-services", views.VirtualServiceViewSet)
router.register("rules", views.RuleViewSet)
router.register("pools", views.PoolViewSet)
router.register("members", views.MemberViewSet)
router.register("health-checks", views.HealthCheckViewSet)
urlpatterns = router.urls
