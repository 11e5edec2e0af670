"""The rerank stage before the cut against a real rerank server process (rerank_server.py, scoring
by token overlap) on both wires: memory.recall answers the pool in the server's order with its
relevance as the score; a server that is down, slow, trickling, too large or answering garbage
gives the unreranked answer (200, never a 5xx) and one log line without content; the request is
bounded (pool size, bytes a text)."""

from __future__ import annotations

import logging

import pytest

from memory.engine import hybrid6
from memory.services import rerank
from tests.memory.hybrid.conftest import needs_semantic

from .conftest import ids
from .rerank_server import overlap

pytestmark = pytest.mark.django_db

QUERY = "red apple pie recipe"
TEXTS = [
    "apple apple apple apple",
    "apple pie and apple pie again",
    "apple pie apple pie recipe recipe",
    "red apple red apple",
    "red red red",
    "grandmother wrote her red apple pie recipe on a card kept in the kitchen drawer beside"
    " the old spoons, the forks, two tea towels, a box of matches, a bundle of letters from"
    " the seaside town and the photographs of a summer long ago",
    "a recipe for bread",
    "the weather is mild today",
]
WIRES = ["tei", "cohere"]


@pytest.fixture
def notes(write) -> dict[str, str]:
    """record_id → text of TEXTS, written through the API."""
    return {write(text): text for text in TEXTS}


def expected(notes: dict[str, str], engine_order: list[str], n: int) -> list[tuple[str, float]]:
    """The first n of the engine's pool in the server's order (ties: the engine's order)."""
    scored = [(rid, overlap(QUERY, notes[rid])) for rid in engine_order]
    return sorted(scored, key=lambda p: -p[1])[:n]  # sorted() is stable


@pytest.mark.parametrize("wire", WIRES)
def test_the_pool_is_answered_in_the_servers_order_before_the_cut(
    server, reranker, notes, recall, wire
):
    plain = recall(QUERY, budget={"max_records": 2})
    pool = ids(recall(QUERY, budget={"max_records": 50}))
    reranker(url=server.url("ok", wire))
    answer = recall(QUERY, budget={"max_records": 2})
    want = expected(notes, pool, 2)
    assert [(r["record"]["record_id"], r["score"]) for r in answer["results"]] == want
    assert [r["rank"] for r in answer["results"]] == [1, 2]
    # The record holding every query word was below the cut unreranked: the rerank came first.
    assert want[0][1] == 1.0 and want[0][0] not in ids(plain)
    assert answer["total_eligible"] == plain["total_eligible"]
    assert answer["truncation"] == plain["truncation"]
    assert server.last()["wire"] == wire


def test_a_url_without_the_wires_path_gets_it_and_the_setting_picks_the_wire(
    server, reranker, notes, recall
):
    base = f"http://127.0.0.1:{server.port}/ok"
    reranker(url=base)
    assert rerank.endpoint() == base + "/rerank" and rerank.wire() == "tei"
    first = recall(QUERY, budget={"max_records": 1})
    assert server.last()["wire"] == "tei"
    reranker(url=base, wire="cohere", model="rerank-test-model")
    assert rerank.endpoint() == base + "/v1/rerank"
    assert recall(QUERY, budget={"max_records": 1}) == first
    last = server.last()
    assert last["wire"] == "cohere" and last["keys"] == ["documents", "model", "query", "top_n"]
    assert last["top_n"] == last["count"]


def unreranked_and_logged(recall, caplog, notes, plain: dict) -> str:
    """Recall under the configured (failing) reranker: the unreranked answer, one warning line
    of memory.rerank without content; answers that line."""
    with caplog.at_level(logging.INFO):
        answer = recall(QUERY, budget={"max_records": 3})
    assert answer == plain
    lines = [r for r in caplog.records if r.name == "memory.rerank"]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING
    words = {w for text in [QUERY, *notes.values()] for w in text.split() if len(w) > 3}
    for record in caplog.records:  # no line of the request, from any logger, holds content
        message = record.getMessage()
        assert not [w for w in words if w in message], message
    return lines[0].getMessage()


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize(
    "mode,why",
    [
        ("garbage", "JSONDecodeError"),
        ("outofrange", "not on [0, 1]"),
        ("nan", "not on [0, 1]"),
        ("short", "wrong number"),
        ("dupindex", "bad index"),
        ("error", "HTTP 500"),
        ("huge", "byte cap"),
        ("hugecl", "byte cap"),
    ],
)
def test_a_bad_answer_gives_the_unreranked_answer(
    server, reranker, notes, recall, caplog, wire, mode, why
):
    plain = recall(QUERY, budget={"max_records": 3})
    reranker(url=server.url(mode, wire))
    assert why in unreranked_and_logged(recall, caplog, notes, plain)


@pytest.mark.parametrize("mode", ["slow", "trickle"])
def test_a_slow_server_is_cut_off_at_the_timeout(server, reranker, notes, recall, caplog, mode):
    """The server's answer is good but comes after 3 s: with a 0.5 s timeout the answer is the
    unreranked one (were the wait not bounded, it would be the reranked one)."""
    plain = recall(QUERY, budget={"max_records": 3})
    reranker(url=server.url(mode), timeout_s=0.5)
    line = unreranked_and_logged(recall, caplog, notes, plain)
    assert "deadline" in line or "TimeoutError" in line


def test_a_server_that_is_down_gives_the_unreranked_answer(server, reranker, notes, recall, caplog):
    from .conftest import port

    plain = recall(QUERY, budget={"max_records": 3})
    reranker(url=f"http://127.0.0.1:{port()}/rerank")  # nothing listens there
    assert "ConnectionRefusedError" in unreranked_and_logged(recall, caplog, notes, plain)


def test_the_request_is_bounded_by_the_pool_and_the_bytes_a_text(server, reranker, write, recall):
    long = "apple " * 2_000 + "é" * 100  # 12 KiB and more
    for n in range(12):
        write(f"note {n} {long}")
    reranker(url=server.url("ok"), pool=5, max_text_bytes=301)
    answer = recall("apple " * 300 + "é", budget={"max_records": 3})
    last = server.last()
    assert last["count"] == 5  # the pool, not the 12 eligible records
    assert last["max_text_bytes"] <= 301 and last["query_bytes"] <= 301
    assert len(answer["results"]) == 3 and answer["total_eligible"] == 12
    # max_records above the pool: the pool grows to it (every answered record is reranked).
    recall("apple", budget={"max_records": 8})
    assert server.last()["count"] == 8


def test_a_blank_query_is_not_reranked(server, reranker, notes, recall):
    plain = recall("   ", budget={"max_records": 3})
    before = server.last()
    reranker(url=server.url("ok"))
    assert recall("   ", budget={"max_records": 3}) == plain
    assert server.last() == before  # no request was sent


def test_describe_names_the_reranker_without_its_url(api, admin, server, reranker):
    reranker(url=server.url("ok", "cohere"), model="rerank-test-model")
    said = api(admin, "memory.describe", {}).body["provider"]
    named = said["extensions"]["spoke-recall"]["reranker"]
    assert named["name"] == "rerank-test-model" and named["source"] == "server"
    assert named["digest"].startswith("sha256:") and f"127.0.0.1:{server.port}" not in str(said)


def test_clip_cuts_on_a_character_boundary():
    assert rerank.clip("aé", 2) == "a"
    assert rerank.clip("aé", 3) == "aé"
    assert rerank.clip("abc", 16) == "abc"


def test_reranking_adds_no_statement(server, reranker, notes, recall):
    """The pool's texts come from the statement that reads the answer's records, made pool-deep:
    a reranked recall runs as many statements as an unreranked one."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    recall(QUERY, budget={"max_records": 2})  # the process's cached look-ups, aside
    with CaptureQueriesContext(connection) as plain:
        recall(QUERY, budget={"max_records": 2})
    reranker(url=server.url("ok"))
    recall(QUERY, budget={"max_records": 2})
    with CaptureQueriesContext(connection) as reranked:
        answer = recall(QUERY, budget={"max_records": 2})
    assert server.last()["count"] == answer["total_eligible"]  # the whole pool was scored
    assert len(reranked.captured_queries) == len(plain.captured_queries)


@pytest.fixture
def hybrid6_engine(settings, monkeypatch):
    from tests.memory.hybrid.conftest import _engine_on

    yield from _engine_on(settings, monkeypatch, "hybrid/6")


@needs_semantic
def test_a_reranked_hybrid6_answer_keeps_what_matched_each_result(
    hybrid6_engine, server, reranker, notes, recall
):
    """docs/recall.md#scores: under hybrid/6 every result's record carries
    `extensions["spoke-recall-match"]`; a reranker re-scores and re-orders the pool but keeps
    each record's match as the engine found it."""
    plain = recall(QUERY, budget={"max_records": 50})
    matched = {
        r["record"]["record_id"]: r["record"]["extensions"][hybrid6.MATCH_KEY]
        for r in plain["results"]
    }
    reranker(url=server.url("ok"))
    answer = recall(QUERY, budget={"max_records": 3})
    want = expected(notes, ids(plain), 3)
    assert [(r["record"]["record_id"], r["score"]) for r in answer["results"]] == want
    for result in answer["results"]:
        record = result["record"]
        assert record["extensions"][hybrid6.MATCH_KEY] == matched[record["record_id"]]
