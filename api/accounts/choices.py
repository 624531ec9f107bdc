"""Choice lists for the accounts app."""

from django.db import models


class Role(models.TextChoices):
    """What a person (or one of their API tokens) may do; each role includes the ones below it."""

    VIEWER = "viewer", "Viewer (read only)"
    OPERATOR = "operator", "Operator (read; enable, drain and disable members; apply, roll back)"
    ADMIN = "admin", "Admin (everything)"

    @classmethod
    def rank(cls, role):
        """0 for viewer, 1 for operator, 2 for admin."""
        return [cls.VIEWER, cls.OPERATOR, cls.ADMIN].index(role)

    @classmethod
    def lower(cls, a, b):
        """The lesser of two roles."""
        return a if cls.rank(a) <= cls.rank(b) else b


class AuditStatus(models.TextChoices):
    """The ``status`` filter of the audit log."""

    OK = "ok", "Succeeded (below 400, or an event without a status)"
    FAILED = "failed", "Failed (400 or above)"


class AuditAction:
    """Action words the accounts app writes itself; API writes use the view's action
    (``create``, ``update``, ``delete``, ``runtime``, ``apply``...)."""

    SIGN_IN = "sign-in"
    SIGN_IN_FAILED = "sign-in-failed"
    SIGN_IN_LOCKED = "sign-in-locked"
    SIGN_OUT = "sign-out"
    TOKEN_CREATE = "token-create"
    PASSWORD_CHANGE = "password-change"
    AUTOMATIC_ROLLBACK = "automatic-rollback"
    APPLIANCE_JOIN = "appliance-join"
    APPLIANCE_JOIN_REFUSED = "appliance-join-refused"
    CLUSTER_SWITCHOVER = "cluster-switchover"
