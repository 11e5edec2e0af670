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
    """What recall reads for the vector cache, statement by statement (the real selectors,
    counted): vectors (rows with their bytes), records with their ids, records' (pk, revision)
    pairs."""
    seen = {"vectors": 0, "vector_statements": 0, "records": 0, "revisions": 0}
    real_stored, real_current = reads.stored_vectors, reads.current_vectors
    real_live, real_numbers = reads.live_revisions, reads.live_revision_numbers

    def stored(*args, **kwargs):
        rows = real_stored(*args, **kwargs)
        seen["vector_statements"] += 1
        seen["vectors"] += sum(1 for row in rows if row[3] is not None)
        return rows

    def current(*args, **kwargs):
        rows = real_current(*args, **kwargs)
        seen["vector_statements"] += 1
        seen["vectors"] += len(rows)
        seen["records"] += len(rows)
        return rows

    def live(*args, **kwargs):
        rows = real_live(*args, **kwargs)
        seen["records"] += len(rows)
        return rows

    def numbers(*args, **kwargs):
        rows = real_numbers(*args, **kwargs)
        seen["revisions"] += len(rows)
        return rows

    monkeypatch.setattr(reads, "stored_vectors", stored)
    monkeypatch.setattr(reads, "current_vectors", current)
    monkeypatch.setattr(reads, "live_revisions", live)
    monkeypatch.setattr(reads, "live_revision_numbers", numbers)

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
    assert sorted(cached.ids) == sorted(fresh.ids)
    assert cached.pks == fresh.pks
    assert cached.record_ids == fresh.record_ids
    assert {pk: cached.ids[row] for pk, row in cached.rows.items()} == cached.record_ids
    # row by row, whatever the order (the cosine ranking breaks ties by id, not by row)
    order = [cached.ids.index(record_id) for record_id in fresh.ids]
    assert np.array_equal(np.asarray(cached.matrix)[order], fresh.matrix)
    assert cached.live == fresh.live and cached.lacking == fresh.lacking
    return cached


NOTHING = {"vectors": 0, "vector_statements": 0, "records": 0, "revisions": 0}


def test_a_write_reads_only_the_changed_vectors(
    hybrid_engine, api, admin, session, write, recall, counted
):
    made = [write(text) for text in TEXTS]
    counted()
    recall("garden tea")
    assert counted()["vectors"] == len(TEXTS)  # the first recall of the subject: a full load
    recall("rain")
    assert counted() == NOTHING  # warm: nothing
    before = hybrid_store._cache[Subject.objects.get(subject_id="u1").pk]

    new = write("a brand new note about the river")  # drained at once by the fixture
    recall("river")
    # the new record's vector and id (one look-up), not the subject's 25 vectors, and the live
    # records' revisions (two integers each) to find what changed
    assert counted() == {"vectors": 1, "vector_statements": 1, "records": 1, "revisions": 25}
    after = same_as_full_load()
    assert after.ids.count(new) == 1
    # the matrix grew in place: the rows it held were not copied (nor read)
    assert np.shares_memory(before.matrix, after.matrix)
    assert np.array_equal(np.asarray(after.matrix)[: len(TEXTS)], before.matrix)
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
    assert counted() == {"vectors": 1, "vector_statements": 1, "records": 1, "revisions": 25}
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
    seen = counted()
    assert seen["vectors"] == 0 and seen["records"] == 0  # a deletion reads no vector, no id
    cached = same_as_full_load()
    assert made[1] not in cached.ids and len(cached.ids) == len(TEXTS)


def test_a_write_waiting_for_its_vector_changes_nothing_read(
    hybrid_engine, write, recall, counted, monkeypatch
):
    for text in TEXTS[:6]:
        write(text)
    recall("garden")
    before = hybrid_store._cache[Subject.objects.get(subject_id="u1").pk]
    counted()
    # the drain has not run yet: the record is ranked lexically, and no vector is read
    monkeypatch.setattr(hybrid_store, "drain", lambda *a, **k: 0)
    write("waiting for the worker")
    recall("worker")
    seen = counted()
    assert seen["vectors"] == 0 and seen["vector_statements"] == 0
    assert seen["records"] == 0 and seen["revisions"] == 7  # the subject moved: revisions only
    after = same_as_full_load()
    assert after.matrix is before.matrix and len(after.lacking) == 1  # the same matrix


def _vectors(ids: list[str], dim: int = 4) -> hybrid_store.SubjectVectors:
    """A cached matrix of `ids` (pks 1, 2, …) made as a full load makes it, without a database."""
    buffer = hybrid_store._room(len(ids), dim)
    buffer[: len(ids)] = np.arange(len(ids) * dim, dtype=np.float32).reshape(len(ids), dim)
    pks = {record_id: i + 1 for i, record_id in enumerate(ids)}
    return hybrid_store.SubjectVectors(
        (1, 1, (dim, "m")),
        list(ids),
        buffer[: len(ids)],
        pks,
        {pk: record_id for record_id, pk in pks.items()},
        {pk: 1 for pk in pks.values()},
        {pk: pk - 1 for pk in pks.values()},
        frozenset(),
        buffer,
        [len(ids)],
    )


def _row(value: float, dim: int = 4) -> bytes:
    return np.full(dim, value, dtype="<f4").tobytes()


def test_a_matrix_handed_out_is_never_written():
    """Two refreshes from the same cached matrix (two threads of a worker): the first extends
    the shared buffer; the second gets a copy, and neither changes a matrix already made."""
    old = _vectors(["a", "b"])
    seen = np.array(old.matrix)
    first = hybrid_store._changed(
        old, (2, 2, (4, "m")), {**old.live, 3: 1}, frozenset(), frozenset(), [(3, "c", _row(7))]
    )
    second = hybrid_store._changed(
        old, (2, 2, (4, "m")), {**old.live, 4: 1}, frozenset(), frozenset(), [(4, "d", _row(9))]
    )
    assert np.shares_memory(first.matrix, old.matrix)  # in place
    assert not np.shares_memory(second.matrix, old.matrix)  # the buffer's next row was taken
    assert np.array_equal(old.matrix, seen) and old.ids == ["a", "b"]
    assert first.ids == ["a", "b", "c"] and np.all(np.asarray(first.matrix)[2] == 7)
    assert second.ids == ["a", "b", "d"] and np.all(np.asarray(second.matrix)[2] == 9)
    assert second.pks == {"a": 1, "b": 2, "d": 4} and second.rows == {1: 0, 2: 1, 4: 2}


def test_a_dropped_row_leaves_a_new_matrix():
    old = _vectors(["a", "b", "c"])
    seen = np.array(old.matrix)
    live = {1: 1, 3: 2}  # b deleted, c at a new revision whose vector is read now
    new = hybrid_store._changed(
        old, (2, 2, (4, "m")), live, frozenset(), frozenset({2, 3}), [(3, "c", _row(5))]
    )
    assert new.ids == ["a", "c"] and new.pks == {"a": 1, "c": 3} and new.rows == {1: 0, 3: 1}
    assert new.record_ids == {1: "a", 3: "c"}
    assert np.array_equal(np.asarray(new.matrix)[0], seen[0]) and np.all(
        np.asarray(new.matrix)[1] == 5
    )
    assert np.array_equal(old.matrix, seen) and not np.shares_memory(new.matrix, old.matrix)
