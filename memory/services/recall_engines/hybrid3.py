"""hybrid/3 (docs/recall-quality.md): hybrid/2's engine/2 head and a deeper cosine side of the
configured embedding model, fused by min-max normalised scores and a weighted sum (CombSUM,
memory.engine.hybrid3) instead of by ranks. Same derived copies as hybrid/2 (term rows, vectors):
switching between the two needs no re-indexing."""

from __future__ import annotations

from memory.engine import hybrid3, lexicon, rank
from memory.services import hybrid_store, term_store
from memory.services.recall_engines.base import Engine, Ranking, RecallQuery
from memory.services.recall_engines.engine2 import lexical_head
from memory.services.recall_engines.registry import register


def hybrid3_ranking(q: RecallQuery) -> Ranking:
    terms = lexicon.query_terms(q.text)
    if not terms:
        return lexical_head(q, q.max_records)
    depth = max(q.max_records, hybrid3.LEXICAL_TOP_N)
    head = lexical_head(q, depth)
    fused, added, extra = hybrid_store.fused_head(
        q.subject,
        q.text,
        [(r.record_id, r.score) for r in head.ranked[:depth]],
        terms,
        q.eligible,
        q.flt,
        top_n=hybrid3.SEMANTIC_TOP_N,
        min_cosine=hybrid3.MIN_COSINE,
        fuse=hybrid3.fuse3,
    )
    head.pks.update(added)
    return Ranking(
        [rank.Ranked(record_id, score) for record_id, score in fused],
        head.pks,
        head.total + extra,
    )


ENGINE = register(
    Engine(
        version="hybrid/3",
        rank=hybrid3_ranking,
        summary=(
            "engine/2's head and a cosine ranking over sentence embeddings, fused by min-max "
            "normalised scores and a weighted sum (CombSUM)"
        ),
        copies=(term_store.TERMS, hybrid_store.VECTORS),
        needs=hybrid_store.needs,
        describe=hybrid_store.describe,
        embedder=True,
    )
)
