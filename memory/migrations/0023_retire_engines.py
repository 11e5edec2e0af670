"""Two served engines, engine/2 and hybrid/4 (docs/decisions/two-served-engines.md): the derived
copies only the retired ones (engine/1, hybrid/1, hybrid/2, hybrid/3) read go.

- PostgreSQL (Citus included: the coordinator propagates both drops): engine/1's GIN index
  `record_recall_lexemes` (present only while engine/1 or hybrid/1 was configured) and the SQL
  function it indexed, `spoke_recall_lexemes(text)` (migrations 0002, 0019). No served engine
  reads either; `manage.py spoke citus-setup` no longer propagates the function.
- Every database: the vectors labelled with the bundled model's torch form (`all-MiniLM-L6-v2`,
  hybrid/1–3's model; hybrid/4 ranks with its int8 form), and the vector generation of each
  subject that had any moves (the vector cache's key, as every erasure of vectors moves it).
  A deployment that configured that model explicitly (SPOKE_MEMORY_EMBED_MODEL) gets them back:
  a worker's first drain queues every live record without a vector of the configured model.

The term rows (engine/2's, hybrid/4's) and the other vectors are kept. Backwards: the function
comes back (the index only with an engine that reads it, which this code has not); the vectors
are derived and are made again by the drain."""

import importlib

from django.db import migrations
from django.db.models import F

TORCH_MODEL = "all-MiniLM-L6-v2"
CHUNK = 1000


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS record_recall_lexemes")
        schema_editor.execute("DROP FUNCTION IF EXISTS spoke_recall_lexemes(text)")
    RecordEmbedding = apps.get_model("memory", "RecordEmbedding")
    VectorGeneration = apps.get_model("memory", "VectorGeneration")
    old = RecordEmbedding.objects.filter(model_id=TORCH_MODEL)
    subjects = sorted(set(old.values_list("subject_id", "space_id").distinct()))
    if not subjects:
        return
    old._raw_delete(old.db)
    for i in range(0, len(subjects), CHUNK):
        chunk = subjects[i : i + CHUNK]
        pks = [subject for subject, _ in chunk]
        VectorGeneration.objects.filter(subject_id__in=pks).update(
            generation=F("generation") + 1
        )
        have = set(
            VectorGeneration.objects.filter(subject_id__in=pks).values_list(
                "subject_id", flat=True
            )
        )
        VectorGeneration.objects.bulk_create(
            VectorGeneration(subject_id=subject, space_id=space, generation=1)
            for subject, space in chunk
            if subject not in have
        )


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        cheaper = importlib.import_module("memory.migrations.0019_cheaper_recall_lexemes")
        schema_editor.execute(cheaper.RECALL_LEXEMES_SQL)


class Migration(migrations.Migration):
    dependencies = [("memory", "0022_citus_keys")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
