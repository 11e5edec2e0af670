"""Likely duplicates, judged by the console beside the recall engine's own score.

The recall score is the engine's ranking number: its scale is the engine's and changes with
it, so the console does not draw a line on it. A record is marked **likely duplicate** when its
words and the candidate's overlap by at least DUPLICATE_AT (Jaccard similarity of the two sets
of lower-cased words: shared words / all words). Identical text is 1.0; "Ada prefers tea." and
"Ada prefers tea over coffee." is 0.6, not a duplicate.

The queue marks a row **duplicate** by a stricter, cheaper rule it can apply to a whole page in
at most three queries (`record_duplicates`): the text equals, once case, spacing and punctuation are set
aside (`normalized`), an existing record of the same subject that the moderator may read, or an
earlier pending candidate of the same subject on the page."""

from __future__ import annotations

import re
from datetime import datetime

from django.db.models import Count, Q

from memory.access import coverage_for
from memory.engine import lexicon
from memory.models import Principal, RecordTerm
from memory.selectors.selection import read_filter, records_queryset
from memory.wire import types as t
from memory.wire.errors import WireError

DUPLICATE_AT = 0.85
WORD = re.compile(r"\w+", re.UNICODE)
RECORD_READ = ["records_read"]
MATCH_ROWS = 2000  # records fetched for one queue page's check, at most


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


def record_duplicates(
    principal: Principal, space_id: str, candidates: list[t.MemoryCandidate], at: datetime
) -> dict[str, str]:
    """candidate_id → the record_id of a readable, live record of the candidate's subject whose
    normalized text equals the candidate's. At most three queries whatever the page's size.

    Equal normalized text has the same tokens of the recall tokenizer (save texts that differ
    only by symbols such as emoji, which the tokenizer keeps and `normalized` drops), so such a
    record has, in its stored term rows (memory.models.RecordTerm), every term of the candidate
    and the same token count. 1. One query counts, per subject, term and token count, the
    records holding each of the page's terms; each candidate's rarest term at its token count
    is its *driver* (a driver no record holds: nothing can equal it, and it costs nothing
    more). 2. The caller's coverage (its grants, as every op reads them). 3. One read of the
    readable live records holding a driver at that token count; equality is decided here on
    those few texts. A candidate without tokens (only stop words) is not matched."""
    wanted: dict[tuple[str, str], list[str]] = {}
    shape: dict[str, tuple[str, list[str], int]] = {}
    terms: dict[str, set[str]] = {}
    lengths: dict[str, set[int]] = {}
    for c in candidates:
        text = c["proposed"]["content"]["text"]
        toks, norm = lexicon.tokens(text), normalized(text)
        if not toks or not norm:
            continue
        subject = c["subject_id"]
        wanted.setdefault((subject, norm), []).append(c["candidate_id"])
        shape[c["candidate_id"]] = (subject, sorted(set(toks)), len(toks))
        terms.setdefault(subject, set()).update(toks)
        lengths.setdefault(subject, set()).add(len(toks))
    if not wanted:
        return {}
    stats = Q(pk__in=[])
    for subject in sorted(terms):
        stats |= Q(
            subject__subject_id=subject,
            term__in=sorted(terms[subject]),
            length__in=sorted(lengths[subject]),
        )
    held: dict[tuple[str, str, int], tuple[int, int]] = {}
    for subject_pk, subject, term, length, df in (
        RecordTerm.objects.filter(space_id=space_id, subject__space_id=space_id)
        .filter(stats)
        .values_list("subject_id", "subject__subject_id", "term", "length")
        .annotate(df=Count("record_id"))
        .order_by()
    ):
        held[(subject, term, length)] = (df, subject_pk)
    drivers: set[tuple[int, str, int]] = set()
    for subject, toks, length in shape.values():
        df, term = min((held.get((subject, t, length), (0, 0))[0], t) for t in toks)
        if df:
            drivers.add((held[(subject, term, length)][1], term, length))
    if not drivers:
        return {}
    driving = Q(pk__in=[])
    for subject_pk, term, length in sorted(drivers):
        driving |= Q(subject_id=subject_pk, term=term, length=length)
    try:
        cov = coverage_for(space_id, principal, at)
    except WireError:
        return {}
    rows = (
        records_queryset(cov, RECORD_READ, read_filter({}))
        .filter(
            pk__in=RecordTerm.objects.filter(driving, space_id=space_id).values("record_id"),
            subject__space_id=space_id,
        )
        .order_by("-created_at", "-record_id")
        .values_list("record_id", "subject__subject_id", "text")[:MATCH_ROWS]
    )
    found: dict[str, str] = {}
    for record_id, subject, text in rows:
        for cid in wanted.get((subject, normalized(text)), []):
            found.setdefault(cid, record_id)
    return found
