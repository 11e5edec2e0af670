"""The per-subject vector cache is kept current by generation (issue 49, part 3): a write to the
subject does not make the next recall read every vector of the subject again, only the vectors
of the rows that changed; the matrix is always exactly the one a full load makes."""

import numpy as np
import pytest

from memory.models import Subject
from memory.selectors import recall as reads
from memory.services import hybrid_store

from .conftest import needs_semantic

pytestmark = [needs_semantic, pytest.mark.django_db]

TEXTS = [f"note {i}: the garden, the tea and the rain of day {i}" for i in range(24)]


@pytest.fixture
def counted(monkeypatch):
    """The vectors (rows with their bytes) and record states recall reads, statement by
    statement (the real selectors, counted)."""
    seen = {"vectors": 0, "vector_statements": 0, "records": 0}
    real_stored, real_live = reads.stored_vectors, reads.live_revisions

    def stored(*args, **kwargs):
        rows = real_stored(*args, **kwargs)
        seen["vector_statements"] += 1
        seen["vectors"] += sum(1 for row in rows if row[3] is not None)
        return rows

    def live(*args, **kwargs):
        rows = real_live(*args, **kwargs)
        seen["records"] += len(rows)
        return rows

    monkeypatch.setattr(reads, "stored_vectors", stored)
    monkeypatch.setattr(reads, "live_revisions", live)

    def take() -> dict:
        out = dict(seen)
        for k in seen:
            seen[k] = 0
        return out

    return take


def full_load(subject: Subject) -> hybrid_store.SubjectVectors:
    key = (
        subject.revision,
        reads.vector_marker(subject),
        (hybrid_store.embed.dimension() or 0, hybrid_store.model_key()),
    )
    return hybrid_store._refresh(subject, key, None)


def same_as_full_load() -> hybrid_store.SubjectVectors:
    subject = Subject.objects.get(subject_id="u1")
    cached = hybrid_store.subject_vectors(subject)
    fresh = full_load(subject)
    assert cached.ids == fresh.ids
    assert cached.pks == fresh.pks
    assert np.array_equal(cached.matrix, fresh.matrix)
    return cached


def test_a_write_reads_only_the_changed_vectors(
    hybrid_engine, api, admin, session, write, recall, counted
):
    made = [write(text) for text in TEXTS]
    counted()
    recall("garden tea")
    assert counted()["vectors"] == len(TEXTS)  # the first recall of the subject: a full load
    recall("rain")
    assert counted() == {"vectors": 0, "vector_statements": 0, "records": 0}  # warm: nothing

    new = write("a brand new note about the river")  # drained at once by the fixture
    recall("river")
    after_create = counted()
    assert after_create["vectors"] == 1  # the new record's vector, not the subject's 25
    assert same_as_full_load().ids.count(new) == 1
    counted()  # (the comparison's own full load)

    answer = api(
        admin,
        "memory.records.update",
        {
            "space_id": "s1",
            "record_id": made[0],
            "expected_revision": 1,
            "content": {"text": "now about mountains"},
        },
        session=session,
    )
    assert answer.status == 200, answer.body
    recall("mountains")
    assert counted()["vectors"] == 1  # its new revision's vector only
    same_as_full_load()
    counted()

    answer = api(
        admin,
        "memory.records.delete",
        {"space_id": "s1", "record_id": made[1], "expected_revision": 1},
        session=session,
    )
    assert answer.status == 200, answer.body
    recall("garden")
    assert counted()["vectors"] == 0  # a deletion reads no vector
    cached = same_as_full_load()
    assert made[1] not in cached.ids and len(cached.ids) == len(TEXTS)


def test_a_write_waiting_for_its_vector_changes_nothing_read(
    hybrid_engine, write, recall, counted, monkeypatch
):
    for text in TEXTS[:6]:
        write(text)
    recall("garden")
    counted()
    # the drain has not run yet: the record is ranked lexically, and no vector is read
    monkeypatch.setattr(hybrid_store, "drain", lambda *a, **k: 0)
    write("waiting for the worker")
    recall("worker")
    seen = counted()
    assert seen["vectors"] == 0 and seen["vector_statements"] == 0
    assert seen["records"] == 7  # the subject moved: its records' revisions, no vector
    same_as_full_load()
