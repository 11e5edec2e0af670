"""Retained records and their revision history (docs/protocol.md#model-retainedrecord). Placement and provenance are columns
so lists and recall filter in SQL; `text` is the searchable copy of content.text and is erased
with the content on delete, as is every history row."""

from typing import Literal, overload

from django.db import models

from memory.timeutil import iso
from memory.wire import types as t

from .scoped import SpaceScoped, choice, copied_space

SHARED, CONTEXT = "shared", "context"


def placement_wire(scope: str, context_id: str | None) -> t.Placement:
    if scope == SHARED:
        return {"scope": "shared"}
    assert context_id is not None  # a context placement names its context (a check constraint)
    return {"scope": "context", "context_id": context_id}


class Record(SpaceScoped):
    space = models.ForeignKey("memory.Space", on_delete=models.CASCADE, related_name="records")
    subject = models.ForeignKey("memory.Subject", on_delete=models.CASCADE, related_name="records")
    record_id = models.CharField(max_length=80)
    kind = models.CharField(max_length=64)
    content = models.JSONField()
    text = models.TextField(default="", blank=True)
    placement_scope = models.CharField(max_length=8)
    placement_context_id = models.CharField(max_length=128, null=True, blank=True)
    prov_source = models.CharField(max_length=16)
    prov_source_context_id = models.CharField(max_length=128, null=True, blank=True)
    prov_candidate_id = models.CharField(max_length=80, null=True, blank=True)
    prov_author_principal_id = models.CharField(max_length=80)
    prov_reviewer_principal_id = models.CharField(max_length=80, null=True, blank=True)
    prov_captured_at = models.DateTimeField(null=True, blank=True)
    prov_created_at = models.DateTimeField()
    revision = models.PositiveBigIntegerField(default=1)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by_principal_id = models.CharField(max_length=80, null=True, blank=True)
    delete_reason = models.TextField(null=True, blank=True)
    extensions = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["space", "record_id"], name="record_unique_in_space"),
            models.CheckConstraint(
                condition=models.Q(revision__gte=1), name="record_revision_positive"
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(placement_scope=SHARED, placement_context_id__isnull=True)
                    | models.Q(placement_scope=CONTEXT, placement_context_id__isnull=False)
                ),
                name="record_placement_valid",
            ),
        ]
        indexes = [
            # Keyset order of memory.records.list: newest first, ties by record_id.
            models.Index(
                fields=["subject", "created_at", "record_id"], name="record_subject_order"
            ),
            models.Index(fields=["space", "created_at", "record_id"], name="record_space_order"),
            models.Index(
                fields=["subject", "placement_scope", "placement_context_id"],
                name="record_placement",
            ),
            # The subject's live records' (pk, revision), read from the index alone: what the
            # vector cache compares after a write to the subject (issue 49;
            # memory.selectors.recall.live_revision_numbers). PostgreSQL covers id and revision
            # (INCLUDE); SQLite, which has no INCLUDE, indexes the subject's live rows.
            models.Index(
                fields=["subject", "space"],
                include=["id", "revision"],
                condition=models.Q(deleted_at__isnull=True),
                name="record_live_revisions",
            ),
        ]

    def __str__(self) -> str:
        return self.record_id

    @property
    def placement(self) -> t.Placement:
        return placement_wire(self.placement_scope, self.placement_context_id)

    def provenance_wire(self) -> t.Provenance:
        out: t.Provenance = {
            "source": choice(self.prov_source, ("capture", "authored", "import")),
            "author_principal_id": self.prov_author_principal_id,
            "created_at": iso(self.prov_created_at),
        }
        if self.prov_source_context_id is not None:
            out["source_context_id"] = self.prov_source_context_id
        if self.prov_candidate_id is not None:
            out["candidate_id"] = self.prov_candidate_id
        if self.prov_reviewer_principal_id is not None:
            out["reviewer_principal_id"] = self.prov_reviewer_principal_id
        if self.prov_captured_at is not None:
            out["captured_at"] = iso(self.prov_captured_at)
        return out

    @overload
    def to_wire(self, subject_id: str) -> t.RetainedRecord: ...
    @overload
    def to_wire(self, subject_id: str, include_space: Literal[True]) -> t.RetainedRecord: ...
    @overload
    def to_wire(self, subject_id: str, include_space: Literal[False]) -> t.ExportRecord: ...
    def to_wire(
        self, subject_id: str, include_space: bool = True
    ) -> t.RetainedRecord | t.ExportRecord:
        """The record on the wire; without its space_id, as an export carries it."""
        out: t.ExportRecord = {
            "schema_version": 1,
            "record_id": self.record_id,
            "subject_id": subject_id,
            "kind": self.kind,
            "content": self.content,
            "placement": self.placement,
            "provenance": self.provenance_wire(),
            "revision": self.revision,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "extensions": self.extensions,
        }
        if self.deleted_at is not None:
            assert self.deleted_by_principal_id is not None  # set with deleted_at
            tomb: t.Tombstone = {
                "deleted_at": iso(self.deleted_at),
                "deleted_by_principal_id": self.deleted_by_principal_id,
            }
            if self.delete_reason is not None:
                tomb["reason"] = self.delete_reason
            out["tombstone"] = tomb
        if not include_space:
            return out
        # space_id third, as the model orders it (a key given twice keeps its first place)
        return {"schema_version": 1, "record_id": self.record_id, "space_id": self.space_id, **out}


class RecordRevision(SpaceScoped):
    """Every committed revision's content, so reflections can synthesize from pinned revisions."""

    space_parent = "record"
    space = copied_space()
    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="revisions")
    revision = models.PositiveBigIntegerField()
    kind = models.CharField(max_length=64)
    content = models.JSONField()
    placement_scope = models.CharField(max_length=8)
    placement_context_id = models.CharField(max_length=128, null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["record", "revision", "space"], name="record_revision_unique"
            ),
        ]
