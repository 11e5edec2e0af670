"""hybrid/3 (docs/recall-quality.md): hybrid/2's engine/2 head and a deeper cosine side of the
configured embedding model, fused by min-max normalised scores and a weighted sum (CombSUM,
memory.engine.hybrid3) instead of by ranks. Same derived copies as hybrid/2 (term rows, vectors):
switching between the two needs no re-indexing."""

from __future__ import annotations

from memory.engine import hybrid3
from memory.services.recall_engines.base import Ranking, RecallQuery
from memory.services.recall_engines.hybrid1 import register_embedder
from memory.services.recall_engines.hybrid2 import fused_ranking


def hybrid3_ranking(q: RecallQuery) -> Ranking:
    return fused_ranking(
        q,
        lexical_top_n=hybrid3.LEXICAL_TOP_N,
        semantic_top_n=hybrid3.SEMANTIC_TOP_N,
        min_cosine=hybrid3.MIN_COSINE,
        fuse=hybrid3.fuse3,
    )


ENGINE = register_embedder(
    "hybrid/3",
    hybrid3_ranking,
    "engine/2's head and a cosine ranking over sentence embeddings, fused by min-max "
    "normalised scores and a weighted sum (CombSUM)",
)
