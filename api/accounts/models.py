"""Accounts are Django users with a role, named API tokens, and the audit log."""

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.choices import Role
from compiler.rules import NAME_HELP
from fulcrum.concurrency import version_field
from fulcrum.validators import validate_name

TOKEN_PREFIX = "ful_"
# Characters of the secret kept in clear to tell tokens apart ("ful_" + 6).
SHOWN_PREFIX_LENGTH = len(TOKEN_PREFIX) + 6


def role_of(user):
    """A person's role: admin for a superuser whatever the row says, viewer without a row."""
    if user is None or not user.is_authenticated:
        return None
    if user.is_superuser:
        return Role.ADMIN
    try:
        return user.profile.role
    except Profile.DoesNotExist:
        return Role.VIEWER


def hash_secret(secret):
    """sha256 of a token secret: enough for 240 random bits, and cheap to check per request."""
    return hashlib.sha256(secret.encode()).hexdigest()


class Profile(models.Model):
    """What Django's user lacks: the person's role (and a version for the users API)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    version = version_field()

    # The audit log shows a profile's fields as the user's own.
    audit_parent = "user"

    class Meta:
        verbose_name = "profile"
        verbose_name_plural = "profiles"

    def __str__(self):
        return f"{self.user} ({self.role})"


class ApiTokenQuerySet(models.QuerySet):
    def usable(self):
        """Tokens that authenticate now: not revoked, not expired, owner active."""
        now = timezone.now()
        return self.filter(revoked_at__isnull=True, owner__is_active=True).filter(
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now)
        )


class ApiToken(models.Model):
    """A named secret for scripts and the CLI (``Authorization: Bearer <token>``).

    Only the sha256 of the secret is stored; the secret is shown once, when the token is
    made. A token acts with its own role, never more than its owner's current one. Revoked
    tokens are kept, so the audit log can still name them.
    """

    name = models.CharField(max_length=63, validators=[validate_name], help_text=NAME_HELP)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    role = models.CharField(max_length=16, choices=Role.choices, help_text="Capped by the owner's role at each use.")
    prefix = models.CharField(max_length=16, editable=False, help_text="The first characters, to tell tokens apart.")
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Empty: never expires.")
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_used_from = models.GenericIPAddressField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "API token"
        verbose_name_plural = "API tokens"

    def __str__(self):
        return self.name

    @classmethod
    def issue(cls, owner, name, role, expires_at=None):
        """Make a token; returns ``(token, secret)``. The secret cannot be read again."""
        secret = TOKEN_PREFIX + secrets.token_urlsafe(30)  # 40 url-safe characters
        token = cls.objects.create(
            owner=owner,
            name=name,
            role=role,
            expires_at=expires_at,
            prefix=secret[:SHOWN_PREFIX_LENGTH],
            token_hash=hash_secret(secret),
        )
        return token, secret

    @staticmethod
    def expiry(days):
        """``expires_at`` for a lifetime of ``days`` from now (None: never)."""
        return timezone.now() + timedelta(days=days) if days else None

    @property
    def effective_role(self):
        """The token's role, capped by its owner's current role."""
        return Role.lower(self.role, role_of(self.owner))

    @property
    def state(self):
        if self.revoked_at:
            return "revoked"
        if self.expires_at and self.expires_at <= timezone.now():
            return "expired"
        return "active"


class AuditEntry(models.Model):
    """One change made through the API, or one sign-in event: who, when, from where, what.

    Names are kept as text so an entry still says who and what after the user, token or
    object is gone. Entries are never changed or deleted through the API.
    """

    time = models.DateTimeField(default=timezone.now)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_name = models.CharField(max_length=150, blank=True, help_text="The username, as it was then.")
    token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    token_name = models.CharField(max_length=63, blank=True, help_text="The API token used, if any.")
    address = models.GenericIPAddressField(null=True, blank=True, help_text="The client's address.")
    method = models.CharField(max_length=10, blank=True)
    path = models.CharField(max_length=500, blank=True)
    action = models.CharField(max_length=40, help_text="create, update, delete, runtime, apply, sign-in...")
    object_type = models.CharField(max_length=60, blank=True, help_text="e.g. pool, virtual-service, user.")
    object_id = models.CharField(max_length=64, blank=True)
    object_name = models.CharField(max_length=200, blank=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True, help_text="The HTTP status answered.")
    changes = models.JSONField(
        default=dict,
        blank=True,
        help_text="Update: {field: [old, new]}; create: the new values; delete: the old ones. Secrets never shown.",
    )
    related = models.JSONField(
        default=list, blank=True, help_text="Other objects the same request changed, each with its changes."
    )
    body = models.JSONField(
        null=True,
        blank=True,
        help_text="The request body, secrets removed: what was asked (the changes say what was done).",
    )
    detail = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-time", "-id"]
        verbose_name = "audit entry"
        verbose_name_plural = "audit entries"
        indexes = [
            models.Index(fields=["-time", "-id"], name="auditentry_time"),
            models.Index(fields=["actor_name", "action", "time"], name="auditentry_actor_action"),
            models.Index(fields=["object_type", "object_name"], name="auditentry_object"),
        ]

    def __str__(self):
        who = self.actor_name or "-"
        return f"{self.time:%Y-%m-%d %H:%M:%S} {who} {self.action} {self.object_type} {self.object_name}".rstrip()
