"""Recall ranking, engine policy `engine/2`: pure, deterministic, no I/O — the plain statement of
the policy. `memory.ops.recall` computes the same ranking from stored term rows in SQL and
finishes it with `relevance()` and `score()` below; this module's `rank()` is the oracle the
property tests hold the database to.

**Tokens**: `memory.engine.lexicon.tokens` (NFKC, case folding, Unicode words, CJK characters one
by one, English stop words out, Snowball English stems).

**Candidates** C: the eligible records holding at least one query term (OR).

**Relevance**: BM25 with k1 = `K1`, b = `B` over the distinct query terms, statistics over C:
N = |C|, df(t) = candidates holding t, |d| = the record's token count, avgdl = (Σ |d| over C) / N,
idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)); normalized by the best candidate's relevance.

**Recency**: 0.5 ** (age / 30 days), age = newest candidate's created_at − this record's
created_at (stored times only, never the clock).

**Score** = round(0.8 × normalized relevance + 0.2 × recency, 6); order: score descending, then
record_id ascending. With a query that has no term: newest first, as engine/1."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from memory.engine import lexicon
from memory.engine.rank import HALF_LIFE_MS, SCORE_DECIMALS, Doc, Ranked
from memory.engine.rank import rank as newest_first

VERSION = "engine/2"
K1, B = 1.2, 0.75
RELEVANCE_WEIGHT, RECENCY_WEIGHT = 0.8, 0.2


class Stats(NamedTuple):
    """The candidate set's statistics: N, Σ|d|, df per query term, newest created_at (ms)."""

    n: int
    total_length: int
    df: Mapping[str, int]
    newest_ms: int


def idf(df: int, n: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def relevance(counts: Sequence[tuple[str, int]], length: int, stats: Stats) -> float:
    """BM25 of one candidate; `counts` = (term, tf) of the query terms it holds, sorted by term
    (the order of the sum is part of the policy: floats do not add associatively)."""
    norm = K1 * (1 - B + B * length * stats.n / stats.total_length)
    return sum(idf(stats.df[t], stats.n) * c * (K1 + 1) / (c + norm) for t, c in counts)


def score(rel: float, best: float, created_ms: int, newest_ms: int) -> float:
    recency: float = 0.5 ** (max(newest_ms - created_ms, 0) / HALF_LIFE_MS)
    return round(RELEVANCE_WEIGHT * rel / best + RECENCY_WEIGHT * recency, SCORE_DECIMALS)


def rank(docs: Sequence[Doc], query: str) -> list[Ranked]:
    """The whole ranking of `docs` (the eligible records) for `query`, best first."""
    terms = lexicon.query_terms(query)
    if not terms:
        return newest_first(docs, "")
    wanted = set(terms)
    matched = []
    for d in docs:
        toks = lexicon.tokens(d.text)
        tf = Counter(t for t in toks if t in wanted)
        if tf:
            matched.append((d, sorted(tf.items()), len(toks)))
    if not matched:
        return []
    stats = Stats(
        n=len(matched),
        total_length=sum(length for _, _, length in matched),
        df=Counter(t for _, counts, _ in matched for t, _c in counts),
        newest_ms=max(d.created_ms for d, _, _ in matched),
    )
    rels = [(d, relevance(counts, length, stats)) for d, counts, length in matched]
    best = max(rel for _, rel in rels)
    scored = [
        Ranked(d.record_id, score(rel, best, d.created_ms, stats.newest_ms)) for d, rel in rels
    ]
    return sorted(scored, key=lambda r: (-r.score, r.record_id))
