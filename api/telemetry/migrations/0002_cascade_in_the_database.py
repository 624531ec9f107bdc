"""The telemetry tables' foreign keys delete in the database too (ON DELETE CASCADE).

Django cascades in Python: deleting a pool collects its members' samples, deletes them, then
deletes the members. A sample an agent's report committed in between referred to a member
about to go, and the delete failed at its commit (the pair's image test: a pool's DELETE
answered 500, "violates foreign key constraint ... on table telemetry_trafficsample").
With the cascade in the database too, whatever refers to the row when it goes, goes with it."""

from django.db import migrations

TABLES = ("telemetry_trafficsample", "telemetry_memberhealth", "telemetry_healthevent")


def alter(old, new):
    tables = ", ".join(f"'{t}'::regclass" for t in TABLES)
    return f"""
DO $$
DECLARE c record;
BEGIN
    FOR c IN SELECT conname, conrelid::regclass AS tab, pg_get_constraintdef(oid) AS def
             FROM pg_constraint WHERE contype = 'f' AND conrelid IN ({tables})
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I, ADD CONSTRAINT %I %s',
                       c.tab, c.conname, c.conname, replace(c.def, '{old}', '{new}'));
    END LOOP;
END $$;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("telemetry", "0001_initial"),
    ]

    operations = [
        migrations.RunSQL(
            alter(") DEFERRABLE", ") ON DELETE CASCADE DEFERRABLE"),
            alter(" ON DELETE CASCADE", ""),
        ),
    ]
