"""engine/2 in the database (memory.selectors.lexical over RecordTerm rows) equals the policy
written the plain way (memory.engine.lexical.rank), on SQLite and PostgreSQL alike; the term rows
follow every write that changes text; recall reads only the rows it returns."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.engine import lexical, lexicon
from memory.engine.rank import Doc
from memory.models import Record, RecordTerm, Subject
from memory.ops.base import call
from memory.selectors import lexical as lexical_store
from memory.services import record_store, term_store
from tests.memory.recall.conftest import T0

pytestmark = pytest.mark.django_db

# Small vocabulary: many shared terms, stop words, stems that meet (run/running/runs), CJK,
# an emoji, so corpora have ties, repeated terms and empty-after-stop-words texts.
WORDS = [
    "run",
    "running",
    "runs",
    "tea",
    "teas",
    "coffee",
    "the",
    "is",
    "what",
    "Über",
    "über",
    "東京",
    "京",
    "🎉",
    "garden",
    "gardening",
    "blue",
    "x",
]


@pytest.fixture
def engine2(settings):
    settings.SPOKE_MEMORY_ENGINE = "engine/2"


def _terms(record: Record) -> list[tuple[str, int, int]]:
    return sorted(RecordTerm.objects.filter(record=record).values_list("term", "tf", "length"))


def _expected_terms(text: str) -> list[tuple[str, int, int]]:
    toks = lexicon.tokens(text)
    return sorted((t, toks.count(t), len(toks)) for t in set(toks))


def _recall(admin, query: str, subject_id: str = "u1", **extra) -> dict:
    return call(
        admin.principal,
        "memory.recall",
        {"space_id": "s1", "subject_id": subject_id, "query": {"text": query}, **extra},
    )["recall"]


def _oracle(subject_id: str, query: str, context_ids=None) -> list[tuple[str, float]]:
    subject = Subject.objects.get(space_id="s1", subject_id=subject_id)
    records = Record.objects.filter(space_id="s1", subject=subject, deleted_at__isnull=True)
    if context_ids is not None:
        records = records.filter(placement_context_id__in=context_ids)
    docs = [Doc(r.record_id, term_store.epoch_ms(r.created_at), r.text) for r in records]
    return [(r.record_id, r.score) for r in lexical.rank(docs, query)]


def _create(api, admin, text: str) -> str:
    made = api(
        admin,
        "memory.records.create",
        {
            "space_id": "s1",
            "subject_id": "u1",
            "kind": "note",
            "content": {"text": text},
            "placement": {"scope": "context", "context_id": "c1"},
        },
    )
    assert made.status == 200, made.body
    return made.receipt["refs"][0]["id"]


def test_term_rows_follow_create_update_and_delete(engine2, api, admin, ensure_subject):
    ensure_subject("u1")
    rid = _create(api, admin, "Running with the runners, running far")
    record = Record.objects.get(record_id=rid)
    assert _terms(record) == _expected_terms(record.text) != []
    api(
        admin,
        "memory.records.update",
        {"space_id": "s1", "record_id": rid, "expected_revision": 1, "content": {"text": "tea"}},
    )
    assert _terms(record) == [("tea", 1, 1)]
    answer = api(
        admin,
        "memory.records.delete",
        {"space_id": "s1", "record_id": rid, "expected_revision": 2},
    )
    assert answer.status == 200, answer.body
    assert not RecordTerm.objects.filter(record=record).exists()
    assert _recall(admin, "tea")["total_eligible"] == 0


def test_a_refused_update_leaves_the_term_rows(engine2, api, admin, ensure_subject):
    ensure_subject("u1")
    rid = _create(api, admin, "blue garden")
    before = _terms(Record.objects.get(record_id=rid))
    answer = api(
        admin,
        "memory.records.update",
        {"space_id": "s1", "record_id": rid, "expected_revision": 7, "content": {"text": "tea"}},
    )
    assert answer.status == 409
    assert _terms(Record.objects.get(record_id=rid)) == before


def test_recall_ranks_by_stems_and_ignores_stop_words(engine2, make_record, admin):
    make_record("I went running in the garden", record_id="rec_a")
    make_record("the the the what is it", record_id="rec_b")
    make_record("Gardens and tea", record_id="rec_c")
    answer = _recall(admin, "what about the runs?")
    assert [r["record"]["record_id"] for r in answer["results"]] == ["rec_a"]
    assert answer["engine_policy_version"] == "engine/2"
    assert answer["total_eligible"] == 1
    # a stop-words-only query is an empty query: newest first, every eligible record
    newest = _recall(admin, "what is the")
    assert [r["record"]["record_id"] for r in newest["results"]] == ["rec_c", "rec_b", "rec_a"]


def test_total_eligible_is_exact_beyond_the_head_and_respects_coverage(
    engine2, make_record, admin, api, space
):
    for i in range(30):
        make_record(f"tea number {i}", record_id=f"rec_{i:02d}", context_id="c1")
    for i in range(5):
        make_record(f"tea elsewhere {i}", record_id=f"rec_o{i}", context_id="c2")
    answer = _recall(admin, "tea", budget={"max_records": 3})
    assert answer["total_eligible"] == 35
    assert answer["truncation"] == {"truncated": True, "reason": "max_records", "omitted_count": 32}
    only_c1 = _recall(
        admin, "tea", selection={"mode": "contexts", "context_ids": ["c1"]}, budget={}
    )
    assert only_c1["total_eligible"] == 30
    assert not any(r["record"]["record_id"].startswith("rec_o") for r in only_c1["results"])


def test_recall_fetches_only_the_rows_it_returns(engine2, make_record, admin):
    for i in range(200):
        make_record(f"garden tea {i} " + "blue " * (i % 7), record_id=f"rec_{i:03d}")
    with CaptureQueriesContext(connection) as small:
        _recall(admin, "blue garden", budget={"max_records": 2})
    lexical_store.clear_cache()  # both read the postings (PostgreSQL keeps them by revision)
    with CaptureQueriesContext(connection) as large:
        answer = _recall(admin, "blue garden", budget={"max_records": 2})
    assert answer["total_eligible"] == 200 and len(answer["results"]) == 2
    assert len(small.captured_queries) == len(large.captured_queries)
    # the only statement that reads record content is the final fetch of the returned rows
    content_reads = [
        q["sql"]
        for q in large.captured_queries
        if '"content"' in q["sql"] and "memory_record" in q["sql"]
    ]
    assert len(content_reads) == 1
    assert content_reads[0].count("%s") <= 2 or "IN (" in content_reads[0]
    assert _oracle("u1", "blue garden")[:2] == [
        (r["record"]["record_id"], r["score"]) for r in answer["results"]
    ]


TEXTS = st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    corpus=st.lists(
        st.tuples(TEXTS, st.integers(0, 5), st.sampled_from(["c1", "c2"])), min_size=1, max_size=14
    ),
    edits=st.lists(
        st.tuples(st.integers(0, 13), st.one_of(st.none(), TEXTS)), min_size=0, max_size=5
    ),
    queries=st.lists(st.tuples(TEXTS, st.booleans()), min_size=1, max_size=3),
    max_records=st.integers(1, 6),
)
def test_the_database_ranking_is_the_oracle(
    engine2, admin, ensure_subject, corpus, edits, queries, max_records
):
    """Random corpora, random updates and deletes, random queries: the answer (ids, scores,
    order, total_eligible) is the one the plain policy function gives — over the whole subject
    (the term index alone) and over one context of two (the eligibility join)."""
    subject_id = f"h{Record.objects.count()}-{len(corpus)}-{RecordTerm.objects.count()}"
    ensure_subject(subject_id)
    from memory.models import Space, Subject

    space = Space.objects.get(pk="s1")
    subject = Subject.objects.get(space=space, subject_id=subject_id)
    records = []
    for i, (text, days, context_id) in enumerate(corpus):
        [record] = record_store.create_records(
            space,
            subject,
            [("note", {"text": text})],
            record_store.Placement("context", context_id),
            record_store.Provenance(source="authored", author_principal_id=admin.id),
            T0 + timedelta(days=days),
        )
        records.append(record)
    for index, text in edits:
        record = records[index % len(records)]
        record.refresh_from_db()
        if record.deleted_at is not None:
            continue
        if text is None:
            record_store.erase_record(record, admin.id, None, T0)
        else:
            record_store.update_record(record, T0, content={"text": text})
    for query, only_c1 in queries:
        selection = {"mode": "contexts", "context_ids": ["c1"]} if only_c1 else {"mode": "all"}
        answer = _recall(
            admin,
            query,
            subject_id=subject_id,
            budget={"max_records": max_records},
            selection=selection,
        )
        expected = _oracle(subject_id, query, ["c1"] if only_c1 else None)
        assert answer["total_eligible"] == len(expected)
        got = [(r["record"]["record_id"], r["score"]) for r in answer["results"]]
        assert got == expected[:max_records]


def test_deleting_a_record_leaves_no_trace_of_its_words_in_term_rows(
    engine2, api, admin, ensure_subject
):
    """Erasure covers the term rows: no row of the deleted record, and none of its terms left
    in the table (the other record shares none of them)."""
    ensure_subject("u1")
    rids = [_create(api, admin, text) for text in ("Zanzibarian quokkas diagnosis", "plain tea")]
    secret_terms = set(lexicon.tokens("Zanzibarian quokkas diagnosis"))
    assert secret_terms <= set(RecordTerm.objects.values_list("term", flat=True))
    answer = api(
        admin,
        "memory.records.delete",
        {"space_id": "s1", "record_id": rids[0], "expected_revision": 1},
    )
    assert answer.status == 200, answer.body
    left = set(RecordTerm.objects.values_list("term", flat=True))
    assert not (secret_terms & left) and left == {"plain", "tea"}


def test_clearing_a_space_for_an_import_erases_its_term_rows(engine2, make_record, space):
    from memory.services.transfer_load import clear_space

    for i in range(3):
        make_record(f"garden {i}")  # its term rows with it
    assert RecordTerm.objects.exists()
    clear_space(space)
    assert not RecordTerm.objects.exists()


def test_odd_texts_are_stored_and_found(engine2, make_record, admin):
    """Non-English and odd Unicode: stored as terms, found by the same words."""
    texts = {
        "rec_ja": "東京に行きました",
        "rec_hi": "नमस्ते दुनिया",
        "rec_emoji": "🎉🎉",
        "rec_wide": "ＦＵＬＬ width",
        "rec_zw": "zero\u200bwidth\u200djoin",
    }
    for rid, text in texts.items():
        make_record(text, record_id=rid)
    for query, expected in (
        ("東京", "rec_ja"),
        ("दुनिया", "rec_hi"),
        ("🎉", "rec_emoji"),
        ("full", "rec_wide"),
        ("WIDTH", "rec_wide"),
    ):
        got = [r["record"]["record_id"] for r in _recall(admin, query)["results"]]
        assert got[0] == expected, (query, got)


def test_the_default_engine_is_hybrid_6_with_the_semantic_extra_and_engine_2_without(
    monkeypatch,
):
    from memory.embedding import embed, embed_onnx

    monkeypatch.setattr(embed, "installed", lambda: True)
    monkeypatch.setattr(embed_onnx, "installed", lambda: True)
    assert embed.default_engine() == "hybrid/6"
    # torch but no ONNX Runtime (an install made before the extra gained it): lexical, as the
    # torch-form engines that served it are retired
    monkeypatch.setattr(embed_onnx, "installed", lambda: False)
    assert embed.default_engine() == "engine/2"
    monkeypatch.setattr(embed, "installed", lambda: False)
    assert embed.default_engine() == "engine/2"


def test_describe_publishes_the_configured_engine(engine2, admin):
    described = call(admin.principal, "memory.describe", {})
    assert described["provider"]["engine_policy_version"] == "engine/2"


def _execute(sql: str) -> None:
    with connection.cursor() as cur:
        cur.execute(sql)


def test_the_migration_backfills_the_term_rows_of_existing_records(make_record):
    """Records stored before 0007_terms get the rows the writer would have written (and
    tombstones get none)."""
    import importlib

    from django.apps import apps

    made = [make_record("Running tea gardens"), make_record("東京 🎉 the"), make_record("gone")]
    make_record("erased", deleted=True)
    RecordTerm.objects.all().delete()
    migration = importlib.import_module("memory.migrations.0007_terms")
    # The backfill only needs the editor's connection (and, on PostgreSQL, execute for ANALYZE).
    editor = type("Editor", (), {"connection": connection, "execute": staticmethod(_execute)})()
    migration.backfill(apps, editor)
    got = sorted(RecordTerm.objects.values_list("record_id", "term", "tf", "length", "created_ms"))
    want = sorted(
        (r.record_id, r.term, r.tf, r.length, r.created_ms)
        for record in made
        for r in term_store.term_rows(record)
    )
    assert got == want and len(got) == 7


@pytest.mark.parametrize(
    "grant, visible",
    [
        ({"shared_access": True}, {"rec_c1", "rec_c2", "rec_sh"}),  # every context, shared
        ({"context_ids": ["c1"], "shared_access": True}, {"rec_c1", "rec_sh"}),
        ({}, {"rec_c1", "rec_c2"}),  # no shared access
    ],
)
def test_recall_through_a_narrower_grant_ranks_only_what_it_covers(
    engine2, make_record, grant_to, grant, visible
):
    """The term index alone is the candidate set only when the caller may read every live
    record of the subject; any narrower coverage ranks (and counts) what it covers."""
    make_record("tea garden", record_id="rec_c1", context_id="c1")
    make_record("tea tea", record_id="rec_c2", context_id="c2")
    make_record("tea blue", record_id="rec_sh", shared=True)
    reader, _ = grant_to(capabilities=["recall"], **grant)
    answer = _recall(reader, "tea")
    assert {r["record"]["record_id"] for r in answer["results"]} == visible
    assert answer["total_eligible"] == len(visible)
    docs = [
        Doc(r.record_id, term_store.epoch_ms(r.created_at), r.text)
        for r in Record.objects.filter(record_id__in=visible)
    ]
    assert [(r["record"]["record_id"], r["score"]) for r in answer["results"]] == [
        (r.record_id, r.score) for r in lexical.rank(docs, "tea")
    ]
