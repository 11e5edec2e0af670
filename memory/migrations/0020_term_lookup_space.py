# engine/2's ranking statement (memory.selectors.lexical) names space_id, as every statement does
# since 0017; the covering index on (subject, term) lacked it, so PostgreSQL visited every
# posting's heap row to check it (~2,000 heap pages for a LoCoMo question at 20,000 records)
# instead of reading the index alone. The index now holds space_id, as 0018 did for the vectors.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0019_cheaper_recall_lexemes"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="recordterm",
            name="record_term_lookup",
        ),
        migrations.AddIndex(
            model_name="recordterm",
            index=models.Index(
                fields=["subject", "space", "term"],
                include=("record", "tf", "length", "created_ms"),
                name="record_term_lookup_space",
            ),
        ),
    ]
