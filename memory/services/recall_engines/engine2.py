"""engine/2 (docs/recall.md): BM25 over stemmed, stop-word-free tokens, the head of the ranking
computed in SQL from the stored term rows (memory.selectors.lexical). With a cognition filter
(which only Python can decide exactly) the candidates are read and ranked by the policy function
itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memory.engine import lexical, lexicon, rank
from memory.recall_contract import Engine, Ranking, RecallQuery, register
from memory.selectors import lexical as lexical_store
from memory.selectors import recall as reads
from memory.services import term_store


def lexical_head(q: RecallQuery, depth: int, known: Mapping[int, str] | None = None) -> Ranking:
    """The engine/2 ranking of the eligible records, exact for at least its first `depth`
    records (all of them with a cognition filter); an empty query is newest first. `known`:
    pk → record_id of records already read (lexical.head)."""
    return lexical_head_holding(q, depth, known)[0]


def lexical_head_holding(
    q: RecallQuery, depth: int, known: Mapping[int, str] | None = None, also: Sequence[int] = ()
) -> tuple[Ranking, frozenset[int] | None]:
    """`lexical_head`, and which of the eligible records `also` hold a query term, when the
    ranking statement could say it (None: with a cognition filter, or an empty query)."""
    terms = lexicon.query_terms(q.text)
    if not terms:
        # An empty (or stop-words-only) query: newest first (memory.engine.rank).
        if q.flt.cognition is None:
            docs, total = reads.newest_head(q.eligible, q.flt, q.max_records)
        else:
            docs = reads.docs(q.eligible, q.flt, with_text=False)
            total = len(docs)
        ranked = rank.rank(list(docs.values()), "")
        return Ranking(ranked, {d.record_id: pk for pk, d in docs.items()}, total), None
    if q.flt.cognition is None:
        top = lexical_store.head(
            q.subject.space_id,
            q.subject.pk,
            terms,
            None if q.whole else q.eligible,
            depth,
            known,
            also,
            q.subject.revision,
        )
        return Ranking(top.ranked, dict(top.pks), top.total), top.holding
    held = reads.term_holders(q.subject, terms)
    docs = reads.docs(q.eligible.filter(pk__in=held), q.flt, with_text=True)
    ranked = lexical.rank(list(docs.values()), q.text)
    return Ranking(ranked, {d.record_id: pk for pk, d in docs.items()}, len(ranked)), None


def engine2_ranking(q: RecallQuery) -> Ranking:
    return lexical_head(q, q.max_records)


ENGINE = register(
    Engine(
        version="engine/2",
        rank=engine2_ranking,
        summary="BM25 over stemmed tokens without stop words, scored in SQL from term rows",
        copies=(term_store.TERMS,),
    )
)
