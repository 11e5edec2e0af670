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

from memory.engine.hybrid import SCORE_DIGITS, Ranking

VERSION = "hybrid/3"
LEXICAL_WEIGHT = 0.55
LEXICAL_TOP_N = 100
SEMANTIC_TOP_N = 100
MIN_COSINE = 0.2


def _normalised(ranking: Ranking) -> dict[str, float]:
    """record_id → min-max normalised score (a duplicate keeps its best score)."""
    best: dict[str, float] = {}
    for record_id, value in ranking:
        if record_id not in best or value > best[record_id]:
            best[record_id] = value
    if not best:
        return {}
    lo, hi = min(best.values()), max(best.values())
    if hi <= lo:
        return dict.fromkeys(best, 1.0)
    return {record_id: (value - lo) / (hi - lo) for record_id, value in best.items()}


def fuse3(lexical: Ranking, semantic: Ranking) -> list[tuple[str, float]]:
    """The fused ranking of the lexical head (its first LEXICAL_TOP_N used) and the semantic side
    (its first SEMANTIC_TOP_N), best first, ties by record_id."""
    head = sorted(lexical, key=lambda item: (-item[1], item[0]))[:LEXICAL_TOP_N]
    near = sorted(semantic, key=lambda item: (-item[1], item[0]))[:SEMANTIC_TOP_N]
    lex, sem = _normalised(head), _normalised(near)
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
    return scored
