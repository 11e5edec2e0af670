"""Recall's statements stay bounded on a database nobody analyzed (issue 49, part 2).

A never-analyzed PostgreSQL (autovacuum off, rows loaded in bulk by other means) plans from
guesses; the issue measured the vector load, run through a server-side cursor, planned as a
nested loop that scanned every vector of the subject once per record (20,000 × 20,000 rows,
35 s). Here some thousands of records (and their term rows and vectors) are loaded into two
subjects of tables whose statistics are made exactly those of a table never analyzed (or of one
analyzed while it was nearly empty, as a migration used to), a real hybrid/6 recall runs, and
every statement it runs is planned and executed by PostgreSQL as the product runs it —
server-side cursors included — with `auto_explain` handing each executed plan back
(`EXPLAIN (ANALYZE, FORMAT JSON)` of the very statement, with actual row counts). The plan shape
is asserted, never a time: no node reads more rows than a small multiple of the subject's
(a nested loop over the subject's rows reads their square), and no nested loop's inner side
reads more than a few rows per outer row, and no scan reads far more rows than it keeps (a key
the statement names, filtered row by row instead of looked up: the lexical head once read
every term row of the subject to keep the query terms' postings)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.db import connection

from memory.embedding import embed
from memory.models import (
    PendingEmbedding,
    Record,
    RecordEmbedding,
    RecordRevision,
    RecordTerm,
    Subject,
    VectorGeneration,
)
from memory.services import hybrid_store
from memory.services import transfer_load as load
from tests.conftest import requires_postgres
from tests.memory.hybrid.conftest import needs_semantic

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

N = 3000  # records per subject (two subjects)
T0 = datetime(2026, 1, 1, tzinfo=UTC)
WORDS = (
    "garden tea rain sister lisbon nurse dog park marathon shelter coffee blanket music "
    "piano doctor school train river mountain winter summer book friend holiday kitchen "
    "bread market city bicycle storm letter birthday camera painting"
).split()
QUERIES = ["Where does my sister live?", "dog park in the rain", "piano lessons in winter"]
TABLES = (Record, RecordRevision, RecordTerm, RecordEmbedding, PendingEmbedding, Subject)


def _object(subject_id: str, i: int, rnd: random.Random, author: str) -> dict:
    at = (T0 + timedelta(seconds=i)).isoformat().replace("+00:00", "Z")
    text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(5, 14))) + f" item{i}"
    return {
        "type": "record",
        "data": {
            "subject_id": subject_id,
            "record_id": f"rec_{subject_id}x{i:06d}",
            "kind": "note",
            "content": {"text": text},
            "placement": {"scope": "context", "context_id": "c1"},
            "provenance": {"source": "authored", "author_principal_id": author, "created_at": at},
            "revision": 1,
            "created_at": at,
            "updated_at": at,
            "tombstone": None,
            "extensions": {},
        },
    }


def _load_records(space, admin, ensure_subject) -> None:
    """N records per subject, their history and term rows, by the activation's loader (COPY)."""
    rnd = random.Random(49)  # noqa: S311 (test data)
    loader = load.Loader(space)
    for subject_id in ("u1", "u2"):
        ensure_subject(subject_id)
        loader.subjects[subject_id] = Subject.objects.get(space=space, subject_id=subject_id).pk
    for subject_id in ("u1", "u2"):
        loader.add([_object(subject_id, i, rnd, admin.principal.principal_id) for i in range(N)])
    loader.flush()


def _load(space, admin, ensure_subject) -> None:
    """Records, history, term rows by the activation's loader (COPY, no ANALYZE), and a unit
    vector of the configured model per record, as the drain leaves them."""
    _load_records(space, admin, ensure_subject)
    PendingEmbedding.objects.filter(space=space).delete()
    records = list(Record.objects.filter(space=space).only("pk", "space_id", "subject_id"))
    vectors = np.random.default_rng(49).standard_normal((len(records), embed.DIM)).astype("<f4")
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    key = hybrid_store.model_key()
    load.insert_rows(
        RecordEmbedding,
        ["space_id", "record_id", "subject_id", "revision", "model_id", "dim", "vector"],
        (
            (r.space_id, r.pk, r.subject_id, 1, key, embed.DIM, v.tobytes())
            for r, v in zip(records, vectors, strict=True)
        ),
    )
    hybrid_store.vectors_changed(records)


def _statistics(state: str) -> None:
    """The tables' planner statistics made those of `state`, inside the test's transaction
    (rolled back with it): "never" — never analyzed (reltuples -1, no column statistics), as
    after a bulk load by other means on a server with autovacuum off; "empty" — analyzed while
    (nearly) empty, as a migration left a table."""
    oids = [m._meta.db_table for m in (*TABLES, VectorGeneration)]
    with connection.cursor() as cur:
        cur.execute(
            "DELETE FROM pg_statistic WHERE starelid = ANY(CAST(%s AS regclass[]))"
            " OR starelid IN (SELECT indexrelid FROM pg_index"
            "  WHERE indrelid = ANY(CAST(%s AS regclass[])))",
            [oids, oids],
        )
        reltuples = -1 if state == "never" else 0
        cur.execute(
            "UPDATE pg_class SET reltuples = %s, relpages = 0, relallvisible = 0"
            " WHERE oid = ANY(CAST(%s AS regclass[]))"
            " OR oid IN (SELECT indexrelid FROM pg_index"
            "  WHERE indrelid = ANY(CAST(%s AS regclass[])))",
            [reltuples, oids, oids],
        )


class Plans:
    """Every statement's executed plan, handed back by auto_explain as a notice."""

    def __init__(self) -> None:
        self.plans: list[dict] = []

    def __call__(self, diag) -> None:
        text = diag.message_primary or ""
        if "plan:" in text:
            self.plans.append(json.loads(text.split("plan:", 1)[1]))

    def __enter__(self) -> Plans:
        connection.ensure_connection()
        with connection.cursor() as cur:
            cur.execute("LOAD 'auto_explain'")
            for name, value in (
                ("log_min_duration", "0"),
                ("log_analyze", "on"),
                ("log_timing", "off"),
                ("log_format", "json"),
                ("log_level", "notice"),
                ("log_nested_statements", "on"),
            ):
                cur.execute(f"SET auto_explain.{name} = '{value}'")
            cur.execute("SET client_min_messages = notice")
        connection.connection.add_notice_handler(self)
        return self

    def __exit__(self, *exc) -> None:
        connection.connection.remove_notice_handler(self)
        with connection.cursor() as cur:
            cur.execute("SET auto_explain.log_min_duration = -1")


def nodes(plan: dict):
    yield plan
    for child in plan.get("Plans", ()):
        yield from nodes(child)


def read(node: dict) -> float:
    """Rows a node produced and threw away, over all its loops."""
    loops = node.get("Actual Loops", 1) or 1
    per_loop = (
        node.get("Actual Rows", 0)
        + node.get("Rows Removed by Filter", 0) / loops
        + node.get("Rows Removed by Join Filter", 0) / loops
        + node.get("Rows Removed by Index Recheck", 0) / loops
    )
    return per_loop * loops


def unbounded(plan: dict, subject_rows: int) -> list[str]:
    """What in the plan is not bounded by a small multiple of the subject's rows."""
    bad = []
    for node in nodes(plan):
        removed = node.get("Rows Removed by Filter", 0)
        kept = node.get("Actual Rows", 0) * (node.get("Actual Loops", 1) or 1)
        if "Relation Name" in node and removed > 500 + 10 * kept:
            # a key the statement names, checked row by row instead of looked up
            bad.append(
                f"{node['Node Type']} of {node.get('Relation Name')} keeps "
                f"{node.get('Actual Rows')} rows and filters out {removed}"
            )
        if read(node) > 20 * subject_rows:
            bad.append(f"{node['Node Type']} reads {read(node):.0f} rows")
        if node["Node Type"] == "Nested Loop":
            inner = node["Plans"][1]
            per_outer = read(inner) / max(node["Plans"][0].get("Actual Rows", 0) or 1, 1)
            if node.get("Rows Removed by Join Filter", 0) > 2 * subject_rows or (
                per_outer > 50 and inner.get("Actual Loops", 1) > 50
            ):
                bad.append(
                    f"Nested Loop: {per_outer:.0f} inner rows per outer row over "
                    f"{inner.get('Actual Loops')} loops, "
                    f"{node.get('Rows Removed by Join Filter', 0)} removed by its join filter"
                )
    return bad


@pytest.fixture
def hybrid6(settings):
    settings.SPOKE_MEMORY_ENGINE = "hybrid/6"
    hybrid_store._cache.clear()
    yield
    hybrid_store._cache.clear()


@pytest.mark.single_node(
    reason="sets the tables' statistics in the coordinator's catalog and reads its executed plans"
    " (auto_explain); on Citus each worker plans its shard from the shard's own statistics"
)
@requires_postgres
@needs_semantic
@pytest.mark.parametrize("state", ["never", "empty"])
def test_recall_plans_stay_bounded_without_statistics(
    api, admin, space, ensure_subject, hybrid6, state
):
    if state == "empty":
        _statistics("empty")  # the tables planned as empty while the rows come in
    _load(space, admin, ensure_subject)
    _statistics(state)
    session = api.connect(admin)
    with Plans() as seen:
        for query in QUERIES:
            answer = api(
                admin,
                "memory.recall",
                {"space_id": "s1", "subject_id": "u1", "query": {"text": query}},
                session=session,
            )
            assert answer.status == 200, answer.body
            assert answer.body["recall"]["results"]
    texts = [p["Query Text"] for p in seen.plans]
    assert any("memory_recordembedding" in t for t in texts), texts  # the vector load ran
    assert any("memory_recordterm" in t for t in texts), texts  # the lexical head ran
    problems = {p["Query Text"][:160]: bad for p in seen.plans if (bad := unbounded(p["Plan"], N))}
    assert not problems, json.dumps(problems, indent=1)


@pytest.mark.single_node(
    reason="sets the tables' statistics in the coordinator's catalog and reads its executed plans"
    " (auto_explain); on Citus each worker plans its shard from the shard's own statistics"
)
@requires_postgres
def test_activation_load_plans_stay_bounded_without_statistics(api, admin, space, ensure_subject):
    # An import's load into tables nobody analyzed: each batch's set-wise key check (does every
    # record a batch's revisions and term rows name exist in the space?) was planned from
    # guesses, as a walk of the space's index filtering each of the space's records by id, once
    # per key: 1,000 × the records loaded so far per batch, quadratic in the import (issue 49's
    # 200,000-record run: 20 minutes for its first ~70,000 records). Each key is now looked up
    # on its own (memory.services.transfer_load.BatchKeys.check).
    _statistics("never")
    with load.checked_once(space) as checked, Plans() as seen:
        assert checked  # the key checks run set-wise (the suite's connection may bypass)
        _load_records(space, admin, ensure_subject)
    assert Record.objects.filter(space=space).count() == 2 * N
    checks = [p for p in seen.plans if p["Query Text"].startswith("SELECT 1 FROM unnest")]
    assert len(checks) >= 2 * N // load.BATCH, [p["Query Text"][:80] for p in seen.plans]
    problems = {
        p["Query Text"][:160]: bad for p in checks if (bad := unbounded(p["Plan"], load.BATCH))
    }
    assert not problems, json.dumps(problems, indent=1)
