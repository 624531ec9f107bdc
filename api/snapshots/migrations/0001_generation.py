"""The snapshot generation (snapshots.generation): a sequence, and triggers on every table a
snapshot is made of that take its next value when a change to them commits."""

from django.db import migrations

WATCHED = {
    "services_pool": "",
    "services_member": "",
    "services_healthcheck": "",
    "services_virtualservice": "",
    "services_virtualservice_sni_certificates": "",
    "services_rule": "",
    "certificates_certificate": "",
    # The nodes' reports (status, last seen) change every few seconds and are not in snapshots.
    "cluster_node": " OF name, address, standby",
    "cluster_hagroup": "",
    "cluster_hagroupnode": "",
    "cluster_ipvssync": "",
}

FUNCTION = """
CREATE FUNCTION snapshot_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM nextval('snapshot_generation');
    RETURN NULL;
END $$;
"""


def trigger(table, columns):
    return (
        f"CREATE CONSTRAINT TRIGGER snapshot_changed AFTER INSERT OR UPDATE{columns} OR DELETE ON {table} "
        "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION snapshot_changed();"
    )


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("services", "0008_maintenance_page_fits_haproxy_buffer"),
        ("certificates", "0002_versions"),
        ("cluster", "0009_daemon_events"),
    ]

    operations = [
        migrations.RunSQL(
            "CREATE SEQUENCE snapshot_generation; SELECT nextval('snapshot_generation');"
            + FUNCTION + "".join(trigger(t, c) for t, c in WATCHED.items()),
            "".join(f"DROP TRIGGER snapshot_changed ON {t};" for t in WATCHED)
            + "DROP FUNCTION snapshot_changed(); DROP SEQUENCE snapshot_generation;",
        ),
    ]
