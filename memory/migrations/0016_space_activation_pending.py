# A space whose import activation is accepted and not yet ended takes no mutation but the ones a
# frozen space takes (issue 26, item 12; docs/transfer.md). Spaces with an activation already in
# flight when this runs are marked too.

from django.db import migrations, models


def mark_in_flight(apps, schema_editor):
    Space = apps.get_model("memory", "Space")
    Import = apps.get_model("memory", "Import")
    Space.objects.filter(
        pk__in=Import.objects.filter(state="activating").values("space_id")
    ).update(activation_pending=True)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0015_embedding_model"),
    ]

    operations = [
        migrations.AddField(
            model_name="space",
            name="activation_pending",
            field=models.BooleanField(default=False, db_default=False),
        ),
        migrations.RunPython(mark_in_flight, migrations.RunPython.noop),
    ]
