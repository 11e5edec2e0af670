"""hybrid/6 (docs/recall.md#scores, docs/recall-quality.md), the default with the semantic extra:
hybrid/4's ranking unchanged (the engine/2 head and the cosine side over the bundled model's
**int8 ONNX form**, `all-MiniLM-L6-v2-int8`, fused by memory.engine.hybrid3), its first
memory.engine.hybrid6.POOL results (max_records if more) scored by hybrid/6's logistic model, so
`score` is a calibrated, probability-like value on one absolute scale, never rising down the list;
each result's record says in `extensions["spoke-recall-match"]` which signals matched it. Reads
nothing hybrid/4 did not: the features are the two sides' scores."""

from __future__ import annotations

from memory.embedding import embed
from memory.engine import hybrid3, hybrid6, rank
from memory.engine.hybrid import Ranking as Scores
from memory.recall_contract import Ranking, RecallQuery
from memory.services.recall_engines.fused import fused_ranking, register_embedder


def ranking(q: RecallQuery) -> Ranking:
    """hybrid/4's ranking (memory.services.recall_engines.fused), its pool scored by fuse6."""
    read: list[hybrid3.Heads] = []

    def fuse(lexical: Scores, semantic: Scores) -> list[tuple[str, float]]:
        fused, heads = hybrid3.fuse3_heads(lexical, semantic)
        read.append(heads)  # the sides as fuse3 read them: fuse6 scores from these
        return fused

    out = fused_ranking(
        q,
        lexical_top_n=hybrid6.LEXICAL_TOP_N,
        semantic_top_n=hybrid6.SEMANTIC_TOP_N,
        min_cosine=hybrid6.MIN_COSINE,
        fuse=fuse,
    )
    if not read:  # an empty query: engine/2's newest first
        return out
    pool = [(r.record_id, r.score) for r in out.ranked[: max(hybrid6.POOL, q.max_records)]]
    out.ranked = list[rank.Ranked](hybrid6.fuse6_heads(read[0], pool))
    return out


ENGINE = register_embedder(
    "hybrid/6",
    ranking,
    "engine/2's head and a cosine ranking over the int8 ONNX form of the bundled sentence model, "
    "fused as hybrid/4 (min-max normalised scores, a weighted sum), each result scored by a "
    "logistic model fitted on LoCoMo dev conversations 1-3: one absolute scale for every query",
    embed_model=embed.INT8_NAME,
)
