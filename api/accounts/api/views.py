"""Sign-in (console sessions and API tokens), people, API tokens and the audit log."""

from django.contrib.auth import authenticate, get_user_model, login, logout, update_session_auth_hash
from django.db import transaction
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import ensure_csrf_cookie
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import AuthenticationFailed, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import audit
from accounts.api import serializers
from accounts.choices import AuditAction, Role
from accounts.exports import EXPORT_FORMATS, export_response
from accounts.filtersets import AUDIT_FILTERS, filter_audit
from accounts.models import ApiToken, AuditEntry, Profile, role_of
from accounts.permissions import IsOperatorOrAdmin, IsSignedIn, request_role
from accounts.throttling import OpenThrottledView, UsernameLocked, check_username
from fulcrum.concurrency import VersionedViewSetMixin, bump, expected_version


def _authenticate(request, username, password):
    """The person with these credentials; every outcome goes to the audit log."""
    try:
        check_username(username)
    except UsernameLocked:
        audit.record_event(AuditAction.SIGN_IN_LOCKED, request=request, actor_name=username, status_code=429)
        raise
    user = authenticate(request._request, username=username, password=password)
    if user is None or not user.is_active:
        known = get_user_model().objects.filter(username=username).first()
        audit.record_event(
            AuditAction.SIGN_IN_FAILED, request=request, actor=known, actor_name=username, status_code=403
        )
        raise AuthenticationFailed("Wrong username or password.")
    return user


class CredentialsView(OpenThrottledView):
    """Base for endpoints that take a username and password: open to all, throttled per
    address (``login`` rate) and per username (failed attempts)."""

    throttle_scope = "login"
    # What the audit log calls a request refused before the view records it (bad body, throttled).
    audit_actions = {"post": AuditAction.SIGN_IN_FAILED}


class LoginView(CredentialsView):
    """Start a console session. The answer sets the session and CSRF cookies."""

    @extend_schema(request=serializers.LoginSerializer, responses={200: serializers.MeSerializer})
    @method_decorator(ensure_csrf_cookie)
    def post(self, request):
        form = serializers.LoginSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        user = _authenticate(request, form.validated_data["username"], form.validated_data["password"])
        login(request._request, user)  # a new session key: no fixation
        audit.record_event(AuditAction.SIGN_IN, request=request, actor=user, obj=user, status_code=200)
        return Response(serializers.MeSerializer(user).data)


class LogoutView(APIView):
    """End the console session."""

    permission_classes = [IsSignedIn]
    audit_actions = {"post": AuditAction.SIGN_OUT}

    @extend_schema(request=None, responses={204: None})
    def post(self, request):
        audit.record_event(AuditAction.SIGN_OUT, request=request, obj=request.user, status_code=204)
        logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeView(APIView):
    """Who is signed in, with the role this request acts with; also hands the console its CSRF cookie."""

    permission_classes = [IsSignedIn]

    @extend_schema(responses={200: serializers.MeSerializer})
    @method_decorator(ensure_csrf_cookie)
    def get(self, request):
        return Response(serializers.MeSerializer(request.user, context={"request": request}).data)


class PasswordView(APIView):
    """Change your own password. Your other console sessions end; this one goes on. Your
    API tokens keep working unless ``revoke_tokens`` is true."""

    permission_classes = [IsSignedIn]
    audit_actions = {"post": AuditAction.PASSWORD_CHANGE}

    @extend_schema(request=serializers.PasswordChangeSerializer, responses={204: None})
    @transaction.atomic
    def post(self, request):
        form = serializers.PasswordChangeSerializer(data=request.data, context={"request": request})
        form.is_valid(raise_exception=True)
        user = request.user
        user.set_password(form.validated_data["new_password"])
        user.save(update_fields=["password"])
        if request.session.session_key:
            update_session_auth_hash(request._request, user)
        revoked = 0
        if form.validated_data["revoke_tokens"]:
            revoked = ApiToken.objects.filter(owner=user, revoked_at__isnull=True).update(revoked_at=timezone.now())
        detail = f"password changed; {revoked} API token(s) revoked" if revoked else "password changed"
        audit.record_event(
            AuditAction.PASSWORD_CHANGE,
            request=request,
            obj=user,
            status_code=204,
            changes={"password": "(changed)"},
            detail=detail,
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenView(CredentialsView):
    """Sign in for scripts and the CLI: a username and password give a new named API token
    (send it as ``Authorization: Bearer <token>``). The secret is shown only in this answer."""

    @extend_schema(
        request=serializers.SignInTokenSerializer,
        responses={201: serializers.SignInTokenResultSerializer, 429: OpenApiResponse(description="throttled")},
    )
    def post(self, request):
        form = serializers.SignInTokenSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        wanted = form.validated_data
        user = _authenticate(request, wanted["username"], wanted["password"])
        own = role_of(user)
        role = wanted.get("role", own)
        if Role.rank(role) > Role.rank(own):
            raise ValidationError({"role": [f"At most your own role ({own})."]})
        name = wanted.get("name") or f"sign-in-{timezone.now():%Y%m%d-%H%M%S}"
        token, secret = ApiToken.issue(user, name, role, ApiToken.expiry(wanted["expires_in_days"]))
        audit.record_event(
            AuditAction.SIGN_IN, request=request, actor=user, token=token, obj=token, status_code=201,
            changes={"name": token.name, "role": token.role, "expires_at": token.expires_at.isoformat()},
        )  # fmt: skip
        body = {"id": token.pk, "name": token.name, "token": secret, "role": token.role, "expires_at": token.expires_at}
        return Response(serializers.SignInTokenResultSerializer(body).data, status=status.HTTP_201_CREATED)


class UserViewSet(VersionedViewSetMixin, viewsets.ModelViewSet):
    """People (admins only). The last active admin cannot be removed, demoted or deactivated,
    and nobody can delete themselves."""

    admin_only = True
    queryset = get_user_model().objects.select_related("profile").order_by("username")
    serializer_class = serializers.UserSerializer

    # The version lives on the profile (Django's user has none).
    def _check(self, instance, expected):
        super()._check(Profile.objects.get_or_create(user=instance)[0], expected)

    @transaction.atomic
    def perform_update(self, serializer):
        self._check(serializer.instance, expected_version(self.request, serializer))
        serializer.save()
        bump(serializer.instance.profile)

    def perform_destroy(self, user):
        if user.pk == self.request.user.pk:
            raise ValidationError({"detail": "You cannot delete yourself."})
        others = serializers.active_admins().exclude(pk=user.pk)
        if serializers.active_admins().filter(pk=user.pk).exists() and not others.exists():
            raise ValidationError({"detail": "This is the last active admin: make another admin first."})
        user.delete()


class ApiTokenViewSet(
    mixins.CreateModelMixin, mixins.DestroyModelMixin, viewsets.ReadOnlyModelViewSet
):  # fmt: skip
    """Named API tokens. Everyone manages their own (with at most their own role); admins
    see and revoke everyone's. ``DELETE`` revokes: the token stops working at once and
    stays listed as revoked, so the audit log can still name it."""

    queryset = ApiToken.objects.select_related("owner")
    serializer_class = serializers.ApiTokenSerializer
    permission_classes = [IsSignedIn]

    def get_queryset(self):
        queryset = super().get_queryset()
        return queryset if request_role(self.request) == Role.ADMIN else queryset.filter(owner=self.request.user)

    @extend_schema(responses={201: serializers.ApiTokenCreatedSerializer})
    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        token = serializer.save()
        body = serializers.ApiTokenCreatedSerializer(token, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED)

    def perform_destroy(self, token):
        if token.revoked_at is None:
            token.revoked_at = timezone.now()
            token.save(update_fields=["revoked_at"])


@extend_schema_view(list=extend_schema(parameters=AUDIT_FILTERS))
class AuditEntryViewSet(viewsets.ReadOnlyModelViewSet):
    """The audit log (admins and operators), newest first: every change made through the
    API, and every sign-in, sign-out and failed sign-in. It cannot be changed or deleted."""

    queryset = AuditEntry.objects.all()
    serializer_class = serializers.AuditEntrySerializer
    permission_classes = [IsOperatorOrAdmin]

    def get_queryset(self):
        return filter_audit(super().get_queryset(), self.request.query_params)

    def perform_content_negotiation(self, request, force=False):
        # On export, ?format= names the file format, not one of DRF's renderers.
        export = "export" in getattr(self, "action_map", {}).values()
        return super().perform_content_negotiation(request, force=force or export)

    @extend_schema(
        parameters=[
            *AUDIT_FILTERS,
            OpenApiParameter("format", str, enum=list(EXPORT_FORMATS), description="csv (default) or jsonl"),
        ],
        responses={(200, "text/csv"): str, (200, "application/jsonl"): str},
    )
    @action(detail=False, methods=["get"], pagination_class=None)
    def export(self, request):
        """The entries the same filters select, as a CSV or JSON Lines download (streamed)."""
        return export_response(self.get_queryset(), request.query_params.get("format", "csv"))
