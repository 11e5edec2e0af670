# Every space-scoped table carries space_id (issue 30 item 1; docs/scaling.md): the tables reached
# only through a parent get a copy of the parent's space_id (filled here, then NOT NULL; set once
# by every writer afterwards), the idempotency key's `space_key` is named `space_id` as everywhere
# else, and the unique constraints of those tables include space_id (a Citus cluster requires it
# of a distributed table's unique constraints). Primary and foreign keys stay single-column on
# one node: composite keys are a step of the move plan in docs/scaling.md.

from django.db import migrations, models
from django.db.models import OuterRef, Subquery

# model -> (parent model, the parent's key field on the child, the parent's field holding space)
COPIES = {
    "recordrevision": ("record", "record_id", "space_id"),
    "recordterm": ("record", "record_id", "space_id"),
    "recordembedding": ("record", "record_id", "space_id"),
    "pendingembedding": ("record", "record_id", "space_id"),
    "job": ("receipt", "receipt_id", "space_id"),
    "jobheartbeat": ("receipt", "receipt_id", "space_id"),
    "exportchunk": ("export", "export_id", "space_id"),
    "importchunk": ("import", "imp_id", "space_id"),
}


def fill(apps, schema_editor):
    for name, (parent, key, space) in COPIES.items():
        model, parent_model = apps.get_model("memory", name), apps.get_model("memory", parent)
        source = parent_model.objects.filter(pk=OuterRef(key)).values(space)[:1]
        model.objects.update(space_id=Subquery(source))
        # a heartbeat of a receipt that is gone, or a receipt that never had a space: no row to
        # keep (a heartbeat is rewritten every few seconds by a live job)
        model.objects.filter(space_id__isnull=True).delete()


def copied(null: bool) -> models.ForeignKey:
    return models.ForeignKey(
        db_constraint=False,
        db_index=False,
        null=null,
        on_delete=models.deletion.DO_NOTHING,
        related_name="+",
        to="memory.space",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0016_space_activation_pending"),
    ]

    operations = [
        migrations.RenameField(
            model_name="idempotencykey", old_name="space_key", new_name="space_id"
        ),
        # the unique index follows its column's rename in the database; only the state's
        # constraint names the field
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveConstraint(
                    model_name="idempotencykey", name="idempotency_key_unique"
                ),
                migrations.AddConstraint(
                    model_name="idempotencykey",
                    constraint=models.UniqueConstraint(
                        fields=("space_id", "principal", "op", "key"),
                        name="idempotency_key_unique",
                    ),
                ),
            ]
        ),
        *[
            migrations.AddField(model_name=name, name="space", field=copied(null=True))
            for name in COPIES
        ],
        migrations.RunPython(fill, migrations.RunPython.noop),
        *[
            migrations.AlterField(model_name=name, name="space", field=copied(null=False))
            for name in COPIES
        ],
        *[
            op
            for model, name, fields in [
                ("recordrevision", "record_revision_unique", ("record", "revision", "space")),
                ("recordterm", "record_term_unique", ("record", "term", "space")),
                (
                    "recordembedding",
                    "record_embedding_unique",
                    ("record", "revision", "model_id", "space"),
                ),
                ("exportchunk", "export_chunk_unique", ("export", "ordinal", "space")),
                ("importchunk", "import_chunk_unique", ("imp", "ordinal", "space")),
                ("profiledocument", "profile_kind_unique", ("subject", "kind", "space")),
            ]
            for op in (
                migrations.RemoveConstraint(model_name=model, name=name),
                migrations.AddConstraint(
                    model_name=model, constraint=models.UniqueConstraint(fields=fields, name=name)
                ),
            )
        ],
    ]
