"""Grant.ancestor_revoked: set on every grant below a revoked one, so effectiveness is a column."""
from django.db import migrations, models


def mark_descendants(apps, schema_editor):
    Grant = apps.get_model("memory", "Grant")
    revoked = set(Grant.objects.filter(state="revoked").values_list("grant_id", flat=True))
    if not revoked:
        return
    below = [
        pk for pk, ancestors in Grant.objects.exclude(ancestor_ids=[]).values_list("grant_id", "ancestor_ids")
        if revoked.intersection(ancestors)
    ]
    Grant.objects.filter(grant_id__in=below).update(ancestor_revoked=True)


class Migration(migrations.Migration):
    dependencies = [("memory", "0003_merge_0002_recall_lexemes_0002_recordembedding")]

    operations = [
        migrations.AddField(
            model_name="grant", name="ancestor_revoked", field=models.BooleanField(default=False)
        ),
        migrations.RunPython(mark_descendants, migrations.RunPython.noop),
    ]
