"""Migrate the database's schema where this appliance may: on a primary (or a single
appliance) ``migrate``; on a standby nothing, for its database is the primary's read-only
copy and gets the primary's schema with its data (``cluster.standby``); on a fenced primary
nothing either, unless ``--master``: the management VIP's keepalived, on making this appliance
the master, migrates before it lifts the fence (appliance/api/fulcrum-management), so that the
API never writes with an older schema than its code. fulcrum-api.service runs it before each
start, the first boot once.

``--shipped`` prints the migrations this code has (``app.name``, one a line) without a
database: the package keeps the list (fulcrum/migrations.txt), and fulcrum-management skips
the migration, whose Django start costs seconds of a failover, when every one of them is in
the replicated database's django_migrations already."""

from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from cluster import standby


class Command(BaseCommand):
    help = "Migrate the database, unless it is a standby (the primary's schema streams to it) or fenced."

    def add_arguments(self, parser):
        parser.add_argument(
            "--master", action="store_true", help="this appliance has just become the master: migrate a fenced primary"
        )
        parser.add_argument("--shipped", action="store_true", help="print the code's migrations (no database)")

    def handle(self, **options):
        if options["shipped"]:
            shipped = MigrationLoader(None, ignore_no_migrations=True).disk_migrations
            self.stdout.write("".join(f"{app}.{name}\n" for app, name in sorted(shipped)), ending="")
            return
        why = standby.read_only()
        if why == standby.STANDBY:
            self.stdout.write("This database is a standby: its schema is the primary's; nothing to migrate here.")
            return
        if why == standby.FENCED:
            if not options["master"]:
                self.stdout.write(
                    "This database is fenced (this appliance does not hold the management VIP): "
                    "it is migrated when it does."
                )
                return
            with connection.cursor() as cursor:
                cursor.execute("SET default_transaction_read_only = off")  # this session only: the fence stays
        call_command("migrate", interactive=False, verbosity=options["verbosity"])
