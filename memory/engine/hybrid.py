"""The hybrid recall policy (hybrid/1): reciprocal rank fusion (Cormack et al., SIGIR 2009) of the
lexical ranking of engine/1 and a cosine ranking over sentence embeddings.

Pure: no Django, no I/O. Inputs are rankings (record ids with scores) and vectors; outputs are
one fused ranking, deterministic, ties broken by record_id, scores rounded so that float noise
below the rounding never reorders or changes an answer.

Eligibility (docs/protocol.md#engine-policy says lexical match for engine/1): hybrid/1 widens it to lexical matches ∪
the `SEMANTIC_TOP_N` records nearest the query by cosine that reach `MIN_COSINE`, so a
paraphrase with no word in common with the query can still be recalled; the floor keeps a query
unrelated to everything from making everything eligible."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

VERSION = "hybrid/1"
# The RRF paper uses 60; on the LoCoMo dev set recall@10 plateaus for k in 2..10 (62-63 %) and falls
# off above (k=20: 60.4, k=60: 56.0), see docs/recall-quality.md. A small k trusts the top ranks.
RRF_K = 10
SEMANTIC_TOP_N = 50
MIN_COSINE = 0.2
SCORE_DIGITS = 6
LEXICAL_WEIGHT = 1.0
SEMANTIC_WEIGHT = 1.0

Ranking = Sequence[tuple[str, float]]


def _ordered(ranking: Ranking) -> list[str]:
    """Record ids best first: score descending, ties by record_id; duplicates keep their best."""
    seen: set[str] = set()
    out = []
    for record_id, _ in sorted(ranking, key=lambda item: (-item[1], item[0])):
        if record_id not in seen:
            seen.add(record_id)
            out.append(record_id)
    return out


def fuse(
    lexical: Ranking,
    semantic: Ranking,
    k: int = RRF_K,
    weights: tuple[float, float] = (LEXICAL_WEIGHT, SEMANTIC_WEIGHT),
) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: score(d) = Σ w / (k + rank(d)) over the rankings holding d (1-based
    ranks). Returned best first, ties by record_id, scores rounded to SCORE_DIGITS. Scores of the
    inputs only order them; their scales never meet."""
    if k < 1:
        raise ValueError("k must be at least 1")
    fused: dict[str, float] = {}
    for ranking, weight in ((lexical, weights[0]), (semantic, weights[1])):
        for rank, record_id in enumerate(_ordered(ranking), start=1):
            fused[record_id] = fused.get(record_id, 0.0) + weight / (k + rank)
    scored = [(record_id, round(score, SCORE_DIGITS)) for record_id, score in fused.items()]
    scored.sort(key=lambda item: (-item[1], item[0]))
    return scored


def cosine_ranking(
    query: Any,
    ids: Sequence[str],
    matrix: Any,
    top_n: int = SEMANTIC_TOP_N,
    min_cosine: float = MIN_COSINE,
) -> list[tuple[str, float]]:
    """The `top_n` ids whose unit vectors (rows of `matrix`) are nearest the unit `query`, with
    cosine ≥ `min_cosine`, best first, ties by id, similarities rounded to SCORE_DIGITS."""
    import numpy as np

    if len(ids) == 0 or top_n <= 0:
        return []
    sims = np.round(
        np.asarray(matrix, dtype=np.float32) @ np.asarray(query, dtype=np.float32), SCORE_DIGITS
    )
    keep = np.flatnonzero(sims >= min_cosine)
    if keep.size > top_n:
        # argpartition finds a superset cheaply; the exact order (and ties) is settled below.
        cut = np.partition(sims[keep], keep.size - top_n)[keep.size - top_n]
        keep = keep[sims[keep] >= cut]
    ranked = sorted(
        ((ids[int(i)], float(sims[i])) for i in keep), key=lambda item: (-item[1], item[0])
    )
    return ranked[:top_n]
