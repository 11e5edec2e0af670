"""The hybrid recall policy hybrid/2: the engine/2 lexical ranking fused with a cosine ranking
over the sentence embeddings the project already stores (memory.embedding.embed), by weighted
reciprocal rank fusion. Pure: no Django, no I/O; ties by record_id; scores rounded.

- Lexical side: the head of the engine/2 ranking, its first `LEXICAL_TOP_N` records (every
  lexical match is eligible; the ones below that depth get no fused score and rank after).
- Semantic side: the `SEMANTIC_TOP_N` eligible records nearest the query, cosine ≥ `MIN_COSINE`
  (hybrid/1's side, unchanged). A record without a vector is simply absent from it, so it ranks
  by its lexical rank alone.
- score(d) = LEXICAL_WEIGHT / (RRF_K + lexical rank) + SEMANTIC_WEIGHT / (RRF_K + semantic rank),
  each term present only when d is in that side's list.

The constants were chosen on 3 of the 5 LoCoMo dev conversations and checked on the other 2
(docs/recall-quality.md)."""

from __future__ import annotations

from memory.engine.hybrid import SCORE_DIGITS, Ranking, fuse

VERSION = "hybrid/2"
RRF_K = 2
LEXICAL_WEIGHT = 1.0
SEMANTIC_WEIGHT = 1.0
LEXICAL_TOP_N = 100
SEMANTIC_TOP_N = 50
MIN_COSINE = 0.2


def fuse2(lexical: Ranking, semantic: Ranking) -> list[tuple[str, float]]:
    """The fused ranking of the lexical head (at most LEXICAL_TOP_N used) and the semantic
    side, best first, ties by record_id."""
    head = sorted(lexical, key=lambda item: (-item[1], item[0]))[:LEXICAL_TOP_N]
    return fuse(head, semantic, k=RRF_K, weights=(LEXICAL_WEIGHT, SEMANTIC_WEIGHT))


def convex(lexical: Ranking, semantic: Ranking, alpha: float) -> list[tuple[str, float]]:
    """Convex combination: alpha × lexical score (engine/2's, in (0, 1]) + (1 − alpha) × cosine,
    a side's missing score counting 0. Best first, ties by record_id, rounded."""
    lex = dict(lexical)
    sem = dict(semantic)
    scored = [
        (rid, round(alpha * lex.get(rid, 0.0) + (1 - alpha) * sem.get(rid, 0.0), SCORE_DIGITS))
        for rid in lex.keys() | sem.keys()
    ]
    scored.sort(key=lambda item: (-item[1], item[0]))
    return scored
