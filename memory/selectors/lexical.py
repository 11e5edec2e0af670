"""engine/2 in the database: the top of the BM25 ranking (memory.engine.lexical) computed from the
stored term rows (memory.models.RecordTerm), on PostgreSQL and SQLite alike.

PostgreSQL: one statement reads the query terms' postings of the caller's eligible records (an
index range per term on `record_term_lookup_space`, read from the index alone, semi-joined with
the eligible set unless the caller may read every live record of the subject, the common case)
and hands them back packed, one bytea per term (`_postings_sql`); numpy groups them into
candidates, computes the candidate statistics (N, Σ|d|, df, newest), scores every candidate in
one vectorized pass and keeps those that can be in the head of the ranking (`_candidates`).
A caller who may read every live record of the subject (`eligible=None`) is served the postings
this process read before at the subject's current revision, and only the other terms are read
(`cached_postings`, `keep_postings`; SPOKE_MEMORY_POSTINGS_CACHE_MB).
SQLite: one statement does all of that in SQL (`_sql`). Issue 49: at 200,000 records in one
subject a query naming a speaker has ~120,000 candidates, and PostgreSQL's row-at-a-time
evaluation of the same arithmetic through a chain of materialized CTEs cost 4-5x the read of
the postings themselves (docs/recall.md "How the database ranks").

Either way the head's record ids come in a second, primary-key statement, and Python
recomputes the head's scores with the policy's own functions (`lexical.relevance`,
`lexical.score`), so the answer is the oracle's to the last bit: the database's (or numpy's)
score only chooses which rows to bring back, with a margin of 2e-6 (twice the rounding step, a
million times any float error) below the head's last score, plus the rows whose relevance is the
best (the normalizer), so a tie or a rounding boundary is settled by Python, and ties by
record_id in code-point order, never by a database collation.

The term rows (docs/recall.md "How the database ranks") are written with every text change and
deleted with the content, under a covering index; there is no per-subject counter, so writers
never contend. With a cognition filter the candidates are ranked by the plain function instead
(exact, slower); its string and number requirements are pushed down as jsonpath
(memory.selectors.selection)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import QuerySet

from memory import rows as hand
from memory.engine import lexical
from memory.engine.rank import HALF_LIFE_MS, Ranked
from memory.models import Record, RecordTerm
from memory.selectors import recall as reads

MARGIN = 2e-6


@dataclass(frozen=True)
class Head:
    total: int  # N: the eligible records holding a query term (total_eligible)
    ranked: list[Ranked]  # the head of the ranking (at least `k` entries when there are)
    pks: dict[str, int]  # record_id -> pk of the ranked rows
    holding: frozenset[int] = frozenset()  # those of `also` that are candidates


def _f(value: object) -> str:
    """A double-precision SQL value (PostgreSQL would compute a bare `0.5` in slow `numeric`)."""
    return f"CAST({value} AS DOUBLE PRECISION)"


def _sql(eligible_sql: str | None, n_terms: int, n_also: int = 0) -> str:
    """The ranking statement (SQLite): postings, candidates, statistics, scores and the cut."""
    term = connection.ops.quote_name(RecordTerm._meta.db_table)
    marks = ", ".join(["%s"] * n_terms)
    eligible = "" if eligible_sql is None else f" AND t.record_id IN ({eligible_sql})"
    postings = f"""{term} t
  WHERE t.space_id = %s AND t.subject_id = %s AND t.term IN ({marks}){eligible}"""  # noqa: S608
    k1, b = _f(repr(lexical.K1)), _f(repr(lexical.B))
    one, half = _f("1"), _f("0.5")
    terms = range(n_terms)
    # One row per candidate: its length, time and the tf of each query term (NULL: not held; a
    # record has one term row per term). The candidates are then read once per step, never the
    # postings again, and the statistics come as scalar subqueries evaluated once.
    tfs = ",\n    ".join(
        f"{_f('MAX(CASE WHEN t.term = %s THEN t.tf END)')} AS tf{i}" for i in terms
    )
    dfs = ", ".join(f"{_f(f'COUNT(tf{i})')} AS df{i}" for i in terms)
    idfs = ", ".join(
        f"LN({one} + (n - df{i} + {half}) / (df{i} + {half})) * ({k1} + {one}) AS idf{i}"
        for i in terms
    )
    norm = f"({k1} * ({one} - {b} + {b} * d.dl * (SELECT n FROM w) / (SELECT tl FROM w)))"  # noqa: S608
    bm25 = " + ".join(
        f"COALESCE((SELECT idf{i} FROM w) * d.tf{i} / (d.tf{i} + {norm}), {_f('0')})"  # noqa: S608
        for i in terms
    )
    in_head = (
        f"score >= COALESCE((SELECT score FROM cut), {_f('-1')}) - {_f(repr(MARGIN))}\n"  # noqa: S608
        f"   OR rel >= (SELECT rel FROM best) * {_f('0.999999999')}"
    )
    # With `also` records: those of them that are candidates come back too, each row saying
    # whether it is in the head.
    flag, also = "", ""
    if n_also:
        flag = f",\n  CASE WHEN {in_head} THEN 1 ELSE 0 END"
        also = f"\n   OR r IN ({', '.join(['%s'] * n_also)})"
    # Only quoted identifiers, the policy's numeric constants and placeholders are formatted in;
    # every value (terms, subject, the eligible set's parameters, the cut) is a bound parameter.
    return f"""
WITH d AS (
  SELECT t.record_id AS r, MAX(t.length) AS dl, MAX(t.created_ms) AS cms,
    {tfs}
  FROM {postings}
  GROUP BY t.record_id
),
s AS (
  SELECT {_f("COUNT(*)")} AS n, {_f("SUM(dl)")} AS tl, MAX(cms) AS newest, {dfs} FROM d
),
w AS (SELECT s.*, {idfs} FROM s),
rel AS (SELECT d.*, {bm25} AS rel FROM d),
best AS (SELECT MAX(rel) AS rel FROM rel),
sc AS (
  SELECT rel.*,
    {_f(repr(lexical.RELEVANCE_WEIGHT))} * rel.rel / (SELECT rel FROM best)
    + {_f(repr(lexical.RECENCY_WEIGHT))}
      * POWER({half}, ((SELECT newest FROM w) - rel.cms) / {_f(repr(float(HALF_LIFE_MS)))})
    AS score
  FROM rel
),
cut AS (SELECT score FROM sc ORDER BY score DESC LIMIT 1 OFFSET %s)
SELECT r, dl, cms, {", ".join(f"tf{i}" for i in terms)},
  {", ".join(f"(SELECT {c} FROM w)" for c in ["n", "tl", "newest", *(f"df{i}" for i in terms)])}{flag}
FROM sc
WHERE {in_head}{also}
"""  # noqa: S608


# PostgreSQL: one packed posting (memory_recordterm's row, as the index holds it): the record's
# pk, the term's tf in it, the record's length and created_ms, big-endian (int8send, int4send).
POSTING_BYTES = 24


def _postings_sql(eligible_sql: str | None, n_terms: int) -> str:
    """PostgreSQL: the query terms' postings, one row per term holding all of them packed in one
    bytea (`POSTING_BYTES` each): one index range of `record_term_lookup_space` per term, read
    from the index alone (a LATERAL subquery per term, each looked up by equality on the whole
    key; with `term IN (…)` over the (subject, space) range a never-analyzed table was planned as
    a read of every term row of the subject, issue 49)."""
    term = connection.ops.quote_name(RecordTerm._meta.db_table)
    values = ", ".join(["(CAST(%s AS VARCHAR))"] * n_terms)
    eligible = "" if eligible_sql is None else f" AND t.record_id IN ({eligible_sql})"
    packed = (
        "int8send(CAST(t.record_id AS BIGINT)) || int4send(CAST(t.tf AS INTEGER))"
        " || int4send(CAST(t.length AS INTEGER)) || int8send(CAST(t.created_ms AS BIGINT))"
    )
    return f"""SELECT q.term, p.packed FROM (VALUES {values}) AS q(term) CROSS JOIN LATERAL (
  SELECT string_agg({packed}, CAST('' AS BYTEA)) AS packed FROM {term} t
  WHERE t.space_id = %s AND t.subject_id = %s AND t.term = q.term{eligible}
) p"""  # noqa: S608


# PostgreSQL, a caller who may read every live record of the subject: the packed postings of
# each query term, kept per process by the subject's revision (issue 49). Subject.revision moves
# in the transaction of every write to the subject's records (and so to their term rows: they
# are written and erased with the content, memory.services.term_store), and the request reads
# the subject before the postings, so postings held under a revision are never older than it;
# when the revision moved, everything held of the subject is dropped at its next recall and the
# query's terms are read again. An import makes new subjects (new pks). The bytes held are
# bounded (SPOKE_MEMORY_POSTINGS_CACHE_MB, 0: no cache), least recently used first out.
# docs/decisions/postings-cache.md.
_postings: OrderedDict[tuple[str, int, str], bytes] = OrderedDict()  # (db, subject, term)
_revisions: dict[tuple[str, int], int] = {}  # (db, subject) → the revision its postings are of
_held: dict[tuple[str, int], set[str]] = {}  # (db, subject) → its terms held
_size = [0]  # the bytes of `_postings`
_lock = threading.Lock()


def cache_limit() -> int:
    return max(0, int(getattr(settings, "SPOKE_MEMORY_POSTINGS_CACHE_MB", 64))) * 1_048_576


def clear_cache() -> None:
    with _lock:
        _postings.clear()
        _revisions.clear()
        _held.clear()
        _size[0] = 0


def _drop(key: tuple[str, int, str]) -> None:
    """Remove one entry (the lock held)."""
    _size[0] -= len(_postings.pop(key))
    held = _held.get(key[:2])
    if held is not None:
        held.discard(key[2])
        if not held:
            del _held[key[:2]]
            _revisions.pop(key[:2], None)


def cached_postings(subject: tuple[str, int], revision: int, terms: list[str]) -> dict[str, bytes]:
    """The postings held of `terms` for the subject at `revision` (those not held are absent);
    everything held of the subject at another revision is dropped."""
    found: dict[str, bytes] = {}
    with _lock:
        if _revisions.get(subject) != revision:
            for term in list(_held.get(subject, ())):
                _drop((*subject, term))
            return found
        for term in terms:
            key = (*subject, term)
            packed = _postings.get(key)
            if packed is not None:
                _postings.move_to_end(key)
                found[term] = packed
    return found


def keep_postings(subject: tuple[str, int], revision: int, read: Mapping[str, bytes]) -> None:
    """Hold the postings just read of the subject at `revision`, within the byte bound."""
    limit = cache_limit()
    with _lock:
        if _revisions.setdefault(subject, revision) != revision:
            return  # another request read the subject at another revision meanwhile
        for term, packed in read.items():
            key = (*subject, term)
            if len(packed) > limit // 4 or key in _postings:
                continue  # one term never takes more than a quarter of the bound
            _postings[key] = packed
            _size[0] += len(packed)
            _held.setdefault(subject, set()).add(term)
        while _size[0] > limit and _postings:
            _drop(next(iter(_postings)))
        if subject not in _held:
            _revisions.pop(subject, None)


Rows = list[tuple[Any, ...]]  # (pk, dl, created_ms, tf per query term or None)
Stat = tuple[int, int, int, list[int]]  # N, Σ|d|, newest, df per query term


def _candidates(
    terms: list[str], packed: Mapping[str, bytes | None], k: int, also: Sequence[int]
) -> tuple[Rows, Stat | None, frozenset[int]]:
    """What the SQLite statement computes, from the postings PostgreSQL packed (numpy, vectorized
    over every candidate): the candidates (records holding a query term), their statistics, every
    candidate's score in double precision, and the rows that can be in the head — scored at least
    the k-th best score less `MARGIN`, or relevant as the best — and which of `also` are
    candidates. The exact scores are Python's (`head`)."""
    import numpy as np

    posting = np.dtype([("r", ">i8"), ("tf", ">i4"), ("dl", ">i4"), ("cms", ">i8")])
    lists = [np.frombuffer(packed.get(t) or b"", posting) for t in terms]
    every = np.concatenate(lists)
    if not len(every):
        return [], None, frozenset()
    pks, where = np.unique(every["r"], return_inverse=True)
    n = len(pks)
    dl = np.zeros(n, np.int64)  # MAX(length) and MAX(created_ms) per candidate, as the SQL
    np.maximum.at(dl, where, every["dl"].astype(np.int64))
    cms = np.full(n, np.iinfo(np.int64).min, np.int64)
    np.maximum.at(cms, where, every["cms"].astype(np.int64))
    tf = np.zeros((len(terms), n), np.int64)
    held = np.zeros((len(terms), n), bool)
    at = 0
    for i, one in enumerate(lists):
        index = where[at : at + len(one)]
        at += len(one)
        tf[i, index] = one["tf"]
        held[i, index] = True
    df = [int(h.sum()) for h in held]
    tl, newest = int(dl.sum()), int(cms.max())
    norm = lexical.K1 * (1 - lexical.B + lexical.B * dl * n / tl)
    rel = np.zeros(n)
    for i, count in enumerate(df):
        idf = np.log(1 + (n - count + 0.5) / (count + 0.5)) * (lexical.K1 + 1)
        rel += np.where(held[i], idf * tf[i] / (tf[i] + norm), 0.0)
    best = rel.max()
    score = lexical.RELEVANCE_WEIGHT * rel / best + lexical.RECENCY_WEIGHT * np.power(
        0.5, (newest - cms) / float(HALF_LIFE_MS)
    )
    k = max(k, 1)
    cut = -np.partition(-score, k - 1)[k - 1] if n >= k else -1.0
    in_head = (score >= cut - MARGIN) | (rel >= best * 0.999999999)
    rows: Rows = [
        (
            int(pks[j]),
            int(dl[j]),
            int(cms[j]),
            *(int(tf[i, j]) if held[i, j] else None for i in range(len(terms))),
        )
        for j in np.flatnonzero(in_head)
    ]
    holding = (
        frozenset(int(pk) for pk in pks[np.isin(pks, np.asarray(list(also), np.int64))])
        if also
        else frozenset()
    )
    return rows, (n, tl, newest, df), holding


def head(
    space_id: str,
    subject_pk: int,
    terms: list[str],
    eligible: QuerySet[Record] | None,
    k: int,
    known: Mapping[int, str] | None = None,
    also: Sequence[int] = (),
    revision: int | None = None,
) -> Head:
    """The head of the engine/2 ranking of `eligible` (authorized ∩ filters, no cognition
    filter) for the query `terms`: exact scores for every record that can rank in the top `k`.
    `eligible=None`: every live record of the subject (`selection.whole_subject`) — term rows
    exist only for live records, so the term index range alone is the candidate set.
    `known`: pk → record_id of records the caller has read already (a hybrid engine's cached
    vectors; a record's id never changes), looked up only for the others. `also`: eligible
    records (pks) whose being candidates (holding a query term) the caller asks in the same
    statement (a hybrid engine's semantic side, for total_eligible): `Head.holding`.
    `revision`: the subject's revision as the request read it; with `eligible=None`, PostgreSQL
    keeps the postings read by it and reads only the terms it does not hold (`_postings`)."""
    if eligible is None:
        eligible_sql, eligible_params = None, ()
    else:
        eligible_sql, eligible_params = eligible.values("pk").query.sql_with_params()
    also = list(dict.fromkeys(also))
    with connection.cursor() as cur:
        stat: Stat | None
        if connection.vendor == "postgresql":
            # the revision this process's postings are kept by (None: read them all)
            kept = revision if eligible is None and cache_limit() > 0 else None
            subject = (str(connection.settings_dict["NAME"]), subject_pk)
            packed = {} if kept is None else cached_postings(subject, kept, terms)
            unread = [t for t in dict.fromkeys(terms) if t not in packed]
            if unread:
                found = hand.fetch_binary(  # a bytea's bytes, not its hex text
                    _postings_sql(eligible_sql, len(unread)),
                    [*unread, space_id, subject_pk, *eligible_params],
                )
                read = {term: bytes(p or b"") for term, p in found}
                if kept is not None:
                    keep_postings(subject, kept, read)
                packed.update(read)
            rows, stat, holding = _candidates(terms, packed, k, also)
        else:
            cur.execute(
                _sql(eligible_sql, len(terms), len(also)),
                [*terms, space_id, subject_pk, *terms, *eligible_params, max(k, 1) - 1, *also],
            )
            rows = cur.fetchall()
            width = len(terms)
            stat = None
            if rows:
                n, tl, newest, *dfs = rows[0][3 + width : 3 + width + 3 + width]
                stat = (int(n), int(tl), int(newest), [int(c or 0) for c in dfs])
            holding = frozenset(row[0] for row in rows).intersection(also)
            if also:  # the rows that came back only as `also` are not the head's
                rows = [row[:-1] for row in rows if row[-1]]
            rows = [row[: 3 + width] for row in rows]
        if stat is None:
            return Head(0, [], {})
        # The head's record ids (for the tie-break by record_id) in a statement of their own:
        # joined into the one above, the planner cannot know how few rows the cut keeps, and
        # its estimate could pick a scan of the subject's records or cross PostgreSQL's JIT
        # threshold (a JIT compile costs ~0.8 s).
        known = known or {}
        record_ids = {row[0]: known[row[0]] for row in rows if row[0] in known}
        pks = [row[0] for row in rows if row[0] not in record_ids]
        if pks:
            record = connection.ops.quote_name(Record._meta.db_table)
            sql, params = reads.by_pks(record, "TRUE", space_id, pks)
            cur.execute(f"SELECT r.id, r.record_id FROM {sql}", params)  # noqa: S608
            record_ids.update(cur.fetchall())
    n, tl, newest, dfs = stat
    width = len(terms)
    df = {term: count for term, count in zip(terms, dfs, strict=True) if count}
    docs: dict[int, tuple[str, int, int, list[tuple[str, int]]]] = {}
    for pk, dl, cms, *tfs in rows:
        counts = [(t, int(tf)) for t, tf in zip(terms, tfs[:width], strict=True) if tf is not None]
        docs[pk] = (record_ids[pk], int(dl), int(cms), counts)
    stats = lexical.Stats(n, tl, df, newest)
    rels = {
        pk: lexical.relevance(sorted(counts), dl, stats) for pk, (_, dl, _, counts) in docs.items()
    }
    best = max(rels.values())
    ranked = sorted(
        (
            Ranked(record_id, lexical.score(rels[pk], best, cms, newest))
            for pk, (record_id, _, cms, _) in docs.items()
        ),
        key=lambda r: (-r.score, r.record_id),
    )
    return Head(n, ranked, {record_id: pk for pk, (record_id, *_) in docs.items()}, holding)
