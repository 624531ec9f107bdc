from django.db import models


class NodeRevisionState(models.TextChoices):
    PENDING = "pending", "Pending"
    APPLIED = "applied", "Applied"
    FAILED = "failed", "Failed"


class ConfirmState(models.TextChoices):
    """Where a revision applied with confirm stands."""

    NONE = "none", "Not asked"
    AWAITING = "awaiting", "Awaiting confirmation"
    CONFIRMED = "confirmed", "Confirmed"
    ROLLED_BACK = "rolled-back", "Rolled back"
    ROLLBACK_FAILED = "rollback-failed", "Rollback failed"


class ApplyRefusal(models.TextChoices):
    """Why an apply published nothing, as a word for programs (the detail is for people)."""

    NOTHING_TO_APPLY = "nothing_to_apply", "Nothing to apply"
