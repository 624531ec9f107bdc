"""The table of the ``throttle`` cache (settings.CACHES): the per-address sign-in counts,
shared by every API worker process. Django's own ``createcachetable`` makes it (idempotent)."""

from django.core.management import call_command
from django.db import migrations

TABLE = "fulcrum_throttle"


def create(apps, schema_editor):
    call_command("createcachetable", TABLE, database=schema_editor.connection.alias, verbosity=0)


def drop(apps, schema_editor):
    schema_editor.execute(f"DROP TABLE IF EXISTS {TABLE}")


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_roles_tokens_audit")]

    operations = [migrations.RunPython(create, drop)]
