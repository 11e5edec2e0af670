"""Likely duplicates, judged by the console beside the recall engine's own score.

The recall score is the engine's ranking number: its scale is the engine's and changes with
it, so the console does not draw a line on it. A record is marked **likely duplicate** when its
words and the candidate's overlap by at least DUPLICATE_AT (Jaccard similarity of the two sets
of lower-cased words: shared words / all words). Identical text is 1.0; "Ada prefers tea." and
"Ada prefers tea over coffee." is 0.6, not a duplicate."""

from __future__ import annotations

import re

DUPLICATE_AT = 0.85
WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> set[str]:
    return set(WORD.findall(text.casefold()))


def normalized(text: str) -> str:
    return " ".join(WORD.findall(text.casefold()))


def overlap(a: str, b: str) -> float:
    left, right = words(a), words(b)
    if not left and not right:
        return 1.0 if a.strip() == b.strip() else 0.0
    return len(left & right) / len(left | right)


def likely_duplicate(a: str, b: str) -> bool:
    return overlap(a, b) >= DUPLICATE_AT
