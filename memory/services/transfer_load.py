"""Import activation's storage side: clear a space's memory objects and load verified export
objects into it, keeping every id, time, revision and tombstone (SPEC §5). Used inside the
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
from collections.abc import Iterable, Sequence

from django.db import connection, models

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
from memory.services import derived
from memory.services.recall_engines import registry
from memory.services.recall_engines.base import LoadedRecord
from memory.timeutil import parse

BATCH = 1000


def _raw_delete(qs) -> None:
    # QuerySet.delete() would load every row to cascade in Python; the order below already
    # removes dependants first, so a plain DELETE per table is exact.
    qs._raw_delete(qs.db)


def clear_space(space: Space) -> None:
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
    _raw_delete(RecordRevision.objects.filter(space_id=space.pk, record_id__in=record_pks))
    for model in (Reflection, ProfileDocument, Candidate, Record, Subject):
        _raw_delete(model.objects.filter(space=space))


def _columns(model: type[models.Model], names: Sequence[str]) -> list[models.Field]:
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


def insert_rows(model: type[models.Model], names: Sequence[str], rows: Iterable[tuple]) -> None:
    """Insert rows (tuples of the named fields' Python values, attnames for foreign keys) into
    the model's table: one COPY on PostgreSQL, bulk_create on other databases. No model
    validation or signals, as bulk_create."""
    fields = _columns(model, names)
    if connection.vendor != "postgresql":
        attnames = [f.attname for f in fields]
        model._default_manager.bulk_create(
            [model(**dict(zip(attnames, row, strict=True))) for row in rows], batch_size=BATCH
        )
        return
    json_at = [i for i, f in enumerate(fields) if isinstance(f, models.JSONField)]
    table = connection.ops.quote_name(model._meta.db_table)
    cols = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    with connection.cursor() as cur, cur.cursor.copy(f"COPY {table} ({cols}) FROM STDIN") as copy:
        for row in rows:
            if json_at:
                cells = list(row)
                for i in json_at:
                    cells[i] = None if cells[i] is None else dumps(cells[i])
                copy.write_row(cells)
            else:
                copy.write_row(row)


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


def _t(value: str | None):
    return parse(value) if value is not None else None


def _placement(p: dict) -> tuple[str, str | None]:
    return p["scope"], p.get("context_id") if p["scope"] == CONTEXT else None


class Loader:
    def __init__(self, space: Space) -> None:
        self.space = space
        self.subjects: dict[str, int] = {}
        self.pending: dict[str, list] = {
            t: [] for t in ("subject", "record", "candidate", "profile_document", "reflection")
        }

    def add(self, objects: list[dict]) -> None:
        for obj in objects:
            self.pending[obj["type"]].append(obj["data"])
            if len(self.pending[obj["type"]]) >= BATCH:
                self._flush(obj["type"])

    def flush(self) -> None:
        for kind in self.pending:
            self._flush(kind)

    def _flush(self, kind: str) -> None:
        rows, self.pending[kind] = self.pending[kind], []
        if not rows:
            return
        if kind != "subject" and self.pending["subject"]:
            self._flush("subject")
        getattr(self, "_load_" + kind)(rows)

    def _load_subject(self, rows: list[dict]) -> None:
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

    def _load_record(self, rows: list[dict]) -> None:
        values = []
        for d in rows:
            scope, context_id = _placement(d["placement"])
            prov = d["provenance"]
            tomb = d.get("tombstone") or {}
            values.append(
                (
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
                    _t(prov.get("captured_at")),
                    parse(prov["created_at"]),
                    d["revision"],
                    parse(d["created_at"]),
                    parse(d["updated_at"]),
                    _t(tomb.get("deleted_at")),
                    tomb.get("deleted_by_principal_id"),
                    tomb.get("reason"),
                    d["extensions"],
                )
            )
        if connection.vendor == "postgresql":
            ids = _next_ids(Record, len(values))
            insert_rows(
                Record, ["id", *RECORD_FIELDS], ((i, *v) for i, v in zip(ids, values, strict=True))
            )
        else:
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
        # The export carries each record's current revision only; it becomes the history row
        # reflections generated after the import pin.
        insert_rows(
            RecordRevision,
            REVISION_FIELDS,
            (
                (v[0], i, v[15], v[3], v[4], v[6], v[7], v[17])
                for i, v in zip(ids, values, strict=True)
            ),
        )
        self._derived(ids, values)

    def _derived(self, ids: list[int], values: list[tuple]) -> None:
        """The derived copies a row-by-row write makes of the records' content (the hooks in
        memory.services.derived): set-wise by the bulk writers of the recall engines' copies,
        record by record for any other hook."""
        fields = [dict(zip(RECORD_FIELDS, v, strict=True)) for v in values]
        copies = registry.active_copies()
        if copies:
            loaded = [
                LoadedRecord(
                    pk=i,
                    space_pk=f["space_id"],
                    subject_pk=f["subject_id"],
                    revision=f["revision"],
                    text=f["text"],
                    created_at=f["created_at"],
                    live=f["deleted_at"] is None,
                )
                for i, f in zip(ids, fields, strict=True)
            ]
            for copy in copies:
                copy.bulk_write(loaded, insert_rows)
        others = [w for w in derived.WRITERS if w not in {c.write for c in copies}]
        if others:
            records = [Record(pk=i, **f) for i, f in zip(ids, fields, strict=True)]
            for writer in others:
                writer(records)

    def _load_candidate(self, rows: list[dict]) -> None:
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
                    consumed_at=_t(d.get("consumed_at")),
                    consumed_by_principal_id=d.get("consumed_by_principal_id"),
                    outcome=d.get("outcome"),
                    revision=d["revision"],
                    extensions=d["extensions"],
                )
                for d in rows
            ]
        )

    def _load_profile_document(self, rows: list[dict]) -> None:
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

    def _load_reflection(self, rows: list[dict]) -> None:
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
