"""hybrid/1 (docs/recall-quality.md): engine/1's ranking fused by reciprocal rank fusion with the
cosine ranking of the configured embedding model's vectors (memory.engine.hybrid)."""

from __future__ import annotations

from collections.abc import Callable

from memory.engine import embed, rank
from memory.services import hybrid_store, term_store
from memory.services.recall_engines.base import Engine, Ranking, RecallQuery
from memory.services.recall_engines.engine1 import lexical_ranking
from memory.services.recall_engines.registry import register


def hybrid1_ranking(q: RecallQuery) -> Ranking:
    lexical = lexical_ranking(q)
    if not rank.query_terms(q.text):
        return lexical  # an empty query: newest first, nothing to embed
    fused, added = hybrid_store.fused_ranking(
        q.subject, q.text, [(r.record_id, r.score) for r in lexical.ranked], q.eligible, q.flt
    )
    ranked = [rank.Ranked(record_id, score) for record_id, score in fused]
    lexical.pks.update(added)
    return Ranking(ranked, lexical.pks, len(ranked))  # with terms, every match was ranked


def register_embedder(
    version: str,
    ranking: Callable[[RecallQuery], Ranking],
    summary: str,
    embed_model: str = embed.BUNDLED_NAME,
    lexeme_index: bool = False,
) -> Engine:
    """Register a hybrid engine (hybrid/1 … hybrid/4): it keeps the term rows and the vectors of
    the configured embedding model (`embed_model` when none is configured), needs the semantic
    extra, and names that model in `memory.describe`."""
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
            lexeme_index=lexeme_index,
        )
    )


ENGINE = register_embedder(
    "hybrid/1",
    hybrid1_ranking,
    "engine/1 fused with a cosine ranking over sentence embeddings (RRF k = 10)",
    lexeme_index=True,
)
