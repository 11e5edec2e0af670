"""The reranker is part of the policy a reflection pins (as the embedding model is): a reflection
made under one reranker reads stale under another, or none, and fresh again under its own; one
made with none reads stale once a reranker is configured. Identities only: no server is called."""

from __future__ import annotations

import pytest

from memory.ops.reflections import PIN
from tests.memory.jobs import make_record, run_pending, subject_row
from tests.memory.ops.test_reflections import generated, state

pytestmark = pytest.mark.django_db

A = "http://127.0.0.1:8201/rerank"
B = "http://127.0.0.1:8202/v1/rerank"


@pytest.fixture
def three(space, admin) -> None:
    subject = subject_row("s1", "u1")
    for text in ("prefers green tea", "lives in Lisbon", "plans a trip to Porto"):
        make_record(subject, text)


def stale(api, admin, session) -> bool:
    return bool(state(api, admin, session)["latest_reflection"]["stale"])


def test_a_reflection_made_under_one_reranker_reads_stale_under_another(
    api, admin, session, three, reranker, tmp_path
):
    reranker(url=A)
    reflection = generated(api, admin, session, run_pending)
    pinned = reflection.extensions[PIN]["reranker"]
    assert pinned["source"] == "server" and pinned["digest"].startswith("sha256:")
    assert not stale(api, admin, session)
    reranker(url=B)
    assert stale(api, admin, session)
    reranker(url=A, wire="cohere")  # the same URL on the other wire is another reranker
    assert stale(api, admin, session)
    reranker()
    assert stale(api, admin, session)
    (tmp_path / "config.json").write_text("{}")
    reranker(model=str(tmp_path))
    assert stale(api, admin, session)
    reranker(url=A)
    assert not stale(api, admin, session)


def test_a_reflection_made_without_a_reranker_reads_stale_under_one(
    api, admin, session, three, reranker
):
    reflection = generated(api, admin, session, run_pending)
    assert "reranker" not in reflection.extensions.get(PIN, {})
    assert not stale(api, admin, session)
    reranker(url=A)
    assert stale(api, admin, session)
