# Recall checks a subject's stored vectors by one index probe (memory.services.hybrid_store):
# each vector carries its record's subject. Added nullable, filled from the records, then made
# required.

import django.db.models.deletion
from django.db import migrations, models


def fill(apps, schema_editor):
    RecordEmbedding = apps.get_model("memory", "RecordEmbedding")
    Record = apps.get_model("memory", "Record")
    RecordEmbedding.objects.update(
        subject_id=models.Subquery(
            Record.objects.filter(pk=models.OuterRef("record_id")).values("subject_id")[:1]
        )
    )


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0012_writes"),
    ]

    operations = [
        migrations.AddField(
            model_name="recordembedding",
            name="subject",
            field=models.ForeignKey(
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="memory.subject",
            ),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="recordembedding",
            name="subject",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="memory.subject",
            ),
        ),
        migrations.AddIndex(
            model_name="recordembedding",
            index=models.Index(fields=["subject", "id"], name="record_embedding_subject"),
        ),
    ]
