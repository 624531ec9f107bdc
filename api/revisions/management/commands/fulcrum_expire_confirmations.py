"""Roll back a revision whose confirmation deadline has passed (the appliance runs it as a
service with ``--every``: one Python start, not one per check)."""

import time

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, connection

from revisions.rollback import confirm_deadline, expire_confirmations


class Command(BaseCommand):
    help = (
        "Roll back the revision awaiting confirmation if its deadline has passed, and publish the "
        "rollback. Safe to run often and from several hosts at once; prints what it did."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--every", type=float, metavar="SECONDS", help="keep checking, this many seconds apart (0.1 to 3600)"
        )
        parser.add_argument("--rounds", type=int, default=0, help="with --every: stop after N checks (0: never)")

    def handle(self, every, rounds, **options):
        if every is None:
            self.check_once()
            return
        if not 0.1 <= every <= 3600:
            raise CommandError("--every must be from 0.1 to 3600 seconds")
        done = 0
        while not rounds or done < rounds:
            try:
                self.check_once()
            except DatabaseError as err:  # the database restarting: a new connection next round
                self.stderr.write(f"check failed, retrying in {every:g} s: {err}")
                connection.close()
            done += 1
            if not rounds or done < rounds:
                time.sleep(every)

    def check_once(self):
        revision = expire_confirmations()
        if revision is not None:
            self.stdout.write(f"{revision.message}: published r{revision.number}")
            return
        deadline = confirm_deadline()
        if deadline is not None:
            self.stdout.write(f"a revision awaits confirmation until {deadline.isoformat()}")
