"""engine/2 in the database: the top of the BM25 ranking (memory.engine.lexical) computed in SQL
from the stored term rows (memory.models.RecordTerm), on PostgreSQL and SQLite alike.

One statement: the query terms' postings of the caller's eligible records (an index range per
term on `record_term_lookup`, semi-joined with the eligible set unless the caller may read every
live record of the subject, the common case), aggregated into the candidate
statistics (N, Σ|d|, df, newest), scored, and cut to the rows that can be in the head of the
ranking. Only those rows' postings come back. Python then recomputes their scores with the
policy's own functions (`lexical.relevance`, `lexical.score`), so the answer is the oracle's to
the last bit: the SQL score only chooses which rows to bring back, with a margin of 2e-6 (twice
the rounding step, a million times any float error) below the head's last score, plus the rows
whose relevance is the best (the normalizer), so a tie or a rounding boundary is settled by
Python, and ties by record_id in code-point order, never by a database collation."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection
from django.db.models import QuerySet

from memory.engine import lexical
from memory.engine.rank import HALF_LIFE_MS, Ranked
from memory.models import Record, RecordTerm

MARGIN = 2e-6


@dataclass(frozen=True)
class Head:
    total: int  # N: the eligible records holding a query term (total_eligible)
    ranked: list[Ranked]  # the head of the ranking (at least `k` entries when there are)
    pks: dict[str, int]  # record_id -> pk of the ranked rows


def _f(value: object) -> str:
    """A double-precision SQL value (PostgreSQL would compute a bare `0.5` in slow `numeric`)."""
    return f"CAST({value} AS DOUBLE PRECISION)"


def _sql(eligible_sql: str | None, n_terms: int) -> str:
    term = connection.ops.quote_name(RecordTerm._meta.db_table)
    record = connection.ops.quote_name(Record._meta.db_table)
    marks = ", ".join(["%s"] * n_terms)
    eligible = "" if eligible_sql is None else f" AND t.record_id IN ({eligible_sql})"
    k1, b = _f(repr(lexical.K1)), _f(repr(lexical.B))
    one, half = _f("1"), _f("0.5")
    # Only quoted identifiers, the policy's numeric constants and placeholders are formatted in;
    # every value (subject, terms, the eligible set's parameters, the cut) is a bound parameter.
    return f"""
WITH p AS (
  SELECT t.record_id AS r, t.term AS term, {_f("t.tf")} AS tf, t.length AS dl,
    t.created_ms AS cms
  FROM {term} t
  WHERE t.space_id = %s AND t.subject_id = %s AND t.term IN ({marks}){eligible}
),
d AS (SELECT r, MAX(dl) AS dl, MAX(cms) AS cms FROM p GROUP BY r),
s AS (SELECT {_f("COUNT(*)")} AS n, {_f("SUM(dl)")} AS tl, MAX(cms) AS newest FROM d),
f AS (SELECT term, {_f("COUNT(*)")} AS df FROM p GROUP BY term),
rel AS (
  SELECT p.r AS r, SUM(
    LN({one} + (s.n - f.df + {half}) / (f.df + {half})) * p.tf * ({k1} + {one})
    / (p.tf + {k1} * ({one} - {b} + {b} * p.dl * s.n / s.tl))
  ) AS rel
  FROM p JOIN f ON f.term = p.term CROSS JOIN s GROUP BY p.r
),
sc AS (
  SELECT rel.r AS r, rel.rel AS rel,
    {_f(repr(lexical.RELEVANCE_WEIGHT))} * rel.rel / MAX(rel.rel) OVER ()
    + {_f(repr(lexical.RECENCY_WEIGHT))}
      * POWER({half}, (s.newest - d.cms) / {_f(repr(float(HALF_LIFE_MS)))})
    AS score
  FROM rel JOIN d ON d.r = rel.r CROSS JOIN s
),
cut AS (SELECT score FROM sc ORDER BY score DESC LIMIT 1 OFFSET %s),
best AS (SELECT MAX(rel) AS rel FROM sc),
top AS (
  SELECT r FROM sc
  WHERE score >= COALESCE((SELECT score FROM cut), {_f("-1")}) - {_f(repr(MARGIN))}
     OR rel >= (SELECT rel FROM best) * {_f("0.999999999")}
)
SELECT p.r, rec.record_id, p.term, p.tf, p.dl, p.cms, s.n, s.tl, s.newest, f.df
FROM p JOIN top ON top.r = p.r JOIN f ON f.term = p.term
JOIN {record} rec ON rec.id = p.r AND rec.space_id = %s CROSS JOIN s
"""  # noqa: S608


def head(
    space_id: str, subject_pk: int, terms: list[str], eligible: QuerySet | None, k: int
) -> Head:
    """The head of the engine/2 ranking of `eligible` (authorized ∩ filters, no cognition
    filter) for the query `terms`: exact scores for every record that can rank in the top `k`.
    `eligible=None`: every live record of the subject (`selection.whole_subject`) — term rows
    exist only for live records, so the term index range alone is the candidate set."""
    if eligible is None:
        eligible_sql, eligible_params = None, ()
    else:
        eligible_sql, eligible_params = eligible.values("pk").query.sql_with_params()
    with connection.cursor() as cur:
        cur.execute(
            _sql(eligible_sql, len(terms)),
            [space_id, subject_pk, *terms, *eligible_params, max(k, 1) - 1, space_id],
        )
        rows = cur.fetchall()
    if not rows:
        return Head(0, [], {})
    n, tl, newest = int(rows[0][6]), int(rows[0][7]), int(rows[0][8])
    docs: dict[int, tuple[str, int, int, list[tuple[str, int]]]] = {}
    df: dict[str, int] = {}
    for pk, record_id, term, tf, dl, cms, *_, term_df in rows:
        df[term] = int(term_df)
        doc = docs.setdefault(pk, (record_id, int(dl), int(cms), []))
        doc[3].append((term, int(tf)))
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
    return Head(n, ranked, {record_id: pk for pk, (record_id, *_) in docs.items()})
