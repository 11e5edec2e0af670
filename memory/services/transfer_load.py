"""Import activation's storage side: clear a space's memory objects and load verified export
objects into it, keeping every id, time, revision and tombstone (docs/protocol.md#ops). Used inside the
activation job's single transaction, so a fault anywhere leaves the space as it was.

Records — the bulk of a space — are written set-wise, BATCH at a time, with their derived rows:
the history row of their current revision, their term rows (memory.services.term_store) and,
under a hybrid engine, their place in the embedding backlog (memory.services.hybrid_store; the
worker embeds after COMMIT). On PostgreSQL each of those is one `COPY … FROM STDIN` per batch
(psycopg 3's `cursor.copy()`) with record ids taken from the table's sequence in one statement;
on SQLite `bulk_create`. Memory is bounded by the batch, not by the space. The rows are exactly
those the row-by-row write paths make (tests/memory/async/test_transfer_scale.py)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import DatabaseError, connection, models, transaction

from memory.models import (
    Candidate,
    ProfileDocument,
    Record,
    RecordRevision,
    Reflection,
    Space,
    Subject,
)
from memory.models.records import CONTEXT
from memory.models.reflections import filter_key
from memory.recall_contract import LoadedRecord
from memory.services import derived
from memory.services.recall_engines import registry
from memory.timeutil import parse

BATCH = 1000


def _raw_delete(qs: models.QuerySet[Any]) -> int:
    # QuerySet.delete() would load every row to cascade in Python; the order below already
    # removes dependants first, so a plain DELETE per table is exact.
    return qs._raw_delete(qs.db) or 0


def clear_space(space: Space) -> Counter[type[models.Model]]:
    """Erase the space's memory objects; returns the rows deleted per table (of the tables
    deleted from here; the derived copies' erasers count their own)."""
    # The recall engines' derived copies are erased set-wise by their own whole-space erasers;
    # any other registered eraser is called as the write paths call it.
    copies = registry.copies()
    others = [e for e in derived.ERASERS if e not in {c.erase for c in copies}]
    if others:
        records = Record.objects.filter(space=space).only("pk", "record_id")
        batch: list[Record] = []
        for r in records.iterator(chunk_size=BATCH):
            batch.append(r)
            if len(batch) == BATCH:
                for eraser in others:
                    eraser(batch)
                batch = []
        for eraser in others:
            eraser(batch)
    for copy in copies:
        copy.erase_space(space)
    # A plain `fk IN (subquery)` (not a join, which Django turns into `id IN (a self-join)`).
    record_pks = Record.objects.filter(space=space).values("pk")
    deleted: Counter[type[models.Model]] = Counter()
    deleted[RecordRevision] = _raw_delete(
        RecordRevision.objects.filter(space_id=space.pk, record_id__in=record_pks)
    )
    for model in (Reflection, ProfileDocument, Candidate, Record, Subject):
        deleted[model] = _raw_delete(model.objects.filter(space=space))
    return deleted


def _columns(model: type[models.Model], names: Sequence[str]) -> list[models.Field[Any, Any]]:
    fields = [model._meta.get_field(n) for n in names]
    assert all(isinstance(f, models.Field) for f in fields)  # concrete columns only
    return fields  # type: ignore[return-value]


def _next_ids(model: type[models.Model], n: int) -> list[int]:
    """n fresh primary keys from the table's own sequence (PostgreSQL), one statement."""
    table = model._meta.db_table
    with connection.cursor() as cur:
        cur.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [table, n],
        )
        return [row[0] for row in cur.fetchall()]


def insert_rows(
    model: type[models.Model], names: Sequence[str], rows: Iterable[tuple[Any, ...]]
) -> None:
    """Insert rows (tuples of the named fields' Python values, attnames for foreign keys) into
    the model's table: one COPY on PostgreSQL, bulk_create on other databases. No model
    validation or signals, as bulk_create. Inside `checked_once()` on PostgreSQL, the COPY skips
    the per-row foreign-key triggers and the keys it wrote are checked set-wise after it."""
    fields = _columns(model, names)
    if connection.vendor != "postgresql":
        attnames = [f.attname for f in fields]
        model._default_manager.bulk_create(
            [model(**dict(zip(attnames, row, strict=True))) for row in rows], batch_size=BATCH
        )
        return
    json_at = [i for i, f in enumerate(fields) if isinstance(f, models.JSONField)]
    table = connection.ops.quote_name(model._meta.db_table)
    columns = [f.column for f in fields]
    cols = ", ".join(connection.ops.quote_name(c) for c in columns)
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    checks = _bypass.get()
    keys = checks.keys_for(model._meta.db_table, columns) if checks is not None else None
    if keys is not None:
        _set_role(keys.role)
    with connection.cursor() as cur, cur.cursor.copy(f"COPY {table} ({cols}) FROM STDIN") as copy:
        for row in rows:
            if keys is not None:
                keys.see(row)
            if json_at:
                cells = list(row)
                for i in json_at:
                    cells[i] = None if cells[i] is None else dumps(cells[i])
                copy.write_row(cells)
            else:
                copy.write_row(row)
    if keys is not None:
        _set_role(ORIGIN)
        keys.check()


# --- foreign keys checked once per batch instead of once per row (PostgreSQL) --------------------
#
# Every table activation COPYs into has DEFERRABLE INITIALLY DEFERRED foreign keys; PostgreSQL
# checks them with one trigger call per row and key at COMMIT (the term rows alone are ~10 a
# record, two keys each): most of the activation's time. Inside `checked_once()`, each COPY
# runs with `session_replication_role = replica` (which skips those triggers, and only for
# that statement: the role goes back to `origin` right after it), while the keys the COPY
# writes are collected, distinct, as the rows stream; then one anti-join per foreign key
# finds any of them without its referenced row (in the activation's space, when the referenced
# table has a space_id), and raises DanglingReference, which fails the activation whole (the job's transaction rolls back; the import is `verified` again).
# This is exactly the check the triggers make (a row whose key has a NULL column is not
# checked, MATCH SIMPLE), set-wise: the constraints themselves stay, and every other
# statement of the transaction (the clear's deletes, subjects, candidates, the receipt) runs
# with the triggers as before. The referenced rows cannot go away between the check and the
# COMMIT: they are the space row (locked FOR UPDATE by the activation), and subjects and
# records written by this same transaction (invisible to anyone else until it commits; a
# delete of them inside it would still fire their triggers). Which keys a table has is read
# from the catalog (pg_constraint), composite keys included, so a key added later is checked
# too; a table with a key whose columns the COPY does not all write takes the triggers.
# Setting the role needs superuser or `GRANT SET ON PARAMETER session_replication_role`
# (PostgreSQL 15); without it `checked_once()` changes nothing: the triggers check every row.

ORIGIN, REPLICA = "origin", "replica"


class DanglingReference(Exception):  # noqa: N818 (reads as what it is)
    """A row the activation wrote names a row that does not exist (a bug: the verified bundle's
    references all resolve); the activation fails whole."""


def _set_role(role: str) -> None:
    with connection.cursor() as cur:
        cur.execute(f"SET LOCAL session_replication_role = {role}")


@dataclass(frozen=True)
class ForeignKey:
    name: str
    columns: tuple[str, ...]  # of the referencing table
    types: tuple[str, ...]  # their SQL types
    target: str  # referenced table
    target_columns: tuple[str, ...]
    target_scoped: bool  # the referenced table has a space_id column


_FOREIGN_KEYS: dict[str, list[ForeignKey]] = {}


def foreign_keys(table: str) -> list[ForeignKey]:
    """The table's foreign keys, from the catalog (cached per process: the schema is the
    migrations')."""
    if table not in _FOREIGN_KEYS:
        with connection.cursor() as cur:
            cur.execute(
                """
                SELECT c.conname, c.confrelid::regclass::text,
                       array(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
                             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n
                             ORDER BY k.i),
                       array(SELECT format_type(a.atttypid, a.atttypmod)
                             FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
                             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n
                             ORDER BY k.i),
                       array(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
                             JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n
                             ORDER BY k.i),
                       EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.confrelid
                               AND a.attname = 'space_id' AND NOT a.attisdropped)
                FROM pg_constraint c
                WHERE c.contype = 'f' AND c.conrelid = %s::regclass
                ORDER BY c.conname
                """,
                [connection.ops.quote_name(table)],
            )
            _FOREIGN_KEYS[table] = [
                ForeignKey(name, tuple(cols), tuple(types), target, tuple(target_cols), scoped)
                for name, target, cols, types, target_cols, scoped in cur.fetchall()
            ]
    return _FOREIGN_KEYS[table]


class BatchKeys:
    """The distinct keys one COPY writes, per foreign key of its table."""

    role = REPLICA

    def __init__(
        self,
        space_pk: str,
        table: str,
        keys: list[ForeignKey],
        positions: list[tuple[int, ...]],
    ) -> None:
        self.space_pk = space_pk
        self.table = table
        self.keys = keys
        self.single = [p[0] if len(p) == 1 else None for p in positions]
        self.positions = positions
        self.seen: list[set[Any]] = [set() for _ in keys]

    def see(self, row: Sequence[Any]) -> None:
        for i, at in enumerate(self.single):
            if at is not None:
                value = row[at]
                if value is not None:
                    self.seen[i].add(value)
            else:
                key = tuple(row[j] for j in self.positions[i])
                if None not in key:  # MATCH SIMPLE: a key with a NULL column is not checked
                    self.seen[i].add(key)

    def check(self) -> None:
        for fk, seen in zip(self.keys, self.seen, strict=True):
            if not seen:
                continue
            values = list(seen)
            if len(fk.columns) == 1:
                arrays = [values]
            else:
                arrays = [list(col) for col in zip(*values, strict=True)]
            qn = connection.ops.quote_name
            names = [f"k{i}" for i in range(len(fk.columns))]
            unnest = ", ".join(f"%s::{t}[]" for t in fk.types)
            match = " AND ".join(
                f"t.{qn(c)} = k.{n}" for c, n in zip(fk.target_columns, names, strict=True)
            )
            params: list[Any] = [*arrays]
            if fk.target_scoped:
                # The referenced row must be of the activation's space: stronger than the key
                # itself (true by construction), and the statement names its space (Citus).
                match = f't."space_id" = %s AND {match}'
                params.append(self.space_pk)
            # Each key looked up on its own (LATERAL … LIMIT 1: a parameterized probe, which
            # PostgreSQL plans by the referenced table's unique key), never an anti-join: on a
            # table nobody analyzed, a NOT EXISTS was planned as the space's rows, read once
            # through the space_id index and then filtered by id for every key — 1,000 × the
            # rows loaded so far, per batch (issue 49: a 200,000-record activation stalled at
            # ~70,000 after 20 min; tests/memory/recall/test_unanalyzed_plans.py).
            with connection.cursor() as cur:
                cur.execute(
                    f"SELECT 1 FROM unnest({unnest}) AS k({', '.join(names)}) "  # noqa: S608
                    f"LEFT JOIN LATERAL (SELECT 1 AS found FROM {fk.target} t WHERE {match} "
                    "LIMIT 1) f ON true WHERE f.found IS NULL LIMIT 1",
                    params,
                )
                if cur.fetchone() is not None:
                    raise DanglingReference(
                        f"A row written to {self.table} violates {fk.name}: activation failed."
                    )


class Checks:
    """The state of one `checked_once()`: the role may be set."""

    def __init__(self, space_pk: str) -> None:
        self.space_pk = space_pk

    def keys_for(self, table: str, columns: list[str]) -> BatchKeys | None:
        keys = foreign_keys(table)
        positions = []
        for fk in keys:
            if not all(c in columns for c in fk.columns):
                return None  # a key this COPY does not write whole: the triggers check it
            positions.append(tuple(columns.index(c) for c in fk.columns))
        return BatchKeys(self.space_pk, table, keys, positions)


_bypass: ContextVar[Checks | None] = ContextVar("transfer_load_bypass", default=None)


def may_bypass_triggers() -> bool:
    """Whether this connection may set session_replication_role (superuser, or the SET privilege
    on it). Asked inside a savepoint: a refused SET would abort the transaction."""
    if connection.vendor != "postgresql":
        return False
    try:
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute(f"SET LOCAL session_replication_role = {ORIGIN}")
    except DatabaseError:
        return False
    return True


@contextmanager
def checked_once(space: Space) -> Iterator[bool]:
    """Around the load into `space`: COPYs skip the per-row foreign-key triggers and check their
    keys set-wise (above), when the connection may. Yields whether it does."""
    checks = Checks(space.pk) if may_bypass_triggers() else None
    token = _bypass.set(checks)
    try:
        yield checks is not None
    finally:
        _bypass.reset(token)


RECORD_FIELDS = [
    "space_id",
    "subject_id",
    "record_id",
    "kind",
    "content",
    "text",
    "placement_scope",
    "placement_context_id",
    "prov_source",
    "prov_source_context_id",
    "prov_candidate_id",
    "prov_author_principal_id",
    "prov_reviewer_principal_id",
    "prov_captured_at",
    "prov_created_at",
    "revision",
    "created_at",
    "updated_at",
    "deleted_at",
    "deleted_by_principal_id",
    "delete_reason",
    "extensions",
]
REVISION_FIELDS = [
    "space_id",
    "record_id",
    "revision",
    "kind",
    "content",
    "placement_scope",
    "placement_context_id",
    "created_at",
]


# The form every export writes times in (memory.timeutil.iso): parsed by the C parser, to the
# same aware UTC datetime `parse` makes of it; any other form goes to `parse`.
_ISO_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def _time(value: str | None) -> datetime | None:
    if value is None:
        return None
    if _ISO_MS.fullmatch(value):
        return datetime.fromisoformat(value)
    return parse(value)


def _placement(p: dict[str, Any]) -> tuple[str, str | None]:
    return p["scope"], p.get("context_id") if p["scope"] == CONTEXT else None


class Loader:
    def __init__(self, space: Space) -> None:
        self.space = space
        self.subjects: dict[str, int] = {}
        # rows written per table (memory.services.table_stats decides what to ANALYZE)
        self.written: Counter[type[models.Model]] = Counter()
        self.pending: dict[str, list[Any]] = {
            t: [] for t in ("subject", "record", "candidate", "profile_document", "reflection")
        }

    def add(self, objects: list[dict[str, Any]]) -> None:
        for obj in objects:
            self.pending[obj["type"]].append(obj["data"])
            if len(self.pending[obj["type"]]) >= BATCH:
                self._flush(obj["type"])

    def flush(self) -> None:
        for kind in self.pending:
            self._flush(kind)

    def _insert(
        self, model: type[models.Model], names: Sequence[str], rows: Iterable[tuple[Any, ...]]
    ) -> None:
        """`insert_rows`, counting the rows into `written`."""

        def counted() -> Iterator[tuple[Any, ...]]:
            for row in rows:
                self.written[model] += 1
                yield row

        insert_rows(model, names, counted())

    def _flush(self, kind: str) -> None:
        rows, self.pending[kind] = self.pending[kind], []
        if not rows:
            return
        if kind != "subject" and self.pending["subject"]:
            self._flush("subject")
        getattr(self, "_load_" + kind)(rows)

    def _load_subject(self, rows: list[dict[str, Any]]) -> None:
        self.written[Subject] += len(rows)
        made = Subject.objects.bulk_create(
            [
                Subject(
                    space=self.space,
                    subject_id=d["subject_id"],
                    kind=d.get("kind"),
                    state=d["state"],
                    fenced_context_ids=d["fenced_context_ids"],
                    revision=d["revision"],
                    created_at=parse(d["created_at"]),
                    updated_at=parse(d["updated_at"]),
                    extensions=d["extensions"],
                )
                for d in rows
            ]
        )
        if any(s.pk is None for s in made):
            made = list(
                Subject.objects.filter(
                    space=self.space, subject_id__in=[d["subject_id"] for d in rows]
                )
            )
        self.subjects.update({s.subject_id: s.pk for s in made})

    def _values(self, d: dict[str, Any]) -> tuple[Any, ...]:
        """A record object's RECORD_FIELDS values."""
        scope, context_id = _placement(d["placement"])
        prov = d["provenance"]
        tomb = d.get("tombstone") or {}
        return (
            self.space.pk,
            self.subjects[d["subject_id"]],
            d["record_id"],
            d["kind"],
            d["content"],
            d["content"].get("text", ""),
            scope,
            context_id,
            prov["source"],
            prov.get("source_context_id"),
            prov.get("candidate_id"),
            prov["author_principal_id"],
            prov.get("reviewer_principal_id"),
            _time(prov.get("captured_at")),
            _time(prov["created_at"]),
            d["revision"],
            _time(d["created_at"]),
            _time(d["updated_at"]),
            _time(tomb.get("deleted_at")),
            tomb.get("deleted_by_principal_id"),
            tomb.get("reason"),
            d["extensions"],
        )

    def _load_record(self, rows: list[dict[str, Any]]) -> None:
        values: list[tuple[Any, ...]] = []
        if connection.vendor == "postgresql":
            ids = _next_ids(Record, len(rows))

            def streamed() -> Iterator[tuple[Any, ...]]:
                # Each row is built while the server writes the previous ones (the COPY
                # streams): the worker's Python and the server's index work overlap.
                for i, d in zip(ids, rows, strict=True):
                    v = self._values(d)
                    values.append(v)
                    yield (i, *v)

            self._insert(Record, ["id", *RECORD_FIELDS], streamed())
        else:
            values = [self._values(d) for d in rows]
            made = Record.objects.bulk_create(
                [Record(**dict(zip(RECORD_FIELDS, v, strict=True))) for v in values]
            )
            if any(r.pk is None for r in made):
                pks = dict(
                    Record.objects.filter(
                        space=self.space, record_id__in=[d["record_id"] for d in rows]
                    ).values_list("record_id", "pk")
                )
                made = [Record(pk=pks[d["record_id"]]) for d in rows]
            ids = [r.pk for r in made]
            self.written[Record] += len(made)
        # The export carries each record's current revision only; it becomes the history row
        # reflections generated after the import pin.
        self._insert(
            RecordRevision,
            REVISION_FIELDS,
            (
                (v[0], i, v[15], v[3], v[4], v[6], v[7], v[17])
                for i, v in zip(ids, values, strict=True)
            ),
        )
        self._derived(ids, values)

    def _derived(self, ids: list[int], values: list[tuple[Any, ...]]) -> None:
        """The derived copies a row-by-row write makes of the records' content (the hooks in
        memory.services.derived): set-wise by the bulk writers of the recall engines' copies,
        record by record for any other hook."""
        copies = registry.active_copies()
        if copies:
            # RECORD_FIELDS positions: 0 space, 1 subject, 5 text, 15 revision, 16 created_at,
            # 18 deleted_at.
            loaded = [
                LoadedRecord(
                    pk=i,
                    space_pk=v[0],
                    subject_pk=v[1],
                    revision=v[15],
                    text=v[5],
                    created_at=v[16],
                    live=v[18] is None,
                )
                for i, v in zip(ids, values, strict=True)
            ]
            for copy in copies:
                copy.bulk_write(loaded, self._insert)
        others = [w for w in derived.WRITERS if w not in {c.write for c in copies}]
        if others:
            records = [
                Record(pk=i, **dict(zip(RECORD_FIELDS, v, strict=True)))
                for i, v in zip(ids, values, strict=True)
            ]
            for writer in others:
                writer(records)

    def _load_candidate(self, rows: list[dict[str, Any]]) -> None:
        self.written[Candidate] += len(rows)
        Candidate.objects.bulk_create(
            [
                Candidate(
                    space=self.space,
                    subject_id=self.subjects[d["subject_id"]],
                    candidate_id=d["candidate_id"],
                    scope_placement_scope=_placement(d["capture_scope"]["placement"])[0],
                    scope_context_id=_placement(d["capture_scope"]["placement"])[1],
                    source_context_id=d["capture_scope"].get("source_context_id"),
                    proposed=d["proposed"],
                    classification=d["classification"],
                    state=d["state"],
                    captured_by_principal_id=d["captured_by_principal_id"],
                    captured_at=parse(d["captured_at"]),
                    consumed_at=_time(d.get("consumed_at")),
                    consumed_by_principal_id=d.get("consumed_by_principal_id"),
                    outcome=d.get("outcome"),
                    revision=d["revision"],
                    extensions=d["extensions"],
                )
                for d in rows
            ]
        )

    def _load_profile_document(self, rows: list[dict[str, Any]]) -> None:
        self.written[ProfileDocument] += len(rows)
        ProfileDocument.objects.bulk_create(
            [
                ProfileDocument(
                    space=self.space,
                    subject_id=self.subjects[d["subject_id"]],
                    kind=d["kind"],
                    content=d["content"],
                    revision=d["revision"],
                    author_principal_id=d["author_principal_id"],
                    created_at=parse(d["created_at"]),
                    updated_at=parse(d["updated_at"]),
                    extensions=d["extensions"],
                )
                for d in rows
            ]
        )

    def _load_reflection(self, rows: list[dict[str, Any]]) -> None:
        self.written[Reflection] += len(rows)
        Reflection.objects.bulk_create(
            [
                Reflection(
                    space=self.space,
                    subject_id=self.subjects[d["subject_id"]],
                    reflection_id=d["reflection_id"],
                    content=d["content"],
                    basis=d["basis"],
                    cognition_filter=d.get("cognition_filter"),
                    filter_key=filter_key(d.get("cognition_filter")),
                    generated_at=parse(d["generated_at"]),
                    generated_by_principal_id=d["generated_by_principal_id"],
                    extensions=d["extensions"],
                )
                for d in rows
            ]
        )
