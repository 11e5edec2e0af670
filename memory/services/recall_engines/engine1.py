"""engine/1 (docs/recall.md): BM25 over exact tokens, read and scored in Python. The database only
narrows (PostgreSQL: the GIN-indexed lexeme match), the engine ranks every match. No derived
copy of its own: PostgreSQL's index is an expression index over Record.text, kept while engine/1 or
hybrid/1 is the configured engine (memory.services.recall_engines.lexeme_index); without it the
same match is evaluated per eligible record, so the answers are the same."""

from __future__ import annotations

from django.db import connection

from memory.engine import rank
from memory.selectors import recall as reads
from memory.services.recall_engines.base import Engine, Ranking, RecallQuery
from memory.services.recall_engines.registry import register


def lexical_ranking(q: RecallQuery) -> Ranking:
    """engine/1's ranking of the eligible records (the lexical side of hybrid/1 too)."""
    qs = q.eligible
    terms = rank.query_terms(q.text)
    total: int | None
    if not terms and q.flt.cognition is None:
        docs, total = reads.newest_head(qs, q.flt, q.max_records)
    else:
        if terms and connection.vendor == "postgresql":
            qs = qs.filter(reads.lexical_q(terms))
        docs = reads.docs(qs, q.flt, with_text=bool(terms))
        total = None
    ranked = rank.rank(list(docs.values()), q.text)
    pks = {d.record_id: pk for pk, d in docs.items()}
    return Ranking(ranked, pks, len(ranked) if total is None else total)


ENGINE = register(
    Engine(
        version="engine/1",
        rank=lexical_ranking,
        summary="BM25 over exact tokens, no stop words, no stemming, scored in Python",
        lexeme_index=True,
        # None of its own: the registry keeps every registered engine's copies erased with
        # their content, and the always-written term rows complete, whatever is configured.
    )
)
