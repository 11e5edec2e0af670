"""The statements a recall runs on every call, written by hand in memory.selectors.recall (their
shape never changes; the ORM's compilation of each cost about as much as running it), answer
what the ORM queries they replaced answer: the same rows, the same instances field for field."""

from __future__ import annotations

import pytest

from memory.embedding import embed
from memory.models import Record, RecordTerm, Subject
from memory.selectors import recall as reads
from memory.services import hybrid_store

pytestmark = pytest.mark.django_db


def values(obj) -> list:
    return [getattr(obj, f.attname) for f in obj._meta.concrete_fields]


@pytest.fixture
def records(make_record, space):
    made = [
        make_record("Melanie ran a charity race"),
        make_record("Caroline went to a support group", subject_id="u2"),
        make_record("a race on the beach", shared=True, cognition=[{"kind": "fact"}]),
        make_record("nothing in common here"),
        make_record("a race that was erased", deleted=True),
    ]
    return made


def test_holding_any_is_the_orm_set_of_records_holding_a_term(records, space):
    pks = [r.pk for r in records]
    for terms in (["race"], ["melani", "group"], ["absent"], ["race", "beach", "charity"]):
        orm = set(
            RecordTerm.objects.filter(
                space_id=space.space_id, record_id__in=pks, term__in=terms
            ).values_list("record_id", flat=True)
        )
        assert reads.holding_any(space.space_id, pks, terms) == orm
        assert reads.holding_any("another-space", pks, terms) == set()
    assert reads.holding_any(space.space_id, pks, ["race"]) == {records[0].pk, records[2].pk}
    assert reads.holding_any(space.space_id, [], ["race"]) == set()


def test_live_records_are_the_orm_in_bulk_field_for_field(records, space):
    pks = [r.pk for r in records]
    orm = Record.objects.filter(space_id=space.space_id, deleted_at__isnull=True).in_bulk(pks)
    found = reads.live_records(space.space_id, pks)
    assert sorted(found) == sorted(orm) == sorted(pks[:4])
    for pk, record in found.items():
        assert values(record) == values(orm[pk])
        assert record.to_wire("u1") == orm[pk].to_wire("u1")
    assert reads.live_records("another-space", pks) == {}
    assert reads.live_records(space.space_id, []) == {}


def test_the_vector_generation_moves_with_every_store_and_erasure_of_a_subjects_vectors(
    records, space
):
    """The vector cache's marker: 0 before any vector, then one more for every statement that
    stores vectors of the subject, ERASED more for one that erases them, and only of that
    subject."""
    u1 = Subject.objects.get(space=space, subject_id="u1")
    u2 = Subject.objects.get(space=space, subject_id="u2")
    unit = [1.0] + [0.0] * (embed.DIM - 1)
    assert reads.vector_marker(u1) == reads.vector_marker(u2) == 0
    hybrid_store.store_vectors([records[0], records[3]], [unit, unit], "m")
    assert (reads.vector_marker(u1), reads.vector_marker(u2)) == (1, 0)
    hybrid_store.store_vectors([records[1], records[2]], [unit, unit], "m")  # both subjects
    assert (reads.vector_marker(u1), reads.vector_marker(u2)) == (2, 1)
    hybrid_store.erase_embeddings([records[3]])  # an erasure: ERASED steps (the cache checks)
    assert (reads.vector_marker(u1), reads.vector_marker(u2)) == (2 + hybrid_store.ERASED, 1)


def test_the_lexical_head_with_record_ids_known_asks_only_for_the_others(records, space):
    """A hybrid engine hands the lexical head the record ids of its cached vectors: the head is
    the same, and only the ids it was not given are read (none: no statement)."""
    from django.db import connection

    from memory.selectors import lexical

    u1 = Subject.objects.get(space=space, subject_id="u1")
    terms = ["race", "melani", "common"]
    ids = {r.pk: r.record_id for r in records}
    asked: list[str] = []

    def capture(execute, sql, params, many, context):
        asked.append(sql)
        return execute(sql, params, many, context)

    plain = lexical.head(space.space_id, u1.pk, terms, None, 10)
    assert len(plain.ranked) == 3
    for known, statements in (
        (None, 2),
        ({}, 2),
        (ids, 1),
        ({records[0].pk: ids[records[0].pk]}, 2),
    ):
        asked.clear()
        with connection.execute_wrapper(capture):
            assert lexical.head(space.space_id, u1.pk, terms, None, 10, known) == plain
        assert len(asked) == statements


@pytest.mark.parametrize("narrowed", [False, True])
def test_the_lexical_head_says_which_of_also_hold_a_term_and_is_the_same_head(
    records, space, make_record, narrowed
):
    """A hybrid engine asks, in the ranking statement, which of its semantic side's records are
    candidates (hold a query term, eligible): what holding_any answers for the eligible ones,
    with the head unchanged (the rows that come back only for that are not the head's)."""
    from memory.selectors import lexical

    more = [make_record(f"race number {i}", context_id="c2" if i % 2 else "c1") for i in range(12)]
    u1 = Subject.objects.get(space=space, subject_id="u1")
    eligible = Record.objects.filter(space=space, subject=u1, deleted_at__isnull=True)
    if narrowed:
        eligible = eligible.filter(placement_context_id="c1")
    every = [r for r in [*records, *more] if r.subject_id == u1.pk]
    allowed = set(eligible.values_list("pk", flat=True))
    also = [r.pk for r in every if r.pk in allowed]
    terms = ["race", "common"]
    scope = eligible if narrowed else None
    for k in (1, 3, 20):
        plain = lexical.head(space.space_id, u1.pk, terms, scope, k)
        asked = lexical.head(space.space_id, u1.pk, terms, scope, k, also=also)
        assert (asked.total, asked.ranked, asked.pks) == (plain.total, plain.ranked, plain.pks)
        assert plain.holding == frozenset()
        assert asked.holding == reads.holding_any(space.space_id, also, terms)
        assert len(plain.ranked) < len(asked.holding) or k == 20


def test_the_lexical_head_reads_wide_keys_counts_and_times_whole(make_record, space):
    """PostgreSQL hands the head its postings packed (a record's pk and created_ms as 8 bytes,
    tf and length as 4): a pk past 2**32, a tf past 2**8 and a length past 2**16 come back whole,
    and the head is the oracle's (memory.engine.lexical.rank over the same texts)."""
    from django.db import connection

    from memory.engine import lexical as policy
    from memory.engine import lexicon
    from memory.engine.rank import Doc
    from memory.selectors import lexical

    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute(
                "SELECT setval(pg_get_serial_sequence(%s, 'id'), %s)",
                [Record._meta.db_table, 2**33 + 5],
            )
    texts = [
        "river " * 300 + "stone",
        "river stone " + "word " * 70000,
        "a quiet river",
        "stone wall",
    ]
    made = [make_record(text) for text in texts]
    assert connection.vendor != "postgresql" or min(r.pk for r in made) > 2**33
    u1 = Subject.objects.get(space=space, subject_id="u1")
    terms = lexicon.query_terms("river stone")
    got = lexical.head(space.space_id, u1.pk, terms, None, 10)
    rows = {r.pk: r for r in Record.objects.filter(pk__in=[r.pk for r in made])}
    docs = [Doc(r.record_id, reads.ms(r.created_at), r.content["text"]) for r in rows.values()]
    assert got.total == 4
    assert got.ranked == policy.rank(docs, "river stone")
    assert got.pks == {r.record_id: r.pk for r in rows.values()}
    assert RecordTerm.objects.get(record=made[0], term="river").tf == 300
    assert RecordTerm.objects.get(record=made[1], term="river").length > 2**16
