"""The shape of the hybrid engines (hybrid/6, docs/recall.md): the head of the engine/2 ranking
(at least the policy's `LEXICAL_TOP_N` deep) fused by the policy's `fuse` with the cosine ranking
of the configured embedding model's vectors. `register_embedder` registers an engine that ranks
with the embedding model."""

from __future__ import annotations

from collections.abc import Callable, Collection

from memory.embedding import embed
from memory.engine import lexicon, rank
from memory.recall_contract import Engine, Ranking, RecallQuery, register
from memory.selectors import recall as reads
from memory.services import hybrid_store, term_store
from memory.services.recall_engines.engine2 import lexical_head, lexical_head_holding


def fused_ranking(
    q: RecallQuery,
    *,
    lexical_top_n: int,
    semantic_top_n: int,
    min_cosine: float,
    fuse: Callable[[list[tuple[str, float]], list[tuple[str, float]]], list[tuple[str, float]]],
) -> Ranking:
    """The engine/2 head (at least `lexical_top_n` deep) fused by `fuse` with the cosine side
    (hybrid/4's fusion); an empty query is engine/2's (newest first)."""
    terms = lexicon.query_terms(q.text)
    if not terms:
        return lexical_head(q, q.max_records)
    depth = max(q.max_records, lexical_top_n)
    # The cosine side first: the lexical head's statement then also says which of its records
    # hold a query term (for total_eligible), and the vectors' record ids spare it its look-up.
    vectors = hybrid_store.subject_vectors(q.subject)
    semantic, added = hybrid_store.semantic_side(
        vectors,
        q.subject,
        q.text,
        None if q.whole else q.eligible,
        q.flt,
        whole=q.whole,
        top_n=semantic_top_n,
        min_cosine=min_cosine,
    )
    head, holding = lexical_head_holding(
        q, depth, vectors.record_ids, [added[record_id] for record_id, _ in semantic]
    )

    def matched(pks: list[int]) -> Collection[int]:
        if holding is not None:
            return holding
        return reads.holding_any(q.subject.space_id, pks, terms)

    fused, extra = hybrid_store.fused_head(
        [(r.record_id, r.score) for r in head.ranked[:depth]], semantic, added, matched, fuse
    )
    head.pks.update(added)
    return Ranking(
        [rank.Ranked(record_id, score) for record_id, score in fused],
        head.pks,
        head.total + extra,
    )


def register_embedder(
    version: str,
    ranking: Callable[[RecallQuery], Ranking],
    summary: str,
    embed_model: str = embed.BUNDLED_NAME,
) -> Engine:
    """Register a hybrid engine: it keeps the term rows and the vectors of the configured
    embedding model (`embed_model` when none is configured), needs the semantic extra, and names
    that model in `memory.describe`."""
    return register(
        Engine(
            version=version,
            rank=ranking,
            summary=summary,
            copies=(term_store.TERMS, hybrid_store.VECTORS),
            needs=lambda: hybrid_store.needs(embed_model),
            describe=hybrid_store.describe,
            embedder=True,
            embed_model=embed_model,
        )
    )
