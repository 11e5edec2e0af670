"""The reads recall engines rank from (memory.services.recall_engines): the eligible rows as
engine documents, the newest head of an empty query, the term-row candidates of engine/2 under a
cognition filter, and the stored vectors of a subject. The engine/2 head in SQL is memory.selectors.lexical.

The statements a hybrid recall runs on every call are written by hand (`holding_any`,
`live_records`, `vector_marker`): their shape never changes, and the ORM's compilation of each
cost about as much as the statement itself (tests/memory/recall/test_recall_statements.py proves
each answers what the ORM query it replaced answers)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from memory import rows as hand
from memory.engine import rank
from memory.models import Record, RecordEmbedding, RecordTerm, Subject, VectorGeneration
from memory.selectors.selection import ReadFilter, matching

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def ms(value: datetime) -> int:
    return (value - EPOCH) // timedelta(milliseconds=1)


def docs(qs: QuerySet[Record], flt: ReadFilter, with_text: bool) -> dict[int, rank.Doc]:
    """The eligible rows as engine documents, keyed by pk. With a cognition filter the content is
    read too, and the engine's matcher decides."""
    if flt.cognition is None and with_text:
        rows = qs.values_list("pk", "record_id", "created_at", "text")
        return {pk: rank.Doc(rid, ms(at), text) for pk, rid, at, text in rows}
    if flt.cognition is None:
        plain = qs.values_list("pk", "record_id", "created_at")
        return {pk: rank.Doc(rid, ms(at), "") for pk, rid, at in plain}
    records = matching(qs.only("record_id", "created_at", "text", "content"), flt)
    return {
        r.pk: rank.Doc(r.record_id, ms(r.created_at), r.text if with_text else "") for r in records
    }


def newest_head(
    qs: QuerySet[Record], flt: ReadFilter, max_records: int
) -> tuple[dict[int, rank.Doc], int]:
    """Empty query without a cognition filter: the count and just enough of the newest rows
    (every row tied with the last one of the head, so the tie-break by record_id is the
    engine's, not the database collation's)."""
    total = qs.count()
    boundary = list(
        qs.order_by("-created_at").values_list("created_at", flat=True)[
            max_records - 1 : max_records
        ]
    )
    head = qs.filter(created_at__gte=boundary[0]) if boundary else qs
    return docs(head, flt, with_text=False), total


def term_holders(subject: Subject, terms: list[str]) -> QuerySet[RecordTerm, Any]:
    """The pks of the subject's records holding any of the terms (a subquery)."""
    return RecordTerm.objects.filter(
        space_id=subject.space_id, subject=subject, term__in=terms
    ).values("record_id")


def _marks(n: int) -> str:
    return ", ".join(["%s"] * n)


def holding_any(space_id: str, pks: Iterable[int], terms: list[str]) -> set[int]:
    """Which of the records `pks` (of the space) hold any of the terms (one range of the term
    rows' unique index per record)."""
    pks = list(pks)
    if not pks or not terms:
        return set()
    table = connection.ops.quote_name(RecordTerm._meta.db_table)
    found = hand.fetch(
        f"SELECT DISTINCT record_id FROM {table} WHERE space_id = %s"  # noqa: S608
        f" AND record_id IN ({_marks(len(pks))}) AND term IN ({_marks(len(terms))})",
        [space_id, *pks, *terms],
    )
    return {pk for (pk,) in found}


def live_records(space_id: str, pks: list[int]) -> dict[int, Record]:
    """pk → the record, of the records `pks` of the space that are live (not tombstoned): what
    `Record.objects.filter(space_id=…, deleted_at__isnull=True).in_bulk(pks)` answers, the same
    instances field for field."""
    if not pks:
        return {}
    cols = hand.columns(Record, "r")
    sql, params = by_pks(cols.table, "r.deleted_at IS NULL", space_id, pks)
    found = hand.fetch(f"SELECT {cols.sql} FROM {sql}", params)  # noqa: S608
    return {record.pk: record for record in map(cols.build, found)}


def by_pks(table: str, where: str, space_id: str, pks: list[int]) -> tuple[str, list[Any]]:
    """A FROM clause (and its parameters) of the rows `pks` of a space's `table` (aliased `r`)
    that satisfy `where`. On PostgreSQL each pk is a lookup of its own (a LATERAL subquery per
    pk, OFFSET 0 keeping it from being flattened): with `id IN (…)` beside `space_id = …`, a
    never-analyzed table was planned as a read of the whole space's rows through the space_id
    index, filtered by id (issue 49)."""
    if connection.vendor == "postgresql":
        values = ", ".join(["(CAST(%s AS BIGINT))"] * len(pks))
        return (
            f"(VALUES {values}) AS q(id) CROSS JOIN LATERAL (SELECT r.* FROM {table} r"  # noqa: S608
            f" WHERE r.id = q.id AND r.space_id = %s AND {where} OFFSET 0) r",
            [*pks, space_id],
        )
    return (
        f"{table} r WHERE r.space_id = %s AND {where} AND r.id IN ({_marks(len(pks))})",  # noqa: S608
        [space_id, *pks],
    )


def eligible_pks(
    eligible: QuerySet[Record], flt: ReadFilter, ids: list[str]
) -> list[tuple[str, int]]:
    """(record_id, pk) of the records among `ids` that are in `eligible` (authorization ∩
    filters, the cognition filter decided here)."""
    qs = eligible.filter(record_id__in=ids)
    if flt.cognition is None:
        return list(qs.values_list("record_id", "pk"))
    return [(r.record_id, r.pk) for r in matching(qs.only("record_id", "content"), flt)]


def vector_marker(subject: Subject) -> int:
    """The subject's vector generation (memory.models.VectorGeneration: it moves on every store
    and erasure of the subject's vectors; 0 before the first), one probe of its unique index."""
    table = connection.ops.quote_name(VectorGeneration._meta.db_table)
    found = hand.fetch(
        f"SELECT generation FROM {table} WHERE subject_id = %s AND space_id = %s",  # noqa: S608
        [subject.pk, subject.space_id],
    )
    return found[0][0] if found else 0


def live_revisions(subject: Subject) -> list[tuple[int, str, int]]:
    """(pk, record_id, revision) of the subject's live records: one table, read through an
    index on the subject (no join for a planner to misjudge, issue 49)."""
    table = connection.ops.quote_name(Record._meta.db_table)
    return hand.fetch(
        f"SELECT id, record_id, revision FROM {table}"  # noqa: S608
        " WHERE subject_id = %s AND space_id = %s AND deleted_at IS NULL",
        [subject.pk, subject.space_id],
    )


def live_revision_numbers(subject: Subject) -> dict[int, int]:
    """pk → revision of the subject's live records: what `live_revisions` reads without the
    record ids (the vector cache compares them with what it holds to find the rows a write
    changed; a new record's id is read with its vector, `current_vectors`). From the index
    `record_live_revisions` alone; on PostgreSQL packed in one bytea (12 bytes a record) and
    unpacked by numpy, not one Python tuple per row."""
    table = connection.ops.quote_name(Record._meta.db_table)
    where = " WHERE subject_id = %s AND space_id = %s AND deleted_at IS NULL"
    params = [subject.pk, subject.space_id]
    if connection.vendor != "postgresql":
        return dict(hand.fetch(f"SELECT id, revision FROM {table}{where}", params))  # noqa: S608
    import numpy as np

    pack = "int8send(CAST(id AS BIGINT)) || int4send(CAST(revision AS INTEGER))"
    sql = f"SELECT string_agg({pack}, CAST('' AS BYTEA)) FROM {table}{where}"  # noqa: S608
    ((packed,),) = hand.fetch_binary(sql, params)
    pairs = np.frombuffer(packed or b"", np.dtype([("id", ">i8"), ("revision", ">i4")]))
    return dict(zip(pairs["id"].tolist(), pairs["revision"].tolist(), strict=True))


def current_vectors(
    space_id: str, pks: list[int], model_id: str, dim: int
) -> list[tuple[int, str, bytes]]:
    """(pk, record_id, vector bytes) of those of the live records `pks` of the space that have a
    vector of the model and dimension for their current revision: one probe of
    `record_embedding_unique` per record (on PostgreSQL each pk a lookup of its own, as
    `by_pks`)."""
    if not pks:
        return []
    records = connection.ops.quote_name(Record._meta.db_table)
    vectors = connection.ops.quote_name(RecordEmbedding._meta.db_table)
    match = (
        "e.record_id = r.id AND e.revision = r.revision AND e.model_id = %s AND e.space_id = %s"
        " AND e.dim = %s"
    )
    if connection.vendor == "postgresql":
        values = ", ".join(["(CAST(%s AS BIGINT))"] * len(pks))
        sql = (
            f"SELECT r.id, r.record_id, e.vector FROM (VALUES {values}) AS q(id)"  # noqa: S608
            f" CROSS JOIN LATERAL (SELECT r.id, r.record_id, r.revision FROM {records} r"
            " WHERE r.id = q.id AND r.space_id = %s AND r.deleted_at IS NULL OFFSET 0) r"
            f" JOIN {vectors} e ON {match}"
        )
        params: list[Any] = [*pks, space_id, model_id, space_id, dim]
    else:
        sql = (
            f"SELECT r.id, r.record_id, e.vector FROM {records} r JOIN {vectors} e"  # noqa: S608
            f" ON {match} WHERE r.space_id = %s AND r.deleted_at IS NULL"
            f" AND r.id IN ({_marks(len(pks))})"
        )
        params = [model_id, space_id, dim, space_id, *pks]
    return [(pk, record_id, bytes(blob)) for pk, record_id, blob in hand.fetch_binary(sql, params)]


def stored_vectors(
    subject: Subject, model_id: str, dim: int, *, with_vectors: bool = True, from_id: int = 0
) -> list[tuple[Any, ...]]:
    """(vector id, record pk, revision, vector bytes or None) of the subject's stored vectors
    of a model and dimension `dim` (never another: a matrix holds one dimension) whose id is at
    least `from_id` (one range of `record_embedding_subject_space`;
    `with_vectors=False`: the vectors themselves are not read). Every revision's vector, not
    only the current one: the caller matches them with `live_revisions`.

    Issue 49: the join of vectors to records by revision, read through a server-side cursor,
    was planned on never-analyzed tables as a nested loop over the subject's records scanning
    every vector of the subject for each (20,000 × 20,000 rows). Two single-table statements
    joined in Python have no join to misplan, and a plain fetch no first-rows cursor plan: every
    row is read anyway, and the whole result is held as the matrix."""
    table = connection.ops.quote_name(RecordEmbedding._meta.db_table)
    vector = "vector" if with_vectors else "NULL"
    rows = hand.fetch_binary(  # each vector's bytes, not its hex text (3× faster)
        f"SELECT id, record_id, revision, {vector} FROM {table}"  # noqa: S608
        " WHERE subject_id = %s AND space_id = %s AND id >= %s AND model_id = %s AND dim = %s",
        [subject.pk, subject.space_id, from_id, model_id, dim],
    )
    return rows
