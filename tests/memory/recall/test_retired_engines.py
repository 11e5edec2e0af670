"""engine/1 and hybrid/1–3 are retired (issue 42; docs/decisions/two-served-engines.md): the
registry serves engine/2 and hybrid/4 only, and migration 0023 dropped what only the retired
ones read — engine/1's GIN index and its SQL function on PostgreSQL, the torch form's vectors on
every database, each affected subject's vector generation moved so no cached matrix outlives
them. (A configured retired engine refusing to start: tests/memory/hybrid/test_embedder.py; a
reflection pinned to one reading stale: tests/memory/ops/test_reflections.py.)"""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import connection

from memory.models import RecordEmbedding, VectorGeneration
from memory.services.recall_engines import registry
from tests.conftest import requires_postgres

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module("memory.migrations.0023_retire_engines")


def test_only_the_two_engines_are_served():
    assert {"engine/2", "hybrid/4"} <= set(registry.policies())
    assert not set(registry.policies()) & set(registry.RETIRED)


@requires_postgres
def test_the_migrated_schema_has_no_engine_1_index_nor_its_function():
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM pg_indexes WHERE indexname = 'record_recall_lexemes'")
        assert cur.fetchone()[0] == 0
        cur.execute("SELECT to_regprocedure('spoke_recall_lexemes(text)')")
        assert cur.fetchone()[0] is None


def _vector(record, model_id: str) -> None:
    RecordEmbedding.objects.create(
        record=record, revision=1, model_id=model_id, dim=2, vector=b"\x00\x00\x80?\x00\x00\x00\x00"
    )


def test_the_migration_drops_the_torch_forms_vectors_and_moves_their_subjects_generation(
    make_record,
):
    torch = make_record("a note about tea", subject_id="u1")
    also = make_record("a note about jam", subject_id="u1")
    other = make_record("a note about bread", subject_id="u2")
    _vector(torch, MIGRATION.TORCH_MODEL)
    _vector(also, MIGRATION.TORCH_MODEL)
    _vector(also, "all-MiniLM-L6-v2-int8@0123456789abcdef")
    _vector(other, "all-MiniLM-L6-v2-int8@0123456789abcdef")
    VectorGeneration.objects.filter(subject_id__in=[torch.subject_id, other.subject_id]).delete()
    VectorGeneration.objects.create(space_id=other.space_id, subject_id=other.subject_id)

    def run(sql: str) -> None:
        with connection.cursor() as cur:
            cur.execute(sql)

    MIGRATION.forward(apps, SimpleNamespace(connection=connection, execute=run))

    assert not RecordEmbedding.objects.filter(model_id=MIGRATION.TORCH_MODEL).exists()
    assert sorted(RecordEmbedding.objects.values_list("record_id", flat=True)) == sorted(
        [also.pk, other.pk]
    )
    # u1 had torch vectors: its generation moved (made at 1); u2 had none: untouched
    assert VectorGeneration.objects.get(subject_id=torch.subject_id).generation == 1
    assert VectorGeneration.objects.get(subject_id=other.subject_id).generation == 0
    MIGRATION.forward(apps, SimpleNamespace(connection=connection, execute=run))  # idempotent
    assert VectorGeneration.objects.get(subject_id=torch.subject_id).generation == 1
