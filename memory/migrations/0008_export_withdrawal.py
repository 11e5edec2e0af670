"""Exports: retention (committed_at), re-authorization (coverage), erasure (erasures, state
withdrawn); docs/protocol.md#content, #ops. Exports already ready start their retention at their creation time;
having no stored coverage, they answer NOT_FOUND (docs/transfer.md)."""

from django.db import migrations, models


def start_retention(apps, schema_editor):
    Export = apps.get_model("memory", "Export")
    Export.objects.filter(state="ready", committed_at__isnull=True).update(
        committed_at=models.F("created_at")
    )


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0009_client_time_range'),
    ]

    operations = [
        migrations.AddField(
            model_name='export',
            name='committed_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='export',
            name='coverage',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='export',
            name='erasures',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AlterField(
            model_name='export',
            name='state',
            field=models.CharField(choices=[('pending', 'pending'), ('ready', 'ready'), ('failed', 'failed'), ('withdrawn', 'withdrawn')], default='pending', max_length=16),
        ),
        migrations.AddIndex(
            model_name='export',
            index=models.Index(fields=['state', 'committed_at'], name='export_retention'),
        ),
        migrations.RunPython(start_retention, migrations.RunPython.noop, elidable=True),
    ]
