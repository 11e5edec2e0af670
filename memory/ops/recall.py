"""memory.recall (SPEC §5, §7): authorized, ranked, budgeted.

Eligible = read coverage through `recall` ∩ selection ∩ provenance filter ∩ cognition filter ∩
kinds ∩ lexical match, tombstones excluded; an archived subject recalls nothing. The database
only narrows: on PostgreSQL the lexical match is a GIN-indexed `spoke_recall_lexemes(text) @@
tsquery` (the engine tokenizer in SQL, see migration `*_recall_lexemes`), elsewhere every
eligible record of the subject is read; the cognition filter is pushed down where it can be.
The engine (`memory.engine.rank`) then re-checks the lexical match on the text, ranks and
budgets, so every database gives the same answer for the same state."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, cast

from django.conf import settings
from django.db import connection
from django.db.models import BooleanField, QuerySet
from django.db.models.expressions import RawSQL

from memory.access import access_subject, coverage_for
from memory.context import OpContext
from memory.engine import hybrid2, lexical, lexicon, rank
from memory.models import Record, RecordTerm, Subject
from memory.ops.signatures import op
from memory.selectors import lexical as lexical_store
from memory.selectors.selection import (
    ReadFilter,
    matching,
    read_filter,
    records_queryset,
    whole_subject,
)
from memory.services import hybrid_store
from memory.wire import types as t
from memory.wire.canonical import content_bytes

RECALL = ["recall"]
GENERATION_2 = (lexical.VERSION, hybrid2.VERSION)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def lexical_q(terms: list[str]) -> RawSQL:
    """PostgreSQL: records whose text holds any of the terms, through the GIN index."""
    table = connection.ops.quote_name(Record._meta.db_table)
    # The tsquery is a bound parameter; only quoted identifiers are formatted in.
    return RawSQL(  # noqa: S611
        f"spoke_recall_lexemes({table}.{connection.ops.quote_name('text')}) @@ %s::tsquery",
        [rank.tsquery_text(terms)],
        output_field=BooleanField(),
    )


def _ms(value: datetime) -> int:
    return (value - EPOCH) // timedelta(milliseconds=1)


def _docs(qs: QuerySet, flt: ReadFilter, with_text: bool) -> dict[int, rank.Doc]:
    """The eligible rows as engine documents, keyed by pk. With a cognition filter the content is
    read too, and the engine's matcher decides."""
    if flt.cognition is None and with_text:
        rows = qs.values_list("pk", "record_id", "created_at", "text")
        return {pk: rank.Doc(rid, _ms(at), text) for pk, rid, at, text in rows}
    if flt.cognition is None:
        rows = qs.values_list("pk", "record_id", "created_at")
        return {pk: rank.Doc(rid, _ms(at), "") for pk, rid, at in rows}
    records = matching(qs.only("record_id", "created_at", "text", "content"), flt)
    return {
        r.pk: rank.Doc(r.record_id, _ms(r.created_at), r.text if with_text else "") for r in records
    }


def _newest_head(
    qs: QuerySet, flt: ReadFilter, max_records: int
) -> tuple[dict[int, rank.Doc], int]:
    """Empty query without a cognition filter: the count and just enough of the newest rows
    (every row tied with the last one of the head, so the tie-break by record_id is the
    engine's, not the database collation's)."""
    total = qs.count()
    boundary = list(
        qs.order_by("-created_at").values_list("created_at", flat=True)[
            max_records - 1 : max_records
        ]
    )
    head = qs.filter(created_at__gte=boundary[0]) if boundary else qs
    return _docs(head, flt, with_text=False), total


def _answer(results: list[dict], total: int, cut: rank.Budgeted | None) -> t.RecallResponse:
    truncation: dict[str, Any] = {"truncated": False, "reason": None, "omitted_count": 0}
    if cut is not None:
        truncation = {
            "truncated": cut.truncated,
            "reason": cut.reason,
            "omitted_count": cut.omitted_count,
        }
    answer = {
        "recall": {
            "results": results,
            "total_eligible": total,
            "truncation": truncation,
            "engine_policy_version": settings.SPOKE_MEMORY_ENGINE,
        }
    }
    return cast(t.RecallResponse, answer)


def _rank_generation_1(
    subject: Subject, query: str, eligible: QuerySet, flt: ReadFilter, max_records: int
) -> tuple[list[rank.Ranked], dict[str, int], int]:
    """engine/1 and hybrid/1, unchanged: the database narrows, the engine ranks every match."""
    qs = eligible
    terms = rank.query_terms(query)
    total: int | None
    if not terms and flt.cognition is None:
        docs, total = _newest_head(qs, flt, max_records)
    else:
        if terms and connection.vendor == "postgresql":
            qs = qs.filter(lexical_q(terms))
        docs = _docs(qs, flt, with_text=bool(terms))
        total = None
    ranked = rank.rank(list(docs.values()), query)
    by_id = {d.record_id: pk for pk, d in docs.items()}
    if terms and hybrid_store.enabled():
        # hybrid/1 (docs/recall-quality.md): the lexical ranking fused with cosine similarity
        # over the eligible set, so records with no word of the query can be recalled too.
        fused, added = hybrid_store.fused_ranking(
            subject, query, [(r.record_id, r.score) for r in ranked], eligible, flt
        )
        ranked = [rank.Ranked(record_id, score) for record_id, score in fused]
        by_id.update(added)
    return ranked, by_id, len(ranked) if total is None else total


def _rank_generation_2(
    policy: str,
    subject: Subject,
    query: str,
    eligible: QuerySet,
    whole: bool,
    flt: ReadFilter,
    max_records: int,
) -> tuple[list[rank.Ranked], dict[str, int], int]:
    """engine/2 and hybrid/2: the head of the BM25 ranking computed in SQL from stored term
    rows (memory.selectors.lexical); with a cognition filter (which only Python can decide
    exactly) the candidates are read and ranked by the policy function itself. `whole`: the
    eligible set is every live record of the subject (`selection.whole_subject`)."""
    terms = lexicon.query_terms(query)
    if not terms:
        # An empty (or stop-words-only) query: newest first, as engine/1.
        if flt.cognition is None:
            docs, total = _newest_head(eligible, flt, max_records)
        else:
            docs = _docs(eligible, flt, with_text=False)
            total = len(docs)
        ranked = rank.rank(list(docs.values()), "")
        return ranked, {d.record_id: pk for pk, d in docs.items()}, total
    depth = max(max_records, hybrid2.LEXICAL_TOP_N) if policy == hybrid2.VERSION else max_records
    if flt.cognition is None:
        top = lexical_store.head(subject.pk, terms, None if whole else eligible, depth)
        ranked, by_id, total = top.ranked, dict(top.pks), top.total
    else:
        held = RecordTerm.objects.filter(subject=subject, term__in=terms).values("record_id")
        docs = _docs(eligible.filter(pk__in=held), flt, with_text=True)
        ranked = lexical.rank(list(docs.values()), query)
        by_id = {d.record_id: pk for pk, d in docs.items()}
        total = len(ranked)
    if policy == hybrid2.VERSION:
        fused, added, extra = hybrid_store.fused_ranking_2(
            subject, query, [(r.record_id, r.score) for r in ranked[:depth]], terms, eligible, flt
        )
        ranked = [rank.Ranked(record_id, score) for record_id, score in fused]
        by_id.update(added)
        total += extra
    return ranked, by_id, total


@op("memory.recall")
def recall(ctx: OpContext, req: t.RecallRequest) -> t.RecallResponse:
    # One query: the grants, their space and the subject (as subjects.get reads them).
    cov = coverage_for(req["space_id"], ctx.principal, ctx.at, subject_id=req["subject_id"])
    subject = access_subject(cov, req["subject_id"])
    cov.require("recall", subject.subject_id)
    flt = read_filter(req)
    limits = settings.SPOKE_MEMORY_LIMITS
    budget = req.get("budget", {})
    default_records = min(rank.DEFAULT_MAX_RECORDS, limits["max_recall_records"])
    # int(): the schema's "integer" admits an integral 2.0 (JSON has one number type).
    max_records = int(budget.get("max_records", default_records))
    max_bytes = int(budget.get("max_bytes", limits["max_recall_bytes"]))
    if subject.state == Subject.ARCHIVED:
        return _answer([], 0, None)

    eligible = records_queryset(cov, RECALL, flt, subject)
    query = req["query"]["text"]
    policy = settings.SPOKE_MEMORY_ENGINE
    if policy in GENERATION_2:
        whole = whole_subject(cov, RECALL, flt, subject)
        ranked, by_id, total = _rank_generation_2(
            policy, subject, query, eligible, whole, flt, max_records
        )
    else:
        ranked, by_id, total = _rank_generation_1(subject, query, eligible, flt, max_records)
    head = ranked[:max_records]
    rows = Record.objects.in_bulk([by_id[r.record_id] for r in head])
    records = [rows[by_id[r.record_id]] for r in head]
    cut = rank.budget([content_bytes(r.content) for r in records], total, max_records, max_bytes)
    results = [
        {"record": rec.to_wire(subject.subject_id), "score": r.score, "rank": i + 1}
        for i, (rec, r) in enumerate(zip(records[: cut.taken], head, strict=False))
    ]
    return _answer(results, total, cut)
