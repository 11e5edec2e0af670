"""The write service for retained records: every path that makes, changes or erases a record's
content (records ops, review) goes through here, so the revision history (RecordRevision) and
the derived copies (`memory.services.derived`) stay in step with the record row. Callers run inside
the op's transaction (`mutate`) and have already passed coverage, gates, content and CAS."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from memory import statements
from memory.ids import new_id
from memory.models import Candidate, Record, RecordRevision, Space, Subject
from memory.models.records import SHARED
from memory.services import derived, erasure, term_store

ERASED = {"text": ""}


@dataclass(frozen=True)
class Placement:
    scope: str
    context_id: str | None

    @classmethod
    def of(cls, wire: Mapping[str, Any]) -> Placement:
        return cls(wire["scope"], None if wire["scope"] == SHARED else wire["context_id"])


@dataclass(frozen=True)
class Provenance:
    source: str
    author_principal_id: str
    source_context_id: str | None = None
    candidate_id: str | None = None
    reviewer_principal_id: str | None = None
    captured_at: datetime | None = None


def _snapshot(record: Record) -> RecordRevision:
    return RecordRevision(
        space_id=record.space_id,
        record=record,
        revision=record.revision,
        kind=record.kind,
        content=record.content,
        placement_scope=record.placement_scope,
        placement_context_id=record.placement_context_id,
        created_at=record.updated_at,
    )


def create_records(
    space: Space,
    subject: Subject,
    items: Sequence[tuple[str, Mapping[str, Any]]],
    placement: Placement,
    provenance: Provenance,
    at: datetime,
    extensions: Mapping[str, Any] | None = None,
) -> list[Record]:
    """Create one record per (kind, content) item at revision 1, with their history rows.
    Ids are handed out in ascending order so ties on created_at keep item order."""
    ids = sorted(new_id("record") for _ in items)
    records = [
        Record(
            space=space,
            subject=subject,
            record_id=record_id,
            kind=kind,
            content=content,
            text=content["text"],
            placement_scope=placement.scope,
            placement_context_id=placement.context_id,
            prov_source=provenance.source,
            prov_source_context_id=provenance.source_context_id,
            prov_candidate_id=provenance.candidate_id,
            prov_author_principal_id=provenance.author_principal_id,
            prov_reviewer_principal_id=provenance.reviewer_principal_id,
            prov_captured_at=provenance.captured_at,
            prov_created_at=at,
            revision=1,
            created_at=at,
            updated_at=at,
            extensions=dict(extensions or {}),
        )
        for record_id, (kind, content) in zip(ids, items, strict=True)
    ]
    done: tuple[Any, ...] = ()
    if connection.vendor == "postgresql":
        # each record with its revision row, and its term rows when they are kept (always,
        # unless a test unregistered the writer), in one statement (statements.record_with_revision)
        terms = term_store.write_terms in derived.WRITERS
        sql = statements.record_with_revision(terms)
        for record in records:
            params = statements.insert_values(record, skip="")
            if terms:
                params += term_store.term_columns(record.text, record.created_at)
            row = statements.execute(sql, params)
            if row is None:
                raise RuntimeError("the record insert answers its key")
            record.pk = row[0]
            record._state.adding, record._state.db = False, connection.alias
        done = (term_store.write_terms,) if terms else ()
    else:
        for record in records:
            record.save(force_insert=True)
        RecordRevision.objects.bulk_create([_snapshot(r) for r in records])
    derived.content_written(records, done)
    return records


def update_record(
    record: Record, at: datetime, content: Mapping[str, Any] | None = None, kind: str | None = None
) -> Record:
    fields = ["revision", "updated_at"]
    if content is not None:
        record.content, record.text = content, content["text"]
        fields += ["content", "text"]
    if kind is not None:
        record.kind = kind
        fields.append("kind")
    record.revision += 1
    record.updated_at = at
    record.save(update_fields=fields)
    _snapshot(record).save(force_insert=True)
    if content is not None:
        derived.content_written([record])
    return record


def move_record(record: Record, placement: Placement, at: datetime) -> Record:
    """Promote: the placement changes, provenance and content stay."""
    record.placement_scope, record.placement_context_id = placement.scope, placement.context_id
    record.revision += 1
    record.updated_at = at
    record.save(update_fields=["placement_scope", "placement_context_id", "revision", "updated_at"])
    _snapshot(record).save(force_insert=True)
    return record


def erase_record(
    record: Record, principal_id: str, reason: str | None, at: datetime
) -> Candidate | None:
    """Delete: the content becomes {"text": ""} on the record, on every history row (the rows
    and their revision numbers stay, so pinned revisions still resolve, to erased content), and
    on the proposed content of the candidate the record came from, which holds the same
    material; derived and exported copies through memory.services.erasure (reflections, stored
    exports, staged imports) and memory.services.derived (embeddings). A tombstone is kept.
    Returns the candidate it erased, if any."""
    record.content, record.text = dict(ERASED), ""
    record.deleted_at, record.deleted_by_principal_id, record.delete_reason = (
        at,
        principal_id,
        reason,
    )
    record.revision += 1
    record.updated_at = at
    record.save(
        update_fields=[
            "content",
            "text",
            "deleted_at",
            "deleted_by_principal_id",
            "delete_reason",
            "revision",
            "updated_at",
        ]
    )
    RecordRevision.objects.filter(space_id=record.space_id, record=record).update(
        content=dict(ERASED)
    )
    _snapshot(record).save(force_insert=True)
    derived.content_erased([record])
    erasure.record_erased(record)
    if record.prov_candidate_id is None:
        return None
    candidate = (
        Candidate.objects.select_for_update()
        .filter(space_id=record.space_id, candidate_id=record.prov_candidate_id)
        .first()
    )
    if candidate is None or candidate.proposed.get("content") == ERASED:
        return None
    candidate.proposed = {**candidate.proposed, "content": dict(ERASED)}
    candidate.revision += 1
    candidate.save(update_fields=["proposed", "revision"])
    return candidate
