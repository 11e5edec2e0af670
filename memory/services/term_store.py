"""Storage side of the engine/2 term statistics (memory.models.RecordTerm): a derived copy of
record text, kept in step by the derived-copy hooks every content write path calls (records
create/update, review, delete, import activation), inside the write's own transaction.

Declared by engine/2 and hybrid/6 as their copy `TERMS`, written whatever the engine setting
(`always`), so switching to either never finds a record without its rows. Each write touches only its own records' rows (delete, then insert):
no per-subject counter is shared between writers, so concurrent writes can neither lose an
update nor deadlock on it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection

from memory import statements
from memory.engine import lexicon
from memory.models import Record, RecordTerm, Space, Subject
from memory.models.scoped import by_space
from memory.recall_contract import DerivedCopy, Insert, LoadedRecord

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_ms(value: datetime) -> int:
    return (value - EPOCH) // timedelta(milliseconds=1)


def term_rows(record: Record) -> list[RecordTerm]:
    """The rows of a record's current text (none for a tombstone or a text without tokens)."""
    if record.deleted_at is not None or not record.text:
        return []
    toks = lexicon.tokens(record.text)
    length, created = len(toks), epoch_ms(record.created_at)
    return [
        RecordTerm(
            space_id=record.space_id,
            record_id=record.pk,
            subject_id=record.subject_id,
            term=term,
            tf=tf,
            length=length,
            created_ms=created,
        )
        for term, tf in sorted(Counter(toks).items())
    ]


def term_values(text: str, created_at: datetime) -> list[tuple[str, int, int, int]]:
    """(term, tf, length, created_ms) of each row `term_rows` makes for a live record with this
    text and creation time, without building model instances (bulk loaders: import activation
    COPYs these)."""
    if not text:
        return []
    toks = lexicon.tokens(text)
    length, created = len(toks), epoch_ms(created_at)
    return [(term, tf, length, created) for term, tf in sorted(Counter(toks).items())]


def term_columns(text: str, created_at: datetime) -> list[list[Any]]:
    """`term_values` as one list per column (term, tf, length, created_ms): the arrays of a new
    record's term rows in its own statement (statements.record_with_revision)."""
    values = term_values(text, created_at)
    return [list(column) for column in zip(*values, strict=True)] if values else [[], [], [], []]


def write_terms(records: Iterable[Record]) -> None:
    """Derived-copy writer: replace the records' rows with those of their current text."""
    records = list(records)
    if not records:
        return
    if any(r.revision > 1 for r in records):
        erase_terms(records)
    if connection.vendor != "postgresql":
        rows = [row for r in records for row in term_rows(r)]
        RecordTerm.objects.bulk_create(rows, batch_size=2000)
        return
    # the same rows as term_rows, as one statement of fixed shape (statements.unnest_insert):
    # the ORM's bulk_create compiled one placeholder per value on every write
    columns: list[list[Any]] = [[] for _ in TERM_FIELDS]
    for r in records:
        if r.deleted_at is not None:
            continue
        for term in term_values(r.text, r.created_at):
            for column, value in zip(columns, (r.space_id, r.pk, r.subject_id, *term), strict=True):
                column.append(value)
    if columns[0]:
        statements.execute(statements.unnest_insert(RecordTerm, tuple(TERM_FIELDS)), columns)


def erase_terms(records: Iterable[Record]) -> None:
    """Derived-copy eraser: the records' rows go with their content."""
    for space_id, rows in by_space(records).items():
        RecordTerm.objects.filter(space_id=space_id, record_id__in=[r.pk for r in rows]).delete()


TERM_FIELDS = ["space_id", "record_id", "subject_id", "term", "tf", "length", "created_ms"]


def bulk_write_terms(records: list[LoadedRecord], insert: Insert) -> None:
    """Bulk writer (import activation): the rows `term_rows` makes, set-wise."""
    insert(  # a generator: the text is tokenized while the COPY streams the rows before it
        RecordTerm,
        TERM_FIELDS,
        (
            (r.space_pk, r.pk, r.subject_pk, *term)
            for r in records
            if r.live
            for term in term_values(r.text, r.created_at)
        ),
    )


def erase_space_terms(space: Space) -> None:
    """Whole-space eraser (import activation's clear): a plain `fk IN (subquery)` DELETE."""
    qs = RecordTerm.objects.filter(
        space_id=space.pk, subject_id__in=Subject.objects.filter(space=space).values("pk")
    )  # the subject range reads the lookup index; the space names the shard
    qs._raw_delete(qs.db)


TERMS = DerivedCopy(
    name="terms",
    write=write_terms,
    bulk_write=bulk_write_terms,
    erase=erase_terms,
    erase_space=erase_space_terms,
    tables=(RecordTerm,),
    always=True,  # written whatever the engine, so switching to engine/2 finds every record's rows
)
