"""Roll back a revision whose confirmation deadline has passed (run by a systemd timer)."""

from django.core.management.base import BaseCommand

from revisions.rollback import confirm_deadline, expire_confirmations


class Command(BaseCommand):
    help = (
        "Roll back the revision awaiting confirmation if its deadline has passed, and publish the "
        "rollback. Safe to run often and from several hosts at once; prints what it did."
    )

    def handle(self, **options):
        revision = expire_confirmations()
        if revision is not None:
            self.stdout.write(f"{revision.message}: published r{revision.number}")
            return
        deadline = confirm_deadline()
        if deadline is not None:
            self.stdout.write(f"a revision awaits confirmation until {deadline.isoformat()}")
