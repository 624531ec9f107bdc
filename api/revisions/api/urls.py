from django.urls import path
from rest_framework.routers import DefaultRouter

from revisions.api import views

router = DefaultRouter(trailing_slash=True)
router.register("revisions", views.RevisionViewSet)
urlpatterns = router.urls + [
    path("backup/", views.BackupView.as_view(), name="backup"),
    path("backup/restore/", views.BackupRestoreView.as_view(), name="backup-restore"),
]
