"""Serializers for certificates: upload, self-signed generation, and name/description updates.

The private key and its passphrase are write-only: no response (and no response schema)
ever carries them; ``has_key`` says whether a key is stored.
"""

from django.utils import timezone
from rest_framework import serializers

from certificates import crypto
from certificates import validators as v
from certificates.choices import KeyType
from certificates.models import Certificate
from fulcrum.concurrency import VersionedSerializerMixin
from fulcrum.serializers import StrictModelSerializer

CONTENT_FIELDS = ("certificate", "chain", "private_key")
DERIVED_FIELDS = [
    "has_key",
    "key_type",
    "subject",
    "issuer",
    "sans",
    "not_before",
    "not_after",
    "expires_in_days",
    "fingerprint",
    "is_ca",
    "warnings",
    "created",
    "updated",
]


class CertificateSerializer(VersionedSerializerMixin, StrictModelSerializer):
    passphrase = serializers.CharField(
        write_only=True,
        required=False,
        trim_whitespace=False,
        max_length=v.MAX_PASSPHRASE_CHARS,
        help_text="Decrypts an encrypted private_key, which is then stored decrypted. Never stored.",
    )
    has_key = serializers.BooleanField(read_only=True)
    sans = serializers.ListField(child=serializers.CharField(), read_only=True, help_text="DNS names and IPs.")
    expires_in_days = serializers.IntegerField(read_only=True, help_text="Whole days left; negative once expired.")
    warnings = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = Certificate
        fields = ["id", "name", "description", *CONTENT_FIELDS, "passphrase", *DERIVED_FIELDS]
        read_only_fields = DERIVED_FIELDS
        extra_kwargs = {"private_key": {"write_only": True}}

    def validate(self, attrs):
        # Django's ValidationError carries per-field messages; DRF turns it into field errors.
        content = v.validate_content(
            attrs["certificate"],
            attrs.get("chain", ""),
            attrs.get("private_key", ""),
            attrs.pop("passphrase", ""),
            now=timezone.now(),
        )
        other = Certificate.objects.filter(fingerprint=content.fingerprint).first()
        if other is not None:
            raise serializers.ValidationError({"certificate": [f"Already stored as certificate {other.name}."]})
        return {**attrs, "certificate": content.certificate, "chain": content.chain, "private_key": content.private_key}


class CertificateUpdateSerializer(CertificateSerializer):
    """An update: name and description change; content is fixed once created. Content sent
    back unchanged (a client returning what it read) is accepted and ignored."""

    passphrase = None

    class Meta(CertificateSerializer.Meta):
        fields = ["id", "name", "description", "certificate", "chain", *DERIVED_FIELDS]
        read_only_fields = ["certificate", "chain", *DERIVED_FIELDS]
        extra_kwargs = {}

    def to_internal_value(self, data):
        if isinstance(data, dict):
            errors = {
                field: [v.IMMUTABLE.format(field=field)]
                for field in CONTENT_FIELDS
                if field in data and v.canonical_content(field, data[field]) != getattr(self.instance, field)
            }
            if "passphrase" in data:
                errors["passphrase"] = ["Only used when a certificate is created."]
            if errors:
                raise serializers.ValidationError(errors)
            data = {name: value for name, value in data.items() if name not in CONTENT_FIELDS}
        return super().to_internal_value(data)

    def validate(self, attrs):
        return attrs


class CertificateGenerateSerializer(VersionedSerializerMixin, StrictModelSerializer):
    """A new key and a self-signed certificate for it, made on the appliance."""

    common_name = serializers.CharField(max_length=64, validators=[v.validate_subject_name])
    sans = serializers.ListField(
        child=serializers.CharField(max_length=253, validators=[v.validate_subject_name]),
        required=False,
        max_length=100,
        help_text="DNS names and IP addresses; default: the common name.",
    )
    key_type = serializers.ChoiceField(choices=KeyType.choices, default=KeyType.RSA_2048)
    days = serializers.IntegerField(min_value=1, max_value=3650, default=365)

    class Meta:
        model = Certificate
        fields = ["name", "description", "common_name", "sans", "key_type", "days"]

    def create(self, validated_data):
        common_name = validated_data["common_name"]
        certificate, private_key = crypto.generate_self_signed(
            common_name,
            validated_data.get("sans") or [common_name],
            validated_data["key_type"],
            validated_data["days"],
            now=timezone.now(),
        )
        return Certificate.objects.create(
            name=validated_data["name"],
            description=validated_data.get("description", ""),
            certificate=certificate,
            private_key=private_key,
        )
