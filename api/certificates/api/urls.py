from rest_framework.routers import DefaultRouter

from certificates.api import views

router = DefaultRouter(trailing_slash=True)
router.register("certificates", views.CertificateViewSet)
urlpatterns = router.urls
