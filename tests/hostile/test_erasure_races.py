"""Erasure against the embedding worker (issue 26, item 4): a record deleted while the worker is
embedding its batch must not keep a RecordEmbedding row. The worker (drain, and backfill) embeds
without holding a lock, so the delete can commit in between; it must then store nothing for the
erased record. Runs the real bundled model and a real delete over the op, on PostgreSQL, with the
worker paused between embedding and storing (a wrapper around the real `embed`) while the delete
commits; and the other order, the delete in flight while the worker is about to store."""

from __future__ import annotations

import importlib
import threading

import pytest
from django.db import connection

from memory.embedding import embed as embed_module
from memory.models import PendingEmbedding, Record, RecordEmbedding
from memory.services import hybrid_store
from tests.conftest import embedding_writer, requires_postgres
from tests.memory.hybrid.conftest import needs_semantic
from tests.memory.jobs import a_session_waits_for_a_lock

_async = importlib.import_module("tests.memory.async.conftest")  # `async` is a keyword
make_record, subject_row, wait_for = _async.make_record, _async.subject_row, _async.wait_for

# SQLite: every write transaction is BEGIN IMMEDIATE, so a worker and a delete never interleave.
pytestmark = [requires_postgres, needs_semantic, pytest.mark.django_db(transaction=True)]

SECRET = "my passport number is X1234567"


@pytest.fixture
def queued(settings):
    with embedding_writer(settings, "hybrid/6"):
        yield


def queued_records(n: int = 3) -> list[Record]:
    """Records as a write under hybrid/6 leaves them: stored, and queued for their vector."""
    subject = subject_row()
    records = [make_record(subject, f"{SECRET} {i}") for i in range(n)]
    PendingEmbedding.objects.bulk_create(
        [PendingEmbedding(space_id=r.space_id, record=r, revision=r.revision) for r in records]
    )
    return records


def delete(api, admin, session, record: Record):
    return api(
        admin,
        "memory.records.delete",
        {"space_id": "s1", "record_id": record.record_id, "expected_revision": record.revision},
        session,
    )


def paused_embedding(monkeypatch):
    """The real model, with the worker held after it embedded and before it stores."""
    embedded, release = threading.Event(), threading.Event()
    original = embed_module.embed

    def embed(texts):
        vectors = original(texts)
        embedded.set()
        assert release.wait(60)
        return vectors

    monkeypatch.setattr(embed_module, "embed", embed)
    return embedded, release


def in_thread(work) -> tuple[threading.Thread, list]:
    out: list = []

    def run():
        try:
            out.append(work())
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            out.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


@pytest.mark.parametrize("worker", ["drain", "backfill"])
def test_a_record_deleted_while_its_batch_is_embedded_keeps_no_vector(
    queued, api, admin, monkeypatch, worker
):
    session = api.connect(admin)
    records = queued_records()
    embedded, release = paused_embedding(monkeypatch)
    run = hybrid_store.drain if worker == "drain" else lambda: hybrid_store.backfill(subject_row())
    thread, out = in_thread(run)
    assert embedded.wait(60)  # the worker holds the batch's vectors, the erased one's included
    answer = delete(api, admin, session, records[0])  # commits meanwhile
    assert answer.status == 200, answer.body
    release.set()
    thread.join(60)
    assert not thread.is_alive()
    assert not isinstance(out[0], BaseException), out
    assert not RecordEmbedding.objects.filter(record=records[0]).exists()
    assert set(RecordEmbedding.objects.values_list("record_id", flat=True)) == {
        records[1].pk,
        records[2].pk,
    }
    if worker == "drain":
        assert not PendingEmbedding.objects.exists()  # the erased record's row went too


def test_a_delete_in_flight_makes_the_worker_wait_then_store_nothing_for_it(
    queued, api, admin, monkeypatch
):
    """The delete holds its locks (paused after erasing the derived copies) when the worker
    comes to store: the worker waits for the delete's commit and then leaves the record out."""
    from memory.services import erasure

    session = api.connect(admin)
    records = queued_records()
    in_delete, release_delete = threading.Event(), threading.Event()
    original = erasure.erase_reflections

    def slow_erase(record):
        out = original(record)
        in_delete.set()
        assert release_delete.wait(60)
        return out

    monkeypatch.setattr(erasure, "erase_reflections", slow_erase)
    deleting, answers = in_thread(lambda: delete(api, admin, session, records[0]))
    assert in_delete.wait(60)
    draining, drained = in_thread(hybrid_store.drain)

    wait_for(a_session_waits_for_a_lock, what="the worker to wait for the delete")
    release_delete.set()
    deleting.join(60)
    draining.join(60)
    assert not deleting.is_alive() and not draining.is_alive()
    assert answers[0].status == 200, answers[0].body
    assert drained == [2]
    assert not RecordEmbedding.objects.filter(record=records[0]).exists()
    assert RecordEmbedding.objects.count() == 2
