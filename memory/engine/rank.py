"""Recall ranking and budget (docs/protocol.md#engine-policy), engine policy `engine/1`: pure, deterministic, no I/O.

**Tokenizer.** Text is case-folded with a fixed table (`FOLD_FROM` → `FOLD_TO`: the single-character
lower-case mappings of A–Z and of U+00C0–U+052F, i.e. Latin, Greek and Cyrillic letters; every
other character is kept as it is) and split on runs of separator characters (`SEPARATOR_RANGES`:
ASCII other than letters and digits — so `_`, `-`, `'`, `@`, `.` all split —, Latin-1 punctuation
and symbols U+0080–U+00BF, `×` `÷`, General Punctuation U+2000–U+206F, arrows/maths/box/misc
symbols U+2190–U+2BFF, CJK punctuation U+3000–U+3003 and U+FEFF). Tokens longer than
`MAX_TOKEN_CHARS` characters are dropped (they are blobs, not words). The table and ranges are
fixed data, independent of any locale. (engine/1 is retired; its tokenizer and ranking stay
here as the newest-first order and budget every served engine uses, and as history.)

**Relevance.** BM25 (k1 = 1.2, b = 0.75) over the distinct query tokens, with the statistics
taken over the candidate set (the eligible records that contain at least one query token):
N = number of candidates, df(t) = candidates containing t, avgdl = mean token count of the
candidates, idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)). The relevance is then normalized by
the best candidate's, so it lies in (0, 1].

**Recency.** 0.5 ** (age / 30 days), where age = (newest candidate's created_at − this record's
created_at): measured from stored times only, never from the wall clock, so the same state always
gives the same answer.

**Score** = round(0.8 × relevance + 0.2 × recency, 6); order: score descending, then record_id
ascending. With a query that has no token: newest first (created_at descending, then record_id
ascending), score = round(recency, 6).

**Budget.** The longest prefix of the ranking that holds at most `max_records` records and at most
`max_bytes` content bytes (docs/protocol.md#content) in total; `reason` says which limit stopped it."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

K1, B = 1.2, 0.75
RELEVANCE_WEIGHT, RECENCY_WEIGHT = 0.8, 0.2
HALF_LIFE_MS = 30 * 24 * 3600 * 1000
SCORE_DECIMALS = 6
MAX_TOKEN_CHARS = 200
DEFAULT_MAX_RECORDS = 10


def _fold_table() -> tuple[str, str]:
    src, dst = [], []
    for cp in [*range(0x41, 0x5B), *range(0xC0, 0x530)]:
        lower = chr(cp).lower()
        if len(lower) == 1 and lower != chr(cp):
            src.append(chr(cp))
            dst.append(lower)
    return "".join(src), "".join(dst)


FOLD_FROM, FOLD_TO = _fold_table()
_FOLD = str.maketrans(FOLD_FROM, FOLD_TO)
SEPARATOR_RANGES: tuple[tuple[int, int], ...] = (
    (0x00, 0x2F),
    (0x3A, 0x40),
    (0x5B, 0x60),
    (0x7B, 0xBF),
    (0xD7, 0xD7),
    (0xF7, 0xF7),
    (0x2000, 0x206F),
    (0x2190, 0x2BFF),
    (0x3000, 0x3003),
    (0xFEFF, 0xFEFF),
)
_SEP = re.compile("[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in SEPARATOR_RANGES) + "]+")


def tokens(text: str) -> list[str]:
    """The tokens of a text, in order, repeats kept."""
    return [t for t in _SEP.split(text.translate(_FOLD)) if t and len(t) <= MAX_TOKEN_CHARS]


def _token_count(text: str, raw: list[str]) -> int:
    """len(tokens(text)) given the raw split: separators are runs, so the only empty pieces are
    at the ends, and a text no longer than MAX_TOKEN_CHARS cannot hold an over-long token."""
    if len(text) <= MAX_TOKEN_CHARS:
        return len(raw) - raw.count("")
    return sum(1 for t in raw if t and len(t) <= MAX_TOKEN_CHARS)


def query_terms(text: str) -> list[str]:
    """The distinct tokens of a query, sorted (the order never matters to a score)."""
    return sorted(set(tokens(text)))


class Doc(NamedTuple):
    """What the policy needs of one eligible record (a tuple: recall builds thousands)."""

    record_id: str
    created_ms: int
    text: str


@dataclass(frozen=True)
class Ranked:
    record_id: str
    score: float


def _recency(created_ms: int, newest_ms: int) -> float:
    return float(0.5 ** (max(newest_ms - created_ms, 0) / HALF_LIFE_MS))


def rank(docs: Sequence[Doc], query: str) -> list[Ranked]:
    """Filter to the lexical matches and order them. Empty query: every doc, newest first."""
    terms = query_terms(query)
    if not terms:
        if not docs:
            return []
        newest = max(d.created_ms for d in docs)
        ordered = sorted(docs, key=lambda d: (-d.created_ms, d.record_id))
        return [
            Ranked(d.record_id, round(_recency(d.created_ms, newest), SCORE_DECIMALS))
            for d in ordered
        ]
    matched: list[tuple[Doc, list[tuple[str, int]], int]] = []
    for d in docs:
        raw = _SEP.split(d.text.translate(_FOLD))
        # a query term is never empty nor over MAX_TOKEN_CHARS, so counting it in the raw split
        # is counting it in tokens(); the term pairs stay in sorted term order (the sum's order)
        counts = [(t, c) for t in terms if (c := raw.count(t))]
        if counts:
            matched.append((d, counts, _token_count(d.text, raw)))
    if not matched:
        return []
    n = len(matched)
    avgdl = sum(length for _, _, length in matched) / n
    df = Counter(t for _, counts, _ in matched for t, _c in counts)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in df}
    newest = max(d.created_ms for d, _, _ in matched)
    relevances = []
    for d, counts, length in matched:
        norm = K1 * (1 - B + B * length / avgdl)
        rel = sum(idf[t] * c * (K1 + 1) / (c + norm) for t, c in counts)
        relevances.append((d, rel))
    best = max(rel for _, rel in relevances)
    scored = [
        Ranked(
            d.record_id,
            round(
                RELEVANCE_WEIGHT * rel / best + RECENCY_WEIGHT * _recency(d.created_ms, newest),
                SCORE_DECIMALS,
            ),
        )
        for d, rel in relevances
    ]
    return sorted(scored, key=lambda r: (-r.score, r.record_id))


@dataclass(frozen=True)
class Budgeted:
    taken: int
    truncated: bool
    reason: Literal["max_records", "max_bytes"] | None
    omitted_count: int


def budget(sizes: Sequence[int], total: int, max_records: int, max_bytes: int) -> Budgeted:
    """The longest prefix of the ranking within both limits. `sizes` are the content bytes of the
    ranking's head, in order (at least its first `max_records + 1` entries, or all of them);
    `total` is the number of eligible records."""
    taken, used = 0, 0
    reason: Literal["max_records", "max_bytes"] | None = None
    for size in sizes:
        if taken == max_records:
            reason = "max_records"
            break
        if used + size > max_bytes:
            reason = "max_bytes"
            break
        taken, used = taken + 1, used + size
    if reason is None and taken < total:
        reason = "max_records"
    return Budgeted(taken, taken < total, reason, total - taken)
