"""Revisions: immutable, compiled and checked snapshots of the operator's intent."""

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from fulcrum.fields import DocumentField
from revisions.choices import ConfirmState, NodeRevisionState

CONFIRM_WITHIN_S_MIN = 10
CONFIRM_WITHIN_S_MAX = 3600


# A revision's snapshot and a node's copy's files are megabytes at 10,000 services, and each
# takes a second or more to read back: what lists revisions, or tells their state, leaves them
# out. A deferred field is still read when used (a revision's own page, its diff, a rollback).
class RevisionQuerySet(models.QuerySet):
    def listed(self):
        """Revisions without their snapshots."""
        return self.defer("snapshot")


class NodeRevisionQuerySet(models.QuerySet):
    def listed(self):
        """Nodes' copies without their files, with the node and the revision it runs (number)."""
        return self.defer("files").select_related("node__applied_revision").defer("node__applied_revision__snapshot")


class Revision(models.Model):
    """A frozen copy of every object at the moment of "Apply"; never changed afterwards."""

    number = models.PositiveIntegerField(unique=True, editable=False)
    snapshot = DocumentField(editable=False)
    fingerprint = models.CharField(
        max_length=64,
        blank=True,
        default="",
        editable=False,
        help_text="The digest of the snapshot's objects (revisions.diff.fingerprint); empty on a revision stored "
        "before digests were kept.",
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+", editable=False
    )
    message = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    rollback_of = models.PositiveIntegerField(
        null=True, blank=True, editable=False, help_text="The number of the revision whose objects this one restored."
    )
    # Apply with confirm: rolled back by itself unless confirmed by confirm_by.
    confirm_within_s = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(CONFIRM_WITHIN_S_MIN), MaxValueValidator(CONFIRM_WITHIN_S_MAX)],
        help_text="Seconds the operator has to confirm this revision; empty = no confirmation asked.",
    )
    confirm_by = models.DateTimeField(null=True, blank=True, editable=False)
    confirm_state = models.CharField(
        max_length=16, choices=ConfirmState.choices, default=ConfirmState.NONE, editable=False
    )
    confirm_problem = models.TextField(
        blank=True, editable=False, help_text="Why the automatic rollback could not be made (rollback-failed)."
    )

    objects = RevisionQuerySet.as_manager()

    class Meta:
        ordering = ["-number"]
        verbose_name = "revision"
        verbose_name_plural = "revisions"
        # At most one revision awaits confirmation at a time.
        constraints = [
            models.UniqueConstraint(
                fields=["confirm_state"],
                condition=models.Q(confirm_state="awaiting"),
                name="revision_one_awaiting_confirmation",
            )
        ]

    def __str__(self):
        return f"r{self.number}"


class NodeRevision(models.Model):
    """One node's copy of a revision: the files rendered for it and what its agent reported."""

    revision = models.ForeignKey(Revision, on_delete=models.CASCADE, related_name="node_states")
    node = models.ForeignKey("cluster.Node", on_delete=models.CASCADE, related_name="revisions")
    files = DocumentField(editable=False, help_text="Rendered file name -> text, as checked by the daemons.")
    state = models.CharField(max_length=16, choices=NodeRevisionState.choices, default=NodeRevisionState.PENDING)
    message = models.TextField(blank=True)
    problems = models.JSONField(
        default=list,
        blank=True,
        editable=False,
        help_text="The complaints of a failed report that name a place in the node's files, read back to the "
        "objects at fault (revisions.problems.report_problems).",
    )
    updated_at = models.DateTimeField(auto_now=True)

    objects = NodeRevisionQuerySet.as_manager()

    class Meta:
        ordering = ["node__name"]
        verbose_name = "node revision"
        verbose_name_plural = "node revisions"
        constraints = [models.UniqueConstraint(fields=["revision", "node"], name="noderevision_unique")]

    def __str__(self):
        return f"{self.revision} on {self.node}: {self.state}"
