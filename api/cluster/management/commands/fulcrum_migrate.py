"""Migrate the database's schema where this appliance may: on a primary (or a single
appliance) ``migrate``; on a standby nothing, for its database is the primary's read-only
copy and gets the primary's schema with its data (``cluster.standby``). fulcrum-api.service
runs it before each start, the first boot once."""

from django.core.management import call_command
from django.core.management.base import BaseCommand

from cluster import standby


class Command(BaseCommand):
    help = "Migrate the database, unless it is a standby (the primary's schema streams to it)."

    def handle(self, **options):
        if standby.is_standby():
            self.stdout.write("This database is a standby: its schema is the primary's; nothing to migrate here.")
            return
        call_command("migrate", interactive=False, verbosity=options["verbosity"])
