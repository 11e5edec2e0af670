"""The tokenizer of engine/2 and hybrid/2: pure, deterministic, no I/O, the same for documents
and queries (and so the same on every database: the database only stores what this returns).

1. **Normalize**: Unicode NFKC (full-width `ＡＢＣ` → `ABC`, ligatures `ﬁ` → `fi`, composed
   accents), then `str.casefold()` (`Straße` → `strasse`, `Σ` → `σ`).
2. **Split** into words: maximal runs of letters, combining marks and digits (Unicode general
   categories L*, M*, N*; so `_ - ' @ . :` and every punctuation or space split words). Han,
   Hiragana and Katakana characters (scripts written without spaces) are one token **each**, so
   a Chinese or Japanese query matches the same characters inside a longer run. Other symbols
   (category So: emoji, ☂, ♫) are one token each too, so a text made of them is still findable.
3. **Drop** English stop words (`STOP_WORDS`, below: the Snowball English list, apostrophes
   split as step 2 splits them) and words longer than `MAX_TOKEN_CHARS` (blobs, not words).
4. **Stem** with the Snowball English stemmer (PyStemmer, a maintained C implementation):
   `running` → `run`, `memories` → `memori`. Words of other languages go through it unchanged in
   practice (it only strips English suffixes from Latin letters).

A text whose words are all stop words has no tokens; a query like that is an empty query."""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Callable
from functools import lru_cache

import Stemmer

MAX_TOKEN_CHARS = 200

# The Snowball English stop-word list (snowballstem.org/algorithms/english/stop.txt), with its
# contractions split the way step 2 splits them ("don't" → "don", "t"; both are listed).
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren as at be because been before
    being below between both but by can cannot could couldn d did didn do does doesn doing don
    down during each few for from further had hadn has hasn have haven having he her here hers
    herself him himself his how i if in into is isn it its itself let ll m me more most mustn my
    myself no nor not of off on once only or other ought our ours ourselves out over own re s
    same shan she should shouldn so some such t than that the their theirs them themselves then
    there these they this those through to too under until up ve very was wasn we were weren
    what when where which while who whom why with won would wouldn you your yours yourself
    yourselves
    """.split()
)


def _ranges(predicate: Callable[[int], bool]) -> str:
    """A regex character class body for every code point the predicate accepts."""
    out, start, prev = [], None, None
    for cp in range(sys.maxunicode + 1):
        if predicate(cp):
            if start is None:
                start = cp
            prev = cp
        elif start is not None:
            out.append(f"\\U{start:08x}-\\U{prev:08x}")
            start = None
    if start is not None:
        out.append(f"\\U{start:08x}-\\U{prev:08x}")
    return "".join(out)


def _single(cp: int) -> bool:
    """Characters that are one token each: Han, Hiragana, Katakana (and their extensions), and
    other symbols (emoji)."""
    if unicodedata.category(chr(cp)) == "So":
        return True
    return (
        0x3040 <= cp <= 0x30FF  # Hiragana, Katakana
        or 0x31F0 <= cp <= 0x31FF  # Katakana extensions
        or 0x3400 <= cp <= 0x4DBF  # CJK extension A
        or 0x4E00 <= cp <= 0x9FFF  # CJK unified ideographs
        or 0xF900 <= cp <= 0xFAFF  # CJK compatibility ideographs
        or 0xFF66 <= cp <= 0xFF9D  # half-width Katakana (NFKC maps most of them)
        or 0x20000 <= cp <= 0x3FFFF  # CJK extensions B and later
    )


def _word(cp: int) -> bool:
    return unicodedata.category(chr(cp))[0] in "LMN" and not _single(cp)


@lru_cache(maxsize=1)
def _pattern() -> re.Pattern[str]:
    # Built once per process from the running Python's Unicode database (~0.2 s).
    return re.compile(f"[{_ranges(_single)}]|[{_ranges(_word)}]+")


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def words(text: str) -> list[str]:
    """Steps 1 and 2: the normalized words of a text, in order, stop words kept."""
    return _pattern().findall(unicodedata.normalize("NFKC", text).casefold())


def tokens(text: str) -> list[str]:
    """The index terms of a text, in order, repeats kept (steps 1–4)."""
    kept = [w for w in words(text) if w not in STOP_WORDS and len(w) <= MAX_TOKEN_CHARS]
    return _stemmer().stemWords(kept) if kept else []


def query_terms(text: str) -> list[str]:
    """The distinct terms of a query, sorted (the order never matters to a score)."""
    return sorted(set(tokens(text)))
