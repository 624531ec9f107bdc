from rest_framework.routers import DefaultRouter

from revisions.api import views

router = DefaultRouter(trailing_slash=True)
router.register("revisions", views.RevisionViewSet)
urlpatterns = router.urls
