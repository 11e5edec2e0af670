"""Retired engines (docs/decisions/two-served-engines.md): engine/1 and hybrid/1–3 (issue 42),
hybrid/4 and hybrid/5 (issue 44, hybrid/6 took their place). The registry serves engine/2 and
hybrid/6 only; asking for a retired one is refused with the message naming the served ones.
Migration 0023 dropped what only the issue-42 retirees read — engine/1's GIN index and its SQL
function on PostgreSQL, the torch form's vectors on every database, each affected subject's
vector generation moved so no cached matrix outlives them. hybrid/4 and hybrid/5 kept the term
rows and the int8 form's vectors, which hybrid/6 keeps and reads as they are: nothing of theirs
is left to drop, so their retirement has no migration. (A configured retired engine refusing to
start: tests/memory/hybrid/test_embedder.py; a reflection pinned to one reading stale:
tests/memory/ops/test_reflections.py.)"""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from memory.embedding import embed
from memory.models import RecordEmbedding, VectorGeneration
from memory.services.recall_engines import registry
from tests.conftest import requires_postgres

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module("memory.migrations.0023_retire_engines")


def test_only_the_two_engines_are_served():
    assert {"engine/2", "hybrid/6"} <= set(registry.policies())
    assert {"hybrid/4", "hybrid/5"} <= set(registry.RETIRED)
    assert not set(registry.policies()) & set(registry.RETIRED)


@pytest.mark.parametrize("retired", registry.RETIRED)
def test_asking_for_a_retired_engine_is_refused_naming_the_served_ones(settings, retired):
    with pytest.raises(ImproperlyConfigured) as refused:
        registry.get(retired)
    said = str(refused.value)
    assert said.startswith(f"SPOKE_MEMORY_ENGINE={retired} is retired")
    assert "this provider serves engine/2, hybrid/6" in said
    settings.SPOKE_MEMORY_ENGINE = retired
    with pytest.raises(ImproperlyConfigured, match=f"{retired} is retired"):
        registry.current()
    with pytest.raises(ImproperlyConfigured, match=f"{retired} is retired"):
        registry.install()


def test_hybrid6_keeps_the_copies_hybrid4_and_hybrid5_left():
    """hybrid/4 and hybrid/5 registered the term rows and the vectors of the int8 form
    (`fused.register_embedder`, embed_model=all-MiniLM-L6-v2-int8); hybrid/6 keeps and reads the
    same, so a deployment moving from either re-embeds nothing and no migration drops anything."""
    hybrid6 = registry.get("hybrid/6")
    assert [copy.name for copy in hybrid6.copies] == ["terms", "vectors"]
    assert hybrid6.embed_model == embed.INT8_NAME and hybrid6.embedder


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
