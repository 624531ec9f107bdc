from django.db import migrations, models

VERSION_HELP = (
    "Raised by one on every change. Send it back (or If-Match) to change the object only if "
    "nobody else has changed it since; 409 otherwise."
)


def version():
    return models.PositiveIntegerField(default=1, editable=False, help_text=VERSION_HELP)


class Migration(migrations.Migration):
    dependencies = [("cluster", "0005_ha")]

    operations = [
        # "version" now means the object's version, as on every other object.
        migrations.RenameField(model_name="hagroup", old_name="version", new_name="vrrp_version"),
        migrations.AddField(model_name="hagroup", name="version", field=version()),
        migrations.AddField(model_name="ipvssync", name="version", field=version()),
        migrations.AddField(model_name="node", name="version", field=version()),
    ]
