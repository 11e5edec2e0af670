"""Changing the embedding model (SPOKE_MEMORY_EMBED_MODEL, issue 27) on a real worker: reflections
made under the old model become stale, recall ranks lexically for a record until its vector of
the new model exists, and a worker started with the new model queues every live record, drains
the backlog to completion and logs its progress."""

from __future__ import annotations

import json

import pytest

from memory.embedding import embed, embed_onnx
from memory.models import PendingEmbedding, Record, RecordEmbedding
from memory.services import hybrid_store
from tests.conftest import OPERATOR_HEALTH, embedding_writer
from tests.memory.hybrid.conftest import needs_semantic
from tests.memory.hybrid.test_embedder import configured, copy_of_the_bundled_model
from tests.memory.hybrid.test_hybrid_recall import CORPUS, PARAPHRASE

from .conftest import run_pending, wait_for

pytestmark = [needs_semantic, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def recalled(api, admin, session, text: str) -> dict:
    """The `recall` of s1/u1 for `text`, as the admin sees it."""
    answer = api(
        admin,
        "memory.recall",
        {"space_id": "s1", "subject_id": "u1", "query": {"text": text}},
        session,
    )
    assert answer.status == 200, answer.body
    return answer.body["recall"]


def top(api, admin, session, text: str) -> list[str]:
    return [r["record"]["record_id"] for r in recalled(api, admin, session, text)["results"]]


def reflection_stale(api, admin, session) -> bool:
    listed = api(admin, "memory.reflections.list", {"space_id": "s1", "subject_id": "u1"}, session)
    return listed.body["reflections"][0]["stale"]


def write(api, admin, session, text: str) -> str:
    answer = api.note(admin, text, session, placement={"scope": "context", "context_id": "c1"})
    assert answer.status == 200, answer.body
    return answer.receipt["refs"][0]["id"]


def test_a_model_change_stales_reflections_and_a_worker_reembeds_everything(
    api, admin, settings, start_worker, tmp_path, client
):
    session = api.connect(admin)
    assert (
        api(admin, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"}).status == 200
    )

    def recall(text: str) -> list[str]:
        return top(api, admin, session, text)

    def stale() -> bool:
        return reflection_stale(api, admin, session)

    with embedding_writer(settings, "hybrid/6"):
        rid = {text: write(api, admin, session, text) for text in CORPUS}
        hybrid_store.drain()  # the old model's vectors, in-process
        assert recall(PARAPHRASE)[0] == rid[CORPUS[0]]
        generated = api(
            admin, "memory.reflections.generate", {"space_id": "s1", "subject_id": "u1"}, session
        )
        assert run_pending(generated.receipt["receipt_id"]).status == "committed"
        assert stale() is False
        old_key = embed.identity().key

        other = copy_of_the_bundled_model(tmp_path)
        with configured(model=str(other)):
            new_key = embed.identity().key
            assert new_key != old_key
            assert stale() is True  # pinned the old model
            assert recall(PARAPHRASE) == []  # no vector of the new model yet: lexical
            assert recall("quarterly tax return") == [rid[CORPUS[4]]]

            worker = start_worker(
                SPOKE_MEMORY_ENGINE="hybrid/6",
                SPOKE_MEMORY_EMBED_MODEL=str(other),
                CELERY_LOGLEVEL="INFO",
            )
            from memory.tasks import drain_derived

            drain_derived.delay()
            live = Record.objects.filter(deleted_at__isnull=True).count()
            wait_for(
                lambda: (
                    RecordEmbedding.objects.filter(model_id=new_key).count() == live
                    and not PendingEmbedding.objects.exists()
                ),
                timeout=300,
                what="the worker to re-embed every live record",
            )
            assert (
                json.loads(client.get("/readyz", **OPERATOR_HEALTH).content)["embedding_backlog"]
                == 0
            )
            assert recall(PARAPHRASE)[0] == rid[CORPUS[0]]
            assert stale() is True  # still made with the old model
            worker.stop()
            assert worker.proc.stderr is not None
            log = worker.proc.stderr.read().decode()
            assert f"{len(CORPUS)} live records queued for a vector of it" in log
            assert f"{len(CORPUS)} records embedded with {other.name}, 0 left" in log
        # back on the old model: its vectors were kept, the reflection is fresh again
        assert recall(PARAPHRASE)[0] == rid[CORPUS[0]]
        assert stale() is False


@pytest.mark.skipif(not embed_onnx.installed(), reason="onnxruntime/onnx not installed")
def test_switching_engine2_to_hybrid6_embeds_in_the_background(
    api, admin, settings, start_worker, client
):
    """A provider switched from engine/2 (no vectors) to hybrid/6 (the default, the int8 ONNX
    form's vectors) embeds every live record in the background like after any model change,
    recalling lexically until a record's int8 vector exists; switched back, it answers as
    engine/2 at once and a reflection made under engine/2 is fresh again."""
    session = api.connect(admin)
    assert (
        api(admin, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"}).status == 200
    )

    def recall(text: str) -> dict:
        return recalled(api, admin, session, text)

    def stale() -> bool:
        return reflection_stale(api, admin, session)

    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    rid = {text: write(api, admin, session, text) for text in CORPUS}
    hybrid_store.drain()
    assert not RecordEmbedding.objects.exists()  # engine/2 queues no vector
    assert top(api, admin, session, PARAPHRASE) == []  # lexical: no word in common
    generated = api(
        admin, "memory.reflections.generate", {"space_id": "s1", "subject_id": "u1"}, session
    )
    assert run_pending(generated.receipt["receipt_id"]).status == "committed"
    assert stale() is False

    with embedding_writer(settings, "hybrid/6"):
        int8 = embed.identity()
        assert int8.name == "all-MiniLM-L6-v2-int8"
        described = api(admin, "memory.describe", {}).body["provider"]
        assert described["engine_policy_version"] == "hybrid/6"
        assert described["extensions"]["spoke-recall"]["embedding_model"] == int8.wire()
        assert stale() is True
        answer = recall(PARAPHRASE)
        assert answer["engine_policy_version"] == "hybrid/6"
        assert answer["results"] == []  # no int8 vector yet: lexical, and nothing matches
        assert top(api, admin, session, "quarterly tax return") == [rid[CORPUS[4]]]

        worker = start_worker(SPOKE_MEMORY_ENGINE="hybrid/6", CELERY_LOGLEVEL="INFO")
        from memory.tasks import drain_derived

        drain_derived.delay()
        live = Record.objects.filter(deleted_at__isnull=True).count()
        wait_for(
            lambda: (
                RecordEmbedding.objects.filter(model_id=int8.key).count() == live
                and not PendingEmbedding.objects.exists()
            ),
            timeout=300,
            what="the worker to embed every live record with the int8 form",
        )
        assert (
            json.loads(client.get("/readyz", **OPERATOR_HEALTH).content)["embedding_backlog"] == 0
        )
        assert top(api, admin, session, PARAPHRASE)[0] == rid[CORPUS[0]]
        worker.stop()
        assert worker.proc.stderr is not None
        log = worker.proc.stderr.read().decode()
        assert f"{len(CORPUS)} live records queued for a vector of it" in log
        assert f"{len(CORPUS)} records embedded with all-MiniLM-L6-v2-int8, 0 left" in log

    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    assert top(api, admin, session, PARAPHRASE) == []
    assert top(api, admin, session, "quarterly tax return") == [rid[CORPUS[4]]]
    assert stale() is False
