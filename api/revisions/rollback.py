"""Rollback, and apply with confirm (Junos ``rollback N`` and ``commit confirmed``).

- ``rollback(rN)`` restores the objects to rN's snapshot (revisions.restore) and publishes
  them as the next revision, which records ``rollback_of = N``.
- A revision applied with ``confirm_within_s`` awaits confirmation until ``confirm_by``.
  ``confirm()`` ends the wait; so does any new apply (as a new commit does on Junos), and
  a rollback while it waits marks it rolled back. At most one revision awaits.
- Past the deadline, ``expire_confirmations()`` restores the objects to the revision
  before the unconfirmed one and publishes them (author null, message ``automatic
  rollback: rN not confirmed within S s``). The API has no scheduler, so the check runs
  wherever someone looks: the node agents' long-poll (which wakes at the deadline), the
  revision list, detail and pending endpoints, and ``manage.py
  fulcrum_expire_confirmations --every 5`` (a service on the appliance). The publish lock makes sure two
  workers never both roll back.
"""

import logging

from django.db import transaction
from django.utils import timezone

from accounts.audit import record_event
from accounts.choices import AuditAction
from revisions.choices import ConfirmState
from revisions.models import Revision
from revisions.publish import PublishError, last_number, publishing, retrying, settle_awaiting, store
from revisions.restore import RestoreError, objects_of_snapshot, restore_in_transaction
from snapshots.freeze import freeze

logger = logging.getLogger(__name__)


class NotAwaiting(Exception):
    """The revision is not awaiting confirmation (never asked, confirmed or rolled back)."""

    def __init__(self, revision):
        self.state = revision.confirm_state
        words = {
            ConfirmState.NONE: "it was applied without confirmation",
            ConfirmState.CONFIRMED: "it is already confirmed",
            ConfirmState.ROLLED_BACK: "it was rolled back",
            ConfirmState.ROLLBACK_FAILED: f"its deadline passed and its rollback failed: {revision.confirm_problem}",
        }
        super().__init__(f"r{revision.number} is not awaiting confirmation: {words[self.state]}.")


def rollback(target, author, message=""):
    """Publish ``target``'s objects again as the next revision and return it. Raises
    RestoreError (nothing changed)."""

    def attempt():
        with publishing():
            # Re-applying the revision that awaits affirms it; going anywhere else undoes it.
            awaited = Revision.objects.filter(pk=target.pk, confirm_state=ConfirmState.AWAITING).exists()
            settle_awaiting(ConfirmState.CONFIRMED if awaited else ConfirmState.ROLLED_BACK)
            return _restore_and_publish(
                target.snapshot, target.number, author, message or f"rollback to r{target.number}"
            )

    return retrying(attempt)


def _restore_and_publish(snapshot, number, author, message):
    restore_in_transaction(objects_of_snapshot(snapshot), check_files=False)
    try:
        return store(freeze(last_number() + 1), author, message, rollback_of=number)
    except PublishError as err:
        raise RestoreError(err.problems, err.refusal) from err


def confirm(revision):
    """Confirm ``revision``; raises NotAwaiting if it is not awaiting confirmation, also when
    its deadline has just passed (it is then rolled back first)."""

    def attempt():
        with publishing():
            current = Revision.objects.listed().get(pk=revision.pk)
            if current.confirm_state == ConfirmState.AWAITING and current.confirm_by <= timezone.now():
                _expire(current)
                current.refresh_from_db()
            if current.confirm_state != ConfirmState.AWAITING:
                return current, False
            current.confirm_state = ConfirmState.CONFIRMED
            current.save(update_fields=["confirm_state"])
            return current, True

    current, confirmed = retrying(attempt)
    if not confirmed:
        raise NotAwaiting(current)
    return current


def confirm_deadline():
    """When the revision awaiting confirmation must be confirmed by; None if none awaits."""
    return Revision.objects.filter(confirm_state=ConfirmState.AWAITING).values_list("confirm_by", flat=True).first()


def expire_confirmations(now=None):
    """Roll back the revision awaiting confirmation if its deadline has passed.

    Returns the rollback revision, or None. Costs one query when nothing is due.
    """
    now = now or timezone.now()
    if not Revision.objects.filter(confirm_state=ConfirmState.AWAITING, confirm_by__lte=now).exists():
        return None
    return retrying(lambda: _expire_due(now))


def _expire_due(now):
    with publishing():
        late = Revision.objects.filter(confirm_state=ConfirmState.AWAITING, confirm_by__lte=now).first()
        return _expire(late) if late is not None else None  # None: another worker was first


def _expire(late):
    previous = Revision.objects.filter(number__lt=late.number).order_by("-number").first()
    message = f"automatic rollback: r{late.number} not confirmed within {late.confirm_within_s} s"
    try:
        with transaction.atomic():
            snapshot, number = (previous.snapshot, previous.number) if previous else ({}, None)
            revision = _restore_and_publish(snapshot, number, None, message)
    except RestoreError as err:
        logger.error("r%s: the automatic rollback failed: %s", late.number, err)
        Revision.objects.filter(pk=late.pk).update(confirm_state=ConfirmState.ROLLBACK_FAILED, confirm_problem=str(err))
        record_event(
            AuditAction.AUTOMATIC_ROLLBACK, actor_name="system", obj=late, status_code=500, detail=str(err)[:500]
        )
        return None
    Revision.objects.filter(pk=late.pk).update(confirm_state=ConfirmState.ROLLED_BACK)
    record_event(AuditAction.AUTOMATIC_ROLLBACK, actor_name="system", obj=revision, detail=message)
    logger.warning("r%s was not confirmed in time: rolled back to r%s as r%s", late.number, number, revision.number)
    return revision
