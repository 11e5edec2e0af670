"""The hybrid recall policy hybrid/6: **hybrid/4's order, with a calibrated score**. The ranking
is hybrid/4's fused list (the engine/2 head and the cosine side, memory.engine.hybrid3) unchanged;
each result's `score` is an estimate of the probability that the record is evidence for the
query, on one absolute scale for every query (docs/recall.md#scores), where hybrid/4's min-max
score puts ~1 at the top of any answer. Pure: no Django, no I/O beyond reading the shipped
coefficients once (`hybrid6.json`, fitted by `python -m bench.tune_hybrid6`); scores rounded.

Per candidate d of the pool (the first `POOL` of the fused list, or max_records when more are
asked) the policy computes FEATURES_AVAILABLE, all from the two sides' scores (no record's text
is read): `cosine` (d's cosine to the query; 0 off the cosine side, whose floor is MIN_COSINE)
and `vector` (1 on it); `lexical` (d's engine/2 score, relative to the best) and `lexical_match`
(1 when d holds a query term); `fused` (d's hybrid/4 score) and `fused_rank` (1 / its 1-based
rank); `top_cosine` (the best cosine of the query's cosine side: a query nothing stored resembles
scores low everywhere) and `cosine_gap` (top_cosine − cosine). The shipped model weighs those its
`features` name:

    p(d) = σ(intercept + Σ coefficient × feature)
    score(d) = min(p(e) for e ranked at or before d)      (non_increasing)

so the order is hybrid/4's and a result never scores above one ranked before it: an agent that
keeps the results at or above a threshold keeps a prefix. `THRESHOLD` is the documented cut at
which "the top result is evidence" is read. Each Scored carries the signals that matched it, for
the `extensions["spoke-recall-match"]` of the answer's copy of each result's record."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from memory.engine import hybrid3
from memory.engine.hybrid import SCORE_DIGITS, Ranking
from memory.engine.rank import Ranked

VERSION = "hybrid/6"
LEXICAL_TOP_N = hybrid3.LEXICAL_TOP_N
SEMANTIC_TOP_N = hybrid3.SEMANTIC_TOP_N
MIN_COSINE = hybrid3.MIN_COSINE
MATCH_KEY = "spoke-recall-match"  # the extension key of a recall result's record
POOL = 50  # the first POOL of hybrid/4's fused list are scored (max_records more if asked)
FEATURES_AVAILABLE = (
    "cosine",
    "vector",
    "lexical",
    "lexical_match",
    "fused",
    "fused_rank",
    "top_cosine",
    "cosine_gap",
)


def _model() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        resources.files("memory.engine").joinpath("hybrid6.json").read_text()
    )
    if not set(data["features"]) <= set(FEATURES_AVAILABLE):
        raise ValueError("hybrid6.json names features memory.engine.hybrid6 does not compute")
    return data


MODEL = _model()
FEATURES: tuple[str, ...] = tuple(MODEL["features"])  # the model's, of FEATURES_AVAILABLE
COEFFICIENTS: tuple[float, ...] = tuple(float(c) for c in MODEL["coefficients"])
INTERCEPT = float(MODEL["intercept"])
THRESHOLD = float(MODEL["threshold"])
_INDEX = tuple(FEATURES_AVAILABLE.index(name) for name in FEATURES)


@dataclass(frozen=True)
class Scored(Ranked):
    """A ranked record with the signals that matched it (lexical, vector) and their values."""

    match: dict[str, Any] = field(default_factory=dict, compare=False)


def features(
    lexical: Ranking, semantic: Ranking, fused: list[tuple[str, float]]
) -> list[tuple[float, ...]]:
    """Each candidate's feature values (in FEATURES_AVAILABLE order) of the pool `fused` (its
    order), from the two sides' scores alone: the parts of the sides fuse3 reads."""
    return features_of(hybrid3.heads(lexical, semantic), fused)


def features_of(read: hybrid3.Heads, fused: list[tuple[str, float]]) -> list[tuple[float, ...]]:
    """`features` from the heads fuse3 read (hybrid3.fuse3_heads): the served lexical head is
    deeper when max_records is larger, and a record past its first LEXICAL_TOP_N is not on the
    lexical side, as when the model was fitted."""
    lex, cos = read.lexical, read.semantic
    top = max(cos.values(), default=0.0)
    rows: list[tuple[float, ...]] = []
    for rank_, (record_id, fused_score) in enumerate(fused, start=1):
        c = cos.get(record_id, 0.0)
        rows.append(
            (
                c,
                1.0 if record_id in cos else 0.0,
                lex.get(record_id, 0.0),
                1.0 if record_id in lex else 0.0,
                fused_score,
                1.0 / rank_,
                top,
                top - c if record_id in cos else top,
            )
        )
    return rows


def probability(
    row: tuple[float, ...],
    coefficients: tuple[float, ...] = COEFFICIENTS,
    intercept: float = INTERCEPT,
    index: tuple[int, ...] = _INDEX,
) -> float:
    """σ(intercept + Σ coefficient × feature) over the model's features (`index` into the row)."""
    z = intercept + sum(c * row[i] for c, i in zip(coefficients, index, strict=True))
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def non_increasing(values: Sequence[float]) -> list[float]:
    """Each value capped by every value before it (the running minimum)."""
    out: list[float] = []
    for value in values:
        out.append(min(value, out[-1]) if out else value)
    return out


def fuse6(lexical: Ranking, semantic: Ranking, fused: list[tuple[str, float]]) -> list[Scored]:
    """The pool `fused` (hybrid/4's first candidates, in its order) scored by the shipped model,
    made non-increasing down the list; each with the signals that matched it."""
    return fuse6_heads(hybrid3.heads(lexical, semantic), fused)


def fuse6_heads(read: hybrid3.Heads, fused: list[tuple[str, float]]) -> list[Scored]:
    """`fuse6` from the heads fuse3 read (hybrid3.fuse3_heads), not sorted and cut again."""
    rows = features_of(read, fused)
    lex, cos = read.lexical, read.semantic
    scores = non_increasing([round(probability(row), SCORE_DIGITS) for row in rows])
    out = []
    for (record_id, _), score in zip(fused, scores, strict=True):
        match: dict[str, Any] = {"lexical": record_id in lex, "vector": record_id in cos}
        if record_id in cos:
            match["cosine"] = cos[record_id]
        out.append(Scored(record_id, score, match))
    return out
