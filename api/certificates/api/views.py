"""Endpoints for certificates. Checks live in the serializers and validators.py."""

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException
from rest_framework.response import Response

from certificates.api import serializers
from certificates.models import Certificate
from fulcrum.concurrency import VersionedViewSetMixin


class InUse(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "in_use"


@extend_schema_view(partial_update=extend_schema(responses=serializers.CertificateSerializer))
class CertificateViewSet(VersionedViewSetMixin, viewsets.ModelViewSet):
    """Certificates and CA bundles. Content is fixed once created: PATCH changes only the name
    and description, and a renewal is a new certificate the service is pointed at."""

    # The key is never read back: leave it in the database unless a save needs it.
    queryset = Certificate.objects.defer("private_key")
    serializer_class = serializers.CertificateSerializer
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_serializer_class(self):
        if self.action == "partial_update":
            return serializers.CertificateUpdateSerializer
        if self.action == "generate":
            return serializers.CertificateGenerateSerializer
        return super().get_serializer_class()

    def perform_destroy(self, instance):
        users = instance.users()
        if users:
            raise InUse(f"still in use by: {', '.join(users)}")
        instance.delete()

    @extend_schema(responses={201: serializers.CertificateSerializer})
    @action(detail=False, methods=["post"])
    def generate(self, request):
        """Make a new key and a self-signed certificate for it."""
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        certificate = serializer.save()
        body = serializers.CertificateSerializer(certificate, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED)
