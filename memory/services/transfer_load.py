"""Import activation's storage side: clear a space's memory objects and load verified export
objects into it, keeping every id, time, revision and tombstone (SPEC §5). Used inside the
activation job's single transaction. Bulk statements keep memory bounded by the batch."""

from __future__ import annotations

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
from memory.timeutil import parse

BATCH = 1000


def _raw_delete(qs) -> None:
    # QuerySet.delete() would load every row to cascade in Python; the order below already
    # removes dependants first, so a plain DELETE per table is exact.
    qs._raw_delete(qs.db)


def clear_space(space: Space) -> None:
    if derived.ERASERS:
        records = Record.objects.filter(space=space).only("pk", "record_id")
        batch: list[Record] = []
        for r in records.iterator(chunk_size=BATCH):
            batch.append(r)
            if len(batch) == BATCH:
                derived.content_erased(batch)
                batch = []
        derived.content_erased(batch)
    _raw_delete(RecordRevision.objects.filter(record__space=space))
    for model in (Reflection, ProfileDocument, Candidate, Record, Subject):
        _raw_delete(model.objects.filter(space=space))


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
        records = []
        for d in rows:
            scope, context_id = _placement(d["placement"])
            prov = d["provenance"]
            tomb = d.get("tombstone") or {}
            records.append(
                Record(
                    space=self.space,
                    subject_id=self.subjects[d["subject_id"]],
                    record_id=d["record_id"],
                    kind=d["kind"],
                    content=d["content"],
                    text=d["content"].get("text", ""),
                    placement_scope=scope,
                    placement_context_id=context_id,
                    prov_source=prov["source"],
                    prov_source_context_id=prov.get("source_context_id"),
                    prov_candidate_id=prov.get("candidate_id"),
                    prov_author_principal_id=prov["author_principal_id"],
                    prov_reviewer_principal_id=prov.get("reviewer_principal_id"),
                    prov_captured_at=_t(prov.get("captured_at")),
                    prov_created_at=parse(prov["created_at"]),
                    revision=d["revision"],
                    created_at=parse(d["created_at"]),
                    updated_at=parse(d["updated_at"]),
                    deleted_at=_t(tomb.get("deleted_at")),
                    deleted_by_principal_id=tomb.get("deleted_by_principal_id"),
                    delete_reason=tomb.get("reason"),
                    extensions=d["extensions"],
                )
            )
        made = Record.objects.bulk_create(records)
        if any(r.pk is None for r in made):
            made = list(
                Record.objects.filter(
                    space=self.space, record_id__in=[d["record_id"] for d in rows]
                )
            )
        # The export carries each record's current revision only; it becomes the history row
        # reflections generated after the import pin.
        RecordRevision.objects.bulk_create(
            [
                RecordRevision(
                    record=r,
                    revision=r.revision,
                    kind=r.kind,
                    content=r.content,
                    placement_scope=r.placement_scope,
                    placement_context_id=r.placement_context_id,
                    created_at=r.updated_at,
                )
                for r in made
            ]
        )
        derived.content_written(made)

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
