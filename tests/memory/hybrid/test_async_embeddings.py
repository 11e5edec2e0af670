"""Embeddings off the write path: a write under hybrid/6 queues its record (PendingEmbedding, in
the write's transaction) and answers without embedding; the worker's drain embeds the backlog in
batches after commit. Until then the record is recalled lexically, and the answer is a function
of the stored state (which vectors exist): the same state answers the same."""

import json

import pytest

from memory.engine import hybrid6
from memory.models import PendingEmbedding, Record, RecordEmbedding
from memory.services import hybrid_store
from memory.tasks import DRAINS, drain_derived
from tests.conftest import embedding_writer
from tests.memory.hybrid.conftest import ids, needs_semantic
from tests.memory.hybrid.test_hybrid6_ranking import plain

pytestmark = [pytest.mark.django_db, needs_semantic]

PUPPY = "I adopted a golden retriever puppy last spring"
PARAPHRASE = "canine companion"  # no token in common with any record


@pytest.fixture
def queued_engine(settings):
    """hybrid/6 as the provider runs it: the writer queues, nothing drains until asked."""
    if hybrid_store.drain not in DRAINS:
        DRAINS.append(hybrid_store.drain)
    with embedding_writer(settings, "hybrid/6"):
        yield


def test_a_write_queues_its_vector_and_the_drain_makes_it(queued_engine, space, write, recall):
    puppy = write(PUPPY)
    write("We are planning a trip to Japan in the autumn")
    record = Record.objects.get(record_id=puppy)
    assert not RecordEmbedding.objects.exists()  # the write did not embed
    assert PendingEmbedding.objects.get(record=record).revision == 1
    assert hybrid_store.backlog() == 2
    assert ids(recall("golden retriever"))[0] == puppy  # lexical meanwhile
    before = recall(PARAPHRASE)
    assert puppy not in ids(before)
    assert recall(PARAPHRASE) == before  # same stored state, same answer
    assert drain_derived() == 2
    assert hybrid_store.backlog() == 0
    assert RecordEmbedding.objects.filter(record=record, revision=1).count() == 1
    assert ids(recall(PARAPHRASE))[0] == puppy  # the new vector is seen without another write


def test_before_the_drain_every_result_says_it_matched_by_its_words_only(
    queued_engine, space, write, recall
):
    """docs/recall.md#scores: under hybrid/6 every result's record carries
    `extensions["spoke-recall-match"]`, also while no vector of the subject is made yet (each
    result then `{lexical: true, vector: false}`, scored as the plain policy with an empty cosine
    side); an empty query (engine/2's newest first) carries none, before and after the drain."""
    puppy = write(PUPPY)
    trip = write("We are planning a trip to Japan in the autumn")
    walk = write("The golden leaves in autumn make the dog walk slow")
    assert not RecordEmbedding.objects.exists()
    answer = recall("golden autumn puppy")
    assert set(ids(answer)) == {puppy, trip, walk}
    for result in answer["results"]:
        assert result["record"]["extensions"][hybrid6.MATCH_KEY] == {
            "lexical": True,
            "vector": False,
        }
    assert [(r["record"]["record_id"], r["score"]) for r in answer["results"]] == plain(
        space, "golden autumn puppy", 10, semantic=False
    )
    for query in ("", "the of and"):  # no query term: engine/2's newest first, no match
        empty = recall(query)
        assert ids(empty) == [walk, trip, puppy]
        assert all(hybrid6.MATCH_KEY not in r["record"]["extensions"] for r in empty["results"])
    assert drain_derived() == 3
    after = recall("golden autumn puppy")
    assert after["results"][0]["record"]["extensions"][hybrid6.MATCH_KEY]["vector"] is True
    assert all(hybrid6.MATCH_KEY not in r["record"]["extensions"] for r in recall("")["results"])


def test_an_update_requeues_the_new_revision_and_a_delete_drops_the_row(
    queued_engine, api, admin, space, write, session
):
    rid = write(PUPPY)
    hybrid_store.drain()
    answer = api(
        admin,
        "memory.records.update",
        {
            "space_id": space.space_id,
            "record_id": rid,
            "expected_revision": 1,
            "content": {"text": "My dog is a black labrador"},
        },
        session=session,
    )
    assert answer.status == 200, answer.body
    assert PendingEmbedding.objects.get(record=Record.objects.get(record_id=rid)).revision == 2
    hybrid_store.drain()
    assert sorted(
        RecordEmbedding.objects.filter(record=Record.objects.get(record_id=rid)).values_list(
            "revision", flat=True
        )
    ) == [1, 2]
    write("Another note to embed")
    answer = api(
        admin,
        "memory.records.delete",
        {"space_id": space.space_id, "record_id": rid, "expected_revision": 2},
        session=session,
    )
    assert answer.status == 200
    assert hybrid_store.drain() == 1
    assert hybrid_store.backlog() == 0
    assert not RecordEmbedding.objects.filter(record=Record.objects.get(record_id=rid)).exists()


def test_a_refused_write_queues_nothing(queued_engine, api, admin, space, write, session):
    rid = write(PUPPY)
    hybrid_store.drain()
    answer = api(
        admin,
        "memory.records.update",
        {
            "space_id": space.space_id,
            "record_id": rid,
            "expected_revision": 9,
            "content": {"text": "lost update"},
        },
        session=session,
    )
    assert answer.body["error"]["code"] == "REVISION_CONFLICT"
    assert hybrid_store.backlog() == 0


HEALTH_TOKEN = "health-secret-of-the-monitoring-system"


def test_readyz_shows_the_backlog_to_an_operator_only(
    queued_engine, client, space, write, settings
):
    """Issue 38, finding 8 (failed before: an unauthenticated /readyz carried the provider-wide
    count): ready or not for anyone, the count for the health token or a console superuser."""
    from django.contrib.auth import get_user_model

    settings.SPOKE_MEMORY_HEALTH_TOKEN = HEALTH_TOKEN
    write(PUPPY)
    assert json.loads(client.get("/readyz").content) == {"status": "ok"}
    for wrong in ("Bearer nope", f"Bearer {HEALTH_TOKEN}x", HEALTH_TOKEN, "Bearer "):
        answer = client.get("/readyz", HTTP_AUTHORIZATION=wrong)
        assert json.loads(answer.content) == {"status": "ok"}
    operator = {"HTTP_AUTHORIZATION": f"Bearer {HEALTH_TOKEN}"}
    assert json.loads(client.get("/readyz", **operator).content)["embedding_backlog"] == 1
    staff = get_user_model().objects.create_user("staff", password="pw-123456789", is_staff=True)
    client.force_login(staff)
    assert json.loads(client.get("/readyz").content) == {"status": "ok"}  # staff is not enough
    root = get_user_model().objects.create_superuser("root", password="pw-123456789")
    client.force_login(root)
    assert json.loads(client.get("/readyz").content)["embedding_backlog"] == 1
    client.logout()
    hybrid_store.drain()
    assert json.loads(client.get("/readyz", **operator).content)["embedding_backlog"] == 0


def test_readyz_shows_no_count_without_a_health_token_set(queued_engine, client, write, settings):
    settings.SPOKE_MEMORY_HEALTH_TOKEN = ""
    write(PUPPY)
    assert json.loads(client.get("/readyz", HTTP_AUTHORIZATION="Bearer ").content) == {
        "status": "ok"
    }


def test_readyz_has_no_backlog_under_engine_2(settings, client):
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    assert "embedding_backlog" not in json.loads(client.get("/readyz").content)


def test_the_sweep_wakes_the_drain(queued_engine, monkeypatch):
    from memory import tasks

    woken = []
    monkeypatch.setattr(tasks.drain_derived, "delay", lambda: woken.append(True))
    tasks.sweep_jobs()
    assert woken == [True]


def test_a_broker_outage_leaves_the_backlog_for_the_next_sweep(
    queued_engine, monkeypatch, space, write
):
    from memory import tasks

    def down():
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.drain_derived, "delay", down)
    tasks.sweep_jobs()  # logs, does not raise
    write(PUPPY)
    assert hybrid_store.backlog() == 1
