"""The hybrid recall policy hybrid/5: hybrid/4's candidates (the engine/2 head and the cosine
side, memory.engine.hybrid3) re-scored by a **logistic model** whose output is the answer's
`score`: an estimate of the probability that the record is evidence for the query, on one
absolute scale for every query (docs/recall.md#scores). Pure: no Django, no I/O beyond reading
the shipped coefficients once (`hybrid5.json`, fitted by `python -m bench.tune_hybrid5`); ties
by record_id; scores rounded.

The pool is the first `POOL` of hybrid/4's fused list (the first max_records when more are
asked). Per candidate d the policy computes (ALL_FEATURES; the shipped model weighs those its
`features` name, FEATURES):

- `cosine`: d's cosine to the query (0 when d is not on the cosine side, whose floor is
  `MIN_COSINE`), and `vector`: 1 when it is;
- `lexical`: d's engine/2 score (relative: 0.8 × relevance / the best relevance + 0.2 ×
  recency; 0 when d holds no query term), and `lexical_match`: 1 when d holds one;
- `fused`: d's hybrid/4 score, and `fused_rank`: 1 / (its 1-based rank in hybrid/4's list);
- `top_cosine`: the best cosine of the query's cosine side (a query that nothing stored
  resembles scores low everywhere, which min-max normalisation hid: hybrid/4's top is always
  ~1), and `cosine_gap`: top_cosine − cosine;
- read from d's text (`text_features`): `term_fraction`, the share of the query's terms d holds
  (absolute, unlike `lexical`); `speaker_named`, d opens with a speaker's label ("Caroline: …")
  the query names; `proper_nouns`, the share of the query's capitalised non-stop words d holds.

score(d) = σ(intercept + Σ coefficient × feature), rounded to SCORE_DIGITS; order: score
descending, then record_id. `THRESHOLD` is the documented cut at which "the top result is
evidence" is read (docs/recall.md#scores); each Scored carries the signals that matched it, for
the `extensions["spoke-recall-match"]` of the answer's copy of each result's record."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from memory.engine import hybrid3, lexicon
from memory.engine.hybrid import SCORE_DIGITS, Ranking
from memory.engine.rank import Ranked

VERSION = "hybrid/5"
LEXICAL_TOP_N = hybrid3.LEXICAL_TOP_N
SEMANTIC_TOP_N = hybrid3.SEMANTIC_TOP_N
MIN_COSINE = hybrid3.MIN_COSINE
MATCH_KEY = "spoke-recall-match"  # the extension key of a recall result's record
POOL = 50  # the first POOL of hybrid/4's fused list are re-scored (max_records more if asked)
BASE_FEATURES = (
    "cosine",
    "vector",
    "lexical",
    "lexical_match",
    "fused",
    "fused_rank",
    "top_cosine",
    "cosine_gap",
)
TEXT_FEATURES = ("speaker_named", "term_fraction", "proper_nouns")
ALL_FEATURES = (*BASE_FEATURES, *TEXT_FEATURES)
BOOSTS = ("speaker_named", "proper_nouns")  # what a match names as boosts


def _model() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        resources.files("memory.engine").joinpath("hybrid5.json").read_text()
    )
    if not set(data["features"]) <= set(ALL_FEATURES):
        raise ValueError("hybrid5.json names features memory.engine.hybrid5 does not compute")
    return data


MODEL = _model()
FEATURES: tuple[str, ...] = tuple(MODEL["features"])  # the model's, of ALL_FEATURES
COEFFICIENTS: tuple[float, ...] = tuple(float(c) for c in MODEL["coefficients"])
INTERCEPT = float(MODEL["intercept"])
THRESHOLD = float(MODEL["threshold"])
_INDEX = tuple(ALL_FEATURES.index(name) for name in FEATURES)


@dataclass(frozen=True)
class Scored(Ranked):
    """A ranked record with the signals that matched it (lexical, vector) and their values."""

    match: dict[str, Any] = field(default_factory=dict, compare=False)


LABEL = re.compile(r"\s*([^\W\d_][\w'.-]*(?: [^\W\d_][\w'.-]*){0,2}):\s")
WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Query:
    """What the text features read of the query, computed once per query."""

    words: frozenset[str]  # its words, case-folded
    terms: frozenset[str]  # its lexicon terms (memory.engine.lexicon.query_terms)
    names: frozenset[str]  # its proper nouns (`proper_nouns`)

    @classmethod
    def of(cls, query: str) -> Query:
        return cls(
            frozenset(w.casefold() for w in WORD.findall(query)),
            frozenset(lexicon.query_terms(query)),
            frozenset(proper_nouns(query)),
        )


def speaker_named(query: str | Query, text: str) -> bool:
    """Whether the record's text opens with a speaker's label ("Caroline: …", one to three
    words and a colon) whose every word the query names (case-insensitively)."""
    label = LABEL.match(text)
    if label is None:
        return False
    named = (query if isinstance(query, Query) else Query.of(query)).words
    return all(w.casefold() in named for w in WORD.findall(label.group(1)))


NAME = re.compile(r"\b[A-Z][a-z]+\b")


def proper_nouns(query: str) -> set[str]:
    """The query's capitalised words that are not stop words (memory.engine.lexicon), folded:
    its names, roughly ("Caroline", "Boston")."""
    return {w.casefold() for w in NAME.findall(query) if w.casefold() not in lexicon.STOP_WORDS}


def text_features(query: str | Query, text: str) -> dict[str, float]:
    """The features read from a candidate's text (issue 44's boosts; docs/recall-quality.md says
    which were kept): the speaker named in the query, the fraction of the query's terms
    (memory.engine.lexicon) the text holds, and the fraction of the query's names it holds."""
    q = query if isinstance(query, Query) else Query.of(query)
    held = q.terms & set(lexicon.tokens(text)) if q.terms else set()
    words = {w.casefold() for w in WORD.findall(text)} if q.names else set()
    return {
        "speaker_named": 1.0 if speaker_named(q, text) else 0.0,
        "term_fraction": len(held) / len(q.terms) if q.terms else 0.0,
        "proper_nouns": len(q.names & words) / len(q.names) if q.names else 0.0,
    }


def pool(lexical: Ranking, semantic: Ranking, size: int = POOL) -> list[tuple[str, float]]:
    """The candidates hybrid/5 re-scores: the first `size` of hybrid/4's fused list."""
    return hybrid3.fuse3(lexical, semantic)[:size]


def features(
    lexical: Ranking,
    semantic: Ranking,
    fused: list[tuple[str, float]],
    query: str,
    texts: Mapping[str, str],
) -> list[tuple[float, ...]]:
    """Each candidate's feature values (in ALL_FEATURES order) of the pool `fused` (its order);
    `texts`: record_id → text of the pool's records."""
    lex: dict[str, float] = {}
    for record_id, value in lexical:
        lex[record_id] = max(value, lex.get(record_id, 0.0))
    cos: dict[str, float] = {}
    for record_id, value in semantic:
        cos[record_id] = max(value, cos.get(record_id, 0.0))
    top = max(cos.values(), default=0.0)
    q = Query.of(query)
    rows = []
    for rank_, (record_id, fused_score) in enumerate(fused, start=1):
        c = cos.get(record_id, 0.0)
        named = text_features(q, texts.get(record_id, ""))
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
                *(named[name] for name in TEXT_FEATURES),
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


def fuse5(
    lexical: Ranking,
    semantic: Ranking,
    fused: list[tuple[str, float]],
    query: str,
    texts: Mapping[str, str],
) -> list[Scored]:
    """The pool `fused` (hybrid/4's first candidates) re-scored by the shipped logistic model,
    best first, ties by record_id; each with the signals that matched it."""
    rows = features(lexical, semantic, fused, query, texts)
    lex = {record_id for record_id, _ in lexical}
    cos = dict(semantic)
    scored = []
    for (record_id, _), row in zip(fused, rows, strict=True):
        match: dict[str, Any] = {"lexical": record_id in lex}
        if record_id in lex:
            match["term_fraction"] = round(row[ALL_FEATURES.index("term_fraction")], SCORE_DIGITS)
        match["vector"] = record_id in cos
        if record_id in cos:
            match["cosine"] = cos[record_id]
        match["boosts"] = [
            name for name in BOOSTS if name in FEATURES and row[ALL_FEATURES.index(name)] > 0
        ]
        scored.append(Scored(record_id, round(probability(row), SCORE_DIGITS), match))
    scored.sort(key=lambda item: (-item.score, item.record_id))
    return scored
