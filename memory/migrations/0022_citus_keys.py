# A distributed table's primary key and unique keys must contain its distribution column, and a
# foreign key between two distributed tables must include it on both sides (docs/scaling.md,
# "The order"). On PostgreSQL, the primary key of every space-scoped table that does not yet hold
# `space_id` becomes (<its key>, space_id) (the key first: a look-up by the key alone, such as
# receipts.get by id, still reads the index), and each foreign key between two space-scoped
# tables becomes composite: (subject_id, space_id) -> memory_subject (id, space_id), and so on,
# with the same names and the same DEFERRABLE INITIALLY DEFERRED as Django made them.
# Django's model state does not change (`id` stays each model's pk; every statement already
# names `space_id`, tests/memory/test_space_scoped_sql.py). SQLite: nothing (no cluster runs
# on it). On one PostgreSQL node it costs a wider primary-key index and nothing else.
#
# `memory_principal.home_space` loses its constraint (kept as a column): a reference table (the
# principals are on every node) cannot have a foreign key to a distributed one.

from django.db import migrations, models

# Every space-scoped table of this migration's schema (the `memory` tables but the reference
# tables memory_principal, memory_apitoken and memory_wiresession, distributed by its own key).
SCOPED = [
    "memory_space",
    "memory_subject",
    "memory_record",
    "memory_recordrevision",
    "memory_recordterm",
    "memory_recordembedding",
    "memory_pendingembedding",
    "memory_vectorgeneration",
    "memory_candidate",
    "memory_profiledocument",
    "memory_reflection",
    "memory_grant",
    "memory_receipt",
    "memory_idempotencykey",
    "memory_job",
    "memory_jobheartbeat",
    "memory_export",
    "memory_exportchunk",
    "memory_import",
    "memory_importchunk",
]

_CONSTRAINTS = """
SELECT c.conname, c.contype, r.relname, f.relname,
       array(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i),
       array(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i)
FROM pg_constraint c
JOIN pg_class r ON r.oid = c.conrelid
LEFT JOIN pg_class f ON f.oid = c.confrelid
WHERE c.contype IN ('p', 'f') AND r.relname = ANY(%s)
  AND r.relnamespace = current_schema()::regnamespace
ORDER BY r.relname, c.conname
"""


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _cols(names) -> str:
    return ", ".join(_q(n) for n in names)


def _constraints(cursor):
    cursor.execute(_CONSTRAINTS, [SCOPED])
    pks, fks = {}, []
    for name, kind, table, ref, cols, refcols in cursor.fetchall():
        if kind == "p":
            pks[table] = (name, list(cols))
        elif ref in SCOPED:
            fks.append((name, table, list(cols), ref, list(refcols)))
    return pks, fks


def composite(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        pks, fks = _constraints(cursor)
        moved = [fk for fk in fks if "space_id" not in fk[4]]
        for name, table, *_ in moved:
            cursor.execute(f"ALTER TABLE {_q(table)} DROP CONSTRAINT {_q(name)}")
        for table, (name, cols) in pks.items():
            if "space_id" not in cols:
                cursor.execute(
                    f"ALTER TABLE {_q(table)} DROP CONSTRAINT {_q(name)},"
                    f" ADD CONSTRAINT {_q(name)} PRIMARY KEY ({_cols([*cols, 'space_id'])})"
                )
        for name, table, cols, ref, refcols in moved:
            cursor.execute(
                f"ALTER TABLE {_q(table)} ADD CONSTRAINT {_q(name)}"
                f" FOREIGN KEY ({_cols([*cols, 'space_id'])})"
                f" REFERENCES {_q(ref)} ({_cols([*refcols, 'space_id'])})"
                " DEFERRABLE INITIALLY DEFERRED"
            )


def single(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        pks, fks = _constraints(cursor)
        moved = [fk for fk in fks if "space_id" in fk[4] and len(fk[4]) > 1]
        for name, table, *_ in moved:
            cursor.execute(f"ALTER TABLE {_q(table)} DROP CONSTRAINT {_q(name)}")
        for table, (name, cols) in pks.items():
            if "space_id" in cols and len(cols) > 1:
                kept = [c for c in cols if c != "space_id"]
                cursor.execute(
                    f"ALTER TABLE {_q(table)} DROP CONSTRAINT {_q(name)},"
                    f" ADD CONSTRAINT {_q(name)} PRIMARY KEY ({_cols(kept)})"
                )
        for name, table, cols, ref, refcols in moved:
            cursor.execute(
                f"ALTER TABLE {_q(table)} ADD CONSTRAINT {_q(name)}"
                f" FOREIGN KEY ({_cols([c for c in cols if c != 'space_id'])})"
                f" REFERENCES {_q(ref)} ({_cols([c for c in refcols if c != 'space_id'])})"
                " DEFERRABLE INITIALLY DEFERRED"
            )


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0021_vector_generation"),
    ]

    operations = [
        migrations.AlterField(
            model_name="principal",
            name="home_space",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=models.deletion.SET_NULL,
                related_name="home_principals",
                to="memory.space",
            ),
        ),
        migrations.RunPython(composite, single, elidable=False),
    ]
