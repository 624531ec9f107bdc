"""Revision news (revisions.news): a change to the revisions table notifies the API processes'
listeners when it commits, and they wake the agents' long-polls."""

from django.db import migrations

CHANNEL = "fulcrum_revisions"  # revisions.news.CHANNEL, as it was when this ran

FUNCTION = f"""
CREATE FUNCTION revision_news() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{CHANNEL}', '');
    RETURN NULL;
END $$;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("revisions", "0003_node_revision_problems"),
    ]

    operations = [
        migrations.RunSQL(
            FUNCTION + "CREATE TRIGGER revision_news AFTER INSERT OR UPDATE OR DELETE ON revisions_revision "
            "FOR EACH STATEMENT EXECUTE FUNCTION revision_news();",
            "DROP TRIGGER revision_news ON revisions_revision; DROP FUNCTION revision_news();",
        ),
    ]
