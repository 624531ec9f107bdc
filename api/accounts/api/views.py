"""Sign-in for the console (session + CSRF cookie) and API tokens for scripts."""

from django.contrib.auth import authenticate, login, logout
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import ensure_csrf_cookie
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, status
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from accounts.api.serializers import LoginSerializer, TokenSerializer, UserSerializer


def _authenticate(request):
    form = LoginSerializer(data=request.data)
    form.is_valid(raise_exception=True)
    user = authenticate(request, **form.validated_data)
    if user is None or not user.is_active:
        raise AuthenticationFailed("Wrong username or password.")
    return user


class CredentialsView(APIView):
    """Base for endpoints that take a username and password: open to all, throttled."""

    permission_classes = [permissions.AllowAny]
    authentication_classes = []
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "login"


class LoginView(CredentialsView):
    """Start a console session. The answer sets the session and CSRF cookies."""

    @extend_schema(request=LoginSerializer, responses={200: UserSerializer})
    @method_decorator(ensure_csrf_cookie)
    def post(self, request):
        user = _authenticate(request)
        login(request._request, user)
        return Response(UserSerializer(user).data)


class LogoutView(APIView):
    @extend_schema(request=None, responses={204: None})
    def post(self, request):
        logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeView(APIView):
    """Who is signed in; also hands the console its CSRF cookie."""

    @extend_schema(responses={200: UserSerializer})
    @method_decorator(ensure_csrf_cookie)
    def get(self, request):
        return Response(UserSerializer(request.user).data)


class TokenView(CredentialsView):
    """Exchange a username and password for the user's API token (send as ``Authorization: Token <key>``)."""

    @extend_schema(request=LoginSerializer, responses={200: TokenSerializer})
    def post(self, request):
        token, _ = Token.objects.get_or_create(user=_authenticate(request))
        return Response({"token": token.key})
