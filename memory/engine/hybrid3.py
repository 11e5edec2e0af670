"""The hybrid recall policy hybrid/3: the engine/2 lexical head and the cosine side fused by their
**scores**, not their ranks: each side's scores min-max normalised over that side's list, then a
weighted sum (CombSUM; Fox & Shaw, TREC-2 1994). Pure: no Django, no I/O; ties by record_id;
scores rounded.

- Lexical side: the first `LEXICAL_TOP_N` records of the engine/2 ranking, with their engine/2
  scores (hybrid/2's head).
- Semantic side: the `SEMANTIC_TOP_N` eligible records nearest the query, cosine ≥ `MIN_COSINE`
  (hybrid/2's side, deeper). A record without a vector is absent from it.
- norm(s) = (s − min) / (max − min) over the side's list (1 when every score of the side is the
  same, a list of one included), so each side's best is 1 and its worst 0;
- score(d) = LEXICAL_WEIGHT × norm_lexical(d) + (1 − LEXICAL_WEIGHT) × norm_semantic(d), a side's
  term 0 when d is not in its list; rounded to SCORE_DIGITS; order: score descending, then
  record_id.

Unlike RRF, a record far ahead on one side (a near-exact lexical match, a very close paraphrase)
keeps its lead; RRF turns every gap into the same rank step. The constants were chosen on
conversations 1–3 of the LoCoMo dev file and read on 4–5 (docs/recall-quality.md,
`python -m bench.tune_hybrid3_fusion`)."""

from __future__ import annotations

from dataclasses import dataclass

from memory.engine.hybrid import SCORE_DIGITS, Ranking

VERSION = "hybrid/3"
LEXICAL_WEIGHT = 0.55
LEXICAL_TOP_N = 100
SEMANTIC_TOP_N = 100
MIN_COSINE = 0.2


@dataclass(frozen=True)
class Heads:
    """The parts of the two sides fuse3 reads: record_id → best score (a duplicate keeps its
    best) of the first LEXICAL_TOP_N of the lexical side and the first SEMANTIC_TOP_N of the
    semantic side, each best first (ties by record_id)."""

    lexical: dict[str, float]
    semantic: dict[str, float]


def _best(ranking: Ranking, depth: int) -> dict[str, float]:
    """record_id → best score of the first `depth` of `ranking` (score descending, ties by
    record_id), in that order."""
    best: dict[str, float] = {}
    for record_id, value in sorted(ranking, key=lambda item: (-item[1], item[0]))[:depth]:
        if record_id not in best or value > best[record_id]:
            best[record_id] = value
    return best


def heads(lexical: Ranking, semantic: Ranking) -> Heads:
    """The lexical head and the semantic side as fuse3 reads them."""
    return Heads(_best(lexical, LEXICAL_TOP_N), _best(semantic, SEMANTIC_TOP_N))


def _normalised(best: dict[str, float]) -> dict[str, float]:
    """record_id → min-max normalised score."""
    if not best:
        return {}
    lo, hi = min(best.values()), max(best.values())
    if hi <= lo:
        return dict.fromkeys(best, 1.0)
    return {record_id: (value - lo) / (hi - lo) for record_id, value in best.items()}


def fuse3_heads(lexical: Ranking, semantic: Ranking) -> tuple[list[tuple[str, float]], Heads]:
    """fuse3's ranking and the heads it read (for hybrid/6's features, which read the same)."""
    read = heads(lexical, semantic)
    lex, sem = _normalised(read.lexical), _normalised(read.semantic)
    scored = [
        (
            record_id,
            round(
                LEXICAL_WEIGHT * lex.get(record_id, 0.0)
                + (1 - LEXICAL_WEIGHT) * sem.get(record_id, 0.0),
                SCORE_DIGITS,
            ),
        )
        for record_id in lex.keys() | sem.keys()
    ]
    scored.sort(key=lambda item: (-item[1], item[0]))
    return scored, read


def fuse3(lexical: Ranking, semantic: Ranking) -> list[tuple[str, float]]:
    """The fused ranking of the lexical head (its first LEXICAL_TOP_N used) and the semantic side
    (its first SEMANTIC_TOP_N), best first, ties by record_id."""
    return fuse3_heads(lexical, semantic)[0]
