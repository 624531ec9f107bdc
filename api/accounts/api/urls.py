from django.urls import path
from rest_framework.routers import DefaultRouter

from accounts.api import views

router = DefaultRouter(trailing_slash=True)
router.register("users", views.UserViewSet)
router.register("tokens", views.ApiTokenViewSet)
router.register("audit", views.AuditEntryViewSet)

urlpatterns = [
    path("auth/login/", views.LoginView.as_view(), name="auth-login"),
    path("auth/logout/", views.LogoutView.as_view(), name="auth-logout"),
    path("auth/me/", views.MeView.as_view(), name="auth-me"),
    path("auth/password/", views.PasswordView.as_view(), name="auth-password"),
    path("auth/token/", views.TokenView.as_view(), name="auth-token"),
    *router.urls,
]
