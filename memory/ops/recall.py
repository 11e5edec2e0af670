"""memory.recall (docs/protocol.md#ops, #engine-policy): coverage → filters → engine → rerank →
budget.

Eligible = read coverage through `recall` ∩ selection ∩ provenance filter ∩ cognition filter ∩
kinds ∩ the engine's match, tombstones excluded; an archived subject recalls nothing. The
configured engine (memory.recall_contract.current(): engine/2 or hybrid/6, each its own module
in memory.services.recall_engines) ranks the authorized, filtered set; its retrieval reads are in
memory.selectors. An optional reranker (memory.services.rerank) re-scores the engine's pool before
the budget (memory.engine.rank.budget) takes the longest prefix that fits.

The walk (docs/architecture.md "A recall's walk"): the request goes down through each room once
and comes back up once, never back to an earlier one:

    dispatch/views  OpView.run: the gates, admission                        ▼ request
    ops/recall      the op calls each room in turn:
      1 coverage    access: coverage_for, access_subject (one query)
      2 filters     selectors.selection: read_filter, whole_subject,
                    records_queryset (lazy: built only if the engine asks)
      3 engine      recall_contract.current().rank(RecallQuery)
                    → services/recall_engines/<engine>.py
                        reads   selectors.recall, selectors.lexical
                        stores  hybrid_store (hybrid/6's vectors: the front of
                                services/vectors: queue, store, cache, ranking)
                        model   embedding.embed (the query's vector)
                        policy  engine.lexical, engine.hybrid3, engine.rank
                    ← Ranking(ranked, pks, total)
      4 rerank      services.rerank (optional: the pool re-scored)
      5 budget      selectors.recall.live_records (the ranked rows, live)
                    engine.rank.budget (the longest prefix that fits)
    dispatch/views  the answer (results, total_eligible, truncation)        ▲ response

The stores an engine builds on never import it (the layers above)."""

from __future__ import annotations

from django.conf import settings

from memory import recall_contract
from memory.access import access_subject, coverage_for
from memory.context import OpContext
from memory.engine import hybrid6, rank
from memory.models import Subject
from memory.ops.signatures import op
from memory.recall_contract import RecallQuery
from memory.selectors import recall as reads
from memory.selectors.selection import read_filter, records_queryset, whole_subject
from memory.services import rerank
from memory.wire import types as t
from memory.wire.canonical import content_bytes

RECALL = ["recall"]


def _answer(
    results: list[t.RecallResultResultsItem], total: int, cut: rank.Budgeted | None
) -> t.RecallResponse:
    truncation: t.RecallResultTruncation = {"truncated": False, "reason": None, "omitted_count": 0}
    if cut is not None:
        truncation = {
            "truncated": cut.truncated,
            "reason": cut.reason,
            "omitted_count": cut.omitted_count,
        }
    return {
        "recall": {
            "results": results,
            "total_eligible": total,
            "truncation": truncation,
            "engine_policy_version": settings.SPOKE_MEMORY_ENGINE,
        }
    }


def _matched(record: t.RetainedRecord, ranked: rank.Ranked) -> t.RetainedRecord:
    """A hybrid/6 result's record with the signals that matched it in its
    `extensions["spoke-recall-match"]` (docs/recall.md#scores; the answer's copy only)."""
    match = getattr(ranked, "match", None)
    if match:
        record["extensions"] = {**record["extensions"], hybrid6.MATCH_KEY: match}
    return record


@op("memory.recall")
def recall(ctx: OpContext, req: t.RecallRequest) -> t.RecallResponse:
    # Coverage: one query reads the grants, their space and the subject (as subjects.get does).
    cov = coverage_for(req["space_id"], ctx.principal, ctx.at, subject_id=req["subject_id"])
    subject = access_subject(cov, req["subject_id"])
    cov.require("recall", subject.subject_id)
    # Filters.
    flt = read_filter(req)
    limits = settings.SPOKE_MEMORY_LIMITS
    budget = req.get("budget", {})
    default_records = min(rank.DEFAULT_MAX_RECORDS, limits["max_recall_records"])
    # int(): the schema's "integer" admits an integral 2.0 (JSON has one number type).
    max_records = int(budget.get("max_records", default_records))
    max_bytes = int(budget.get("max_bytes", limits["max_recall_bytes"]))
    if subject.state == Subject.ARCHIVED:
        return _answer([], 0, None)
    # The engine ranks the rerank pool when a reranker is configured (else max_records).
    depth = rerank.pool(max_records, req["query"]["text"])
    query = RecallQuery(
        subject=subject,
        text=req["query"]["text"],
        # built only if the engine asks (a whole-subject caller's ranking needs no eligible set)
        scope=lambda: records_queryset(cov, RECALL, flt, subject),
        whole=whole_subject(cov, RECALL, flt, subject),
        flt=flt,
        max_records=depth,
    )
    # Engine.
    ranking = recall_contract.current().rank(query)
    # Budget.
    # The ranked rows, read live: a record tombstoned (records.delete) or removed (an import's
    # activation replacing the space) by a request that committed after the ranking's statement
    # is left out and no longer counted, never answered as a tombstone or a 500.
    ranked = ranking.ranked[:depth]
    rows = reads.live_records(cov.space_id, [ranking.pks[r.record_id] for r in ranked])
    head = [r for r in ranked if ranking.pks[r.record_id] in rows]
    records = [rows[ranking.pks[r.record_id]] for r in head]
    total = ranking.total - (len(ranked) - len(head))
    # Rerank (docs/recall.md#reranking): the pool re-scored before the cut; as it was on failure.
    head, records = rerank.reorder(req["query"]["text"], head, records)
    head, records = head[:max_records], records[:max_records]
    cut = rank.budget([content_bytes(r.content) for r in records], total, max_records, max_bytes)
    results: list[t.RecallResultResultsItem] = [
        {"record": _matched(rec.to_wire(subject.subject_id), r), "score": r.score, "rank": i + 1}
        for i, (rec, r) in enumerate(zip(records[: cut.taken], head, strict=False))
    ]
    return _answer(results, total, cut)
