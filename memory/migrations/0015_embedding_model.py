"""A record revision may have one vector per embedding model (SPOKE_MEMORY_EMBED_MODEL): after a
model change the new vectors are made beside the old ones, and recall reads only the configured
model's (docs/recall-quality.md, "Changing the embedding model")."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory", "0014_principal_home_space")]

    operations = [
        migrations.RemoveConstraint(model_name="recordembedding", name="record_embedding_unique"),
        migrations.AddConstraint(
            model_name="recordembedding",
            constraint=models.UniqueConstraint(
                fields=["record", "revision", "model_id"], name="record_embedding_unique"
            ),
        ),
    ]
