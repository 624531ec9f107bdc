"""Serializers for sign-in, people, API tokens and the audit log."""

from django.contrib.auth import get_user_model, password_validation
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.choices import Role
from accounts.exports import COLUMNS
from accounts.models import ApiToken, AuditEntry, Profile, role_of
from accounts.permissions import request_role
from fulcrum.concurrency import VersionedSerializerMixin
from fulcrum.serializers import StrictModelSerializer, StrictSerializer
from fulcrum.validators import validate_name

MAX_TOKEN_DAYS = 3650


class LoginSerializer(StrictSerializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=256, style={"input_type": "password"}, trim_whitespace=False)


class MeSerializer(serializers.ModelSerializer):
    """The signed-in person."""

    role = serializers.SerializerMethodField()

    class Meta:
        model = get_user_model()
        fields = ["id", "username", "is_superuser", "role"]
        read_only_fields = fields

    @extend_schema_field(serializers.ChoiceField(choices=Role.choices))
    def get_role(self, user):
        request = self.context.get("request")
        return request_role(request) if request is not None and request.user == user else role_of(user)


class PasswordChangeSerializer(StrictSerializer):
    old_password = serializers.CharField(max_length=256, trim_whitespace=False, style={"input_type": "password"})
    new_password = serializers.CharField(max_length=256, trim_whitespace=False, style={"input_type": "password"})
    revoke_tokens = serializers.BooleanField(
        default=False, help_text="Also revoke every API token of yours (your other sessions end in any case)."
    )

    def validate_old_password(self, value):
        if not self.context["request"].user.check_password(value):
            raise serializers.ValidationError("Wrong password.")
        return value

    def validate_new_password(self, value):
        password_validation.validate_password(value, self.context["request"].user)
        return value


def active_admins():
    """People who are admins now (superusers, or the admin role) and may sign in."""
    return get_user_model().objects.filter(is_active=True).filter(Q(is_superuser=True) | Q(profile__role=Role.ADMIN))


class UserSerializer(VersionedSerializerMixin, StrictModelSerializer):
    """A person who signs in to the console, the API or the CLI."""

    role = serializers.ChoiceField(choices=Role.choices, default=Role.VIEWER)
    password = serializers.CharField(
        write_only=True,
        required=False,
        max_length=256,
        trim_whitespace=False,
        style={"input_type": "password"},
        help_text="Required on create. Setting it ends the person's sessions; their API tokens keep working.",
    )

    class Meta:
        model = get_user_model()
        fields = ["id", "username", "role", "is_active", "password", "last_login", "date_joined"]
        read_only_fields = ["last_login", "date_joined"]

    def to_representation(self, user):
        data = super().to_representation(user)
        data["role"] = role_of(user)
        # The version lives on the profile (Django's user has none); a written one is only checked.
        profile = getattr(user, "profile", None)
        data["version"] = profile.version if profile is not None else 1
        return data

    def validate_password(self, value):
        user = self.instance or get_user_model()(username=self.initial_data.get("username", ""))
        password_validation.validate_password(value, user)
        return value

    def validate(self, attrs):
        if self.instance is None and not attrs.get("password"):
            raise serializers.ValidationError({"password": ["Required for a new person."]})
        if self.instance is not None:
            self._keep_an_admin(attrs)
        return attrs

    def _keep_an_admin(self, attrs):
        user = self.instance
        stays_admin = attrs.get("role", role_of(user)) == Role.ADMIN and attrs.get("is_active", user.is_active)
        if stays_admin or not active_admins().filter(pk=user.pk).exists():
            return
        if not active_admins().exclude(pk=user.pk).exists():
            field = "role" if "role" in attrs and attrs["role"] != Role.ADMIN else "is_active"
            raise serializers.ValidationError({field: ["This is the last active admin: make another admin first."]})

    @transaction.atomic
    def create(self, validated_data):
        validated_data.pop("version", None)
        role, password = validated_data.pop("role"), validated_data.pop("password")
        user = get_user_model().objects.create_user(**validated_data, password=password)
        _set_role(user, role)
        return user

    @transaction.atomic
    def update(self, user, validated_data):
        validated_data.pop("version", None)
        role, password = validated_data.pop("role", None), validated_data.pop("password", None)
        for name, value in validated_data.items():
            setattr(user, name, value)
        if password:
            user.set_password(password)
        if role is not None:
            # The role decides: a superuser set to operator or viewer stops being one.
            user.is_superuser = user.is_superuser and role == Role.ADMIN
            _set_role(user, role)
        user.save()
        return user


def _set_role(user, role):
    try:
        profile = user.profile
    except Profile.DoesNotExist:
        profile = Profile(user=user)
    profile.role = role
    profile.save()


class ApiTokenSerializer(StrictModelSerializer):
    """A named API token; the secret is only in the answer that creates it."""

    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)
    role = serializers.ChoiceField(
        choices=Role.choices, required=False, help_text="At most your own role; default: your own role."
    )
    expires_in_days = serializers.IntegerField(
        write_only=True,
        required=False,
        min_value=1,
        max_value=MAX_TOKEN_DAYS,
        help_text="Instead of expires_at: the token's lifetime from now.",
    )
    state = serializers.CharField(read_only=True, help_text="active, expired or revoked.")

    class Meta:
        model = ApiToken
        fields = [
            "id",
            "name",
            "owner",
            "role",
            "prefix",
            "state",
            "created_at",
            "expires_at",
            "expires_in_days",
            "last_used_at",
            "last_used_from",
            "revoked_at",
        ]
        read_only_fields = ["prefix", "created_at", "last_used_at", "last_used_from", "revoked_at"]

    def validate_role(self, value):
        own = request_role(self.context["request"])
        if Role.rank(value) > Role.rank(own):
            raise serializers.ValidationError(f"At most your own role ({own}).")
        return value

    def validate_expires_at(self, value):
        if value is not None and value <= timezone.now():
            raise serializers.ValidationError("Must be in the future.")
        return value

    def validate(self, attrs):
        if attrs.get("expires_at") and attrs.get("expires_in_days"):
            raise serializers.ValidationError({"expires_in_days": ["Give expires_at or expires_in_days, not both."]})
        return attrs

    def create(self, validated_data):
        request = self.context["request"]
        days = validated_data.pop("expires_in_days", None)
        expires_at = validated_data.pop("expires_at", None) or ApiToken.expiry(days)
        role = validated_data.pop("role", None) or request_role(request)
        token, secret = ApiToken.issue(request.user, validated_data["name"], role, expires_at)
        token.secret = secret
        return token


class ApiTokenCreatedSerializer(ApiTokenSerializer):
    """The create answer: the token's fields and, this once, the secret."""

    token = serializers.CharField(source="secret", read_only=True, help_text="The secret: shown only in this answer.")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "token"]


class SignInTokenSerializer(StrictSerializer):
    """``POST /auth/token/``: credentials, and what the new token should be."""

    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=256, style={"input_type": "password"}, trim_whitespace=False)
    name = serializers.CharField(
        max_length=63, required=False, validators=[validate_name], help_text='Default: "sign-in-<UTC time>".'
    )
    role = serializers.ChoiceField(choices=Role.choices, required=False, help_text="At most yours; default: yours.")
    expires_in_days = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_TOKEN_DAYS, default=30, help_text="Default 30."
    )


class SignInTokenResultSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    token = serializers.CharField(help_text="The secret: send as 'Authorization: Bearer <token>'. Shown only once.")
    role = serializers.ChoiceField(choices=Role.choices)
    expires_at = serializers.DateTimeField(allow_null=True)


class AuditEntrySerializer(serializers.ModelSerializer):
    """One audit entry."""

    actor = serializers.CharField(source="actor_name", read_only=True)
    token = serializers.CharField(source="token_name", read_only=True)
    status = serializers.IntegerField(source="status_code", read_only=True, allow_null=True)

    class Meta:
        model = AuditEntry
        fields = list(COLUMNS)  # the export's columns too: one list
        read_only_fields = fields
