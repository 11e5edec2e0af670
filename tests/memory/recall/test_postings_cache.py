"""The lexical head's postings cache (PostgreSQL, memory.selectors.lexical): a recall by a caller
who may read every live record of the subject keeps the query terms' postings by the subject's
revision, reads only the terms it does not hold, and reads again after any write to the subject
(docs/decisions/postings-cache.md). On SQLite the head is one SQL statement and nothing is
kept: these tests skip there."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.engine import lexical
from memory.engine.rank import Doc
from memory.models import Record, RecordTerm, Subject
from memory.ops.base import call
from memory.selectors import lexical as lexical_store
from memory.services import term_store

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _postgresql_only(settings):
    if connection.vendor != "postgresql":
        pytest.skip("the postings cache is PostgreSQL's (SQLite ranks in one statement)")
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    settings.SPOKE_MEMORY_POSTINGS_CACHE_MB = 64


TERM_TABLE = RecordTerm._meta.db_table


def _recall(who, query: str, **extra) -> dict:
    return call(
        who.principal,
        "memory.recall",
        {"space_id": "s1", "subject_id": "u1", "query": {"text": query}, **extra},
    )["recall"]


def _postings_reads(captured: CaptureQueriesContext) -> int:
    return sum(1 for q in captured.captured_queries if TERM_TABLE in q["sql"])


def _oracle(query: str, context_ids: list[str] | None = None) -> list[tuple[str, float]]:
    subject = Subject.objects.get(space_id="s1", subject_id="u1")
    rows = Record.objects.filter(space_id="s1", subject=subject, deleted_at__isnull=True)
    if context_ids is not None:
        rows = rows.filter(placement_context_id__in=context_ids)
    docs = [Doc(r.record_id, term_store.epoch_ms(r.created_at), r.text) for r in rows]
    return [(r.record_id, r.score) for r in lexical.rank(docs, query)]


def _ranked(answer: dict) -> list[tuple[str, float]]:
    return [(r["record"]["record_id"], r["score"]) for r in answer["results"]]


def _create(admin, text: str) -> str:
    answer = call(
        admin.principal,
        "memory.records.create",
        {"space_id": "s1", "subject_id": "u1", "kind": "note", "content": {"text": text},
         "placement": {"scope": "shared"}},
    )  # fmt: skip
    return answer["receipt"]["refs"][0]["id"]


def test_a_second_recall_reads_no_postings_and_answers_the_same(make_record, admin):
    for i in range(40):
        make_record(f"tea garden {i} " + "blue " * (i % 5), record_id=f"rec_{i:02d}")
    with CaptureQueriesContext(connection) as cold:
        first = _recall(admin, "blue tea")
    with CaptureQueriesContext(connection) as warm:
        second = _recall(admin, "blue tea")
    assert _postings_reads(cold) == 1 and _postings_reads(warm) == 0
    assert second == first
    assert _ranked(second) == _oracle("blue tea")[: len(second["results"])]
    assert second["total_eligible"] == 40
    # a query sharing one term reads only the term not held
    seen: list[tuple[str, list]] = []

    def capture(execute, sql, params, many, context):
        seen.append((sql, list(params or ())))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        third = _recall(admin, "tea garden")
    (params,) = [params for sql, params in seen if TERM_TABLE in sql]
    assert "garden" in params and "tea" not in params
    assert _ranked(third) == _oracle("tea garden")[: len(third["results"])]


def test_every_write_to_the_subject_is_seen_by_the_next_recall(make_record, admin):
    """A record created, revised or deleted moves the subject's revision in its transaction:
    the next recall reads the postings again and ranks (and counts) the subject as it is."""
    for i in range(12):
        make_record(f"river stone {i}", record_id=f"rec_{i:02d}", shared=True)
    assert _recall(admin, "river")["total_eligible"] == 12
    made = _create(admin, "river river river by the mill")
    after_create = _recall(admin, "river")
    assert after_create["total_eligible"] == 13
    assert _ranked(after_create)[0][0] == made
    assert _ranked(after_create) == _oracle("river")[: len(after_create["results"])]
    call(
        admin.principal,
        "memory.records.update",
        {"space_id": "s1", "record_id": made, "expected_revision": 1,
         "content": {"text": "a mill pond"}},
    )  # fmt: skip
    after_update = _recall(admin, "river")
    assert after_update["total_eligible"] == 12
    assert made not in {r for r, _ in _ranked(after_update)}
    assert _recall(admin, "mill")["total_eligible"] == 1
    call(
        admin.principal,
        "memory.records.delete",
        {"space_id": "s1", "record_id": "rec_00", "expected_revision": 1},
    )
    after_delete = _recall(admin, "river")
    assert after_delete["total_eligible"] == 11
    assert "rec_00" not in {r for r, _ in _ranked(after_delete)}
    assert _ranked(after_delete) == _oracle("river")[: len(after_delete["results"])]


def test_a_narrower_caller_neither_reads_nor_fills_the_cache(make_record, admin, grant_to):
    """Only a caller who may read every live record of the subject is served from the cache:
    a grant to one context ranks and counts only what it covers, every time, whatever the
    whole subject's postings held."""
    for i in range(6):
        make_record(f"tea cup {i}", record_id=f"rec_a{i}", context_id="c1")
    for i in range(4):
        make_record(f"tea pot {i}", record_id=f"rec_b{i}", context_id="c2")
    reader, _ = grant_to(capabilities=["recall"], context_ids=["c1"])
    assert _recall(admin, "tea")["total_eligible"] == 10  # the whole subject's, now held
    for _ in range(2):
        with CaptureQueriesContext(connection) as narrow:
            answer = _recall(reader, "tea")
        assert _postings_reads(narrow) == 1
        assert answer["total_eligible"] == 6
        assert {r for r, _ in _ranked(answer)} <= {f"rec_a{i}" for i in range(6)}
        assert _ranked(answer) == _oracle("tea", ["c1"])[: len(answer["results"])]


def test_the_cache_holds_no_more_than_its_bound_and_none_at_zero(make_record, admin, settings):
    subject = ("db", 1)
    settings.SPOKE_MEMORY_POSTINGS_CACHE_MB = 1
    limit = 1_048_576
    posting = b"\0" * lexical_store.POSTING_BYTES
    block = posting * 10_000  # 240,000 bytes: four fit in the bound, five do not
    lexical_store.keep_postings(subject, 5, {"a": block, "b": block, "c": block})
    assert set(lexical_store.cached_postings(subject, 5, ["a", "b", "c"])) == {"a", "b", "c"}
    lexical_store.cached_postings(subject, 5, ["a"])  # "a" used last: "b" is the oldest
    lexical_store.keep_postings(subject, 5, {"d": block, "e": block})
    held = set(lexical_store.cached_postings(subject, 5, ["a", "b", "c", "d", "e"]))
    assert held == {"a", "c", "d", "e"} and lexical_store._size[0] == 4 * len(block) <= limit
    # more than a quarter of the bound is never held
    lexical_store.keep_postings(subject, 5, {"f": posting * (limit // 4 // 24 + 1)})
    assert lexical_store.cached_postings(subject, 5, ["f"]) == {}
    # another revision: nothing held answers, and everything of the subject is dropped
    assert lexical_store.cached_postings(subject, 6, ["a"]) == {}
    assert lexical_store._size[0] == 0 and subject not in lexical_store._revisions
    # a request at an older revision does not fill in over a newer one
    lexical_store.keep_postings(subject, 7, {"a": posting})
    lexical_store.keep_postings(subject, 6, {"b": posting})
    assert lexical_store.cached_postings(subject, 7, ["a", "b"]) == {"a": posting}

    lexical_store.clear_cache()
    settings.SPOKE_MEMORY_POSTINGS_CACHE_MB = 0
    make_record("tea garden", record_id="rec_1")
    for _ in range(2):
        with CaptureQueriesContext(connection) as each:
            assert _recall(admin, "tea")["total_eligible"] == 1
        assert _postings_reads(each) == 1
    assert lexical_store._size[0] == 0
