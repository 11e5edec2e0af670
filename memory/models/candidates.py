"""Captured candidates awaiting review (docs/protocol.md#model-memorycandidate). The capture scope never changes."""

from typing import Literal, overload

from django.db import models

from memory.timeutil import iso
from memory.wire import types as t

from .records import placement_wire
from .scoped import SpaceScoped, choice


class Candidate(SpaceScoped):
    PENDING = "pending"
    STATES = ["pending", "promoted", "fragmented", "dropped", "dismissed"]

    space = models.ForeignKey("memory.Space", on_delete=models.CASCADE, related_name="candidates")
    subject = models.ForeignKey(
        "memory.Subject", on_delete=models.CASCADE, related_name="candidates"
    )
    candidate_id = models.CharField(max_length=80)
    scope_placement_scope = models.CharField(max_length=8)
    scope_context_id = models.CharField(max_length=128, null=True, blank=True)
    source_context_id = models.CharField(max_length=128, null=True, blank=True)
    proposed = models.JSONField()
    classification = models.JSONField()
    state = models.CharField(max_length=16, default=PENDING, choices=[(s, s) for s in STATES])
    captured_by_principal_id = models.CharField(max_length=80)
    captured_at = models.DateTimeField()
    consumed_at = models.DateTimeField(null=True, blank=True)
    consumed_by_principal_id = models.CharField(max_length=80, null=True, blank=True)
    outcome = models.JSONField(null=True, blank=True)
    revision = models.PositiveBigIntegerField(default=1)
    extensions = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["space", "candidate_id"], name="candidate_unique_in_space"
            ),
        ]
        indexes = [
            # Review queue and candidates.list: oldest first, ties by candidate_id.
            models.Index(
                fields=["space", "state", "captured_at", "candidate_id"], name="candidate_queue"
            ),
            models.Index(
                fields=["subject", "state", "captured_at", "candidate_id"],
                name="candidate_subject_queue",
            ),
        ]

    def __str__(self) -> str:
        return self.candidate_id

    @property
    def placement(self) -> t.Placement:
        return placement_wire(self.scope_placement_scope, self.scope_context_id)

    def capture_scope_wire(self) -> t.CaptureScope:
        out: t.CaptureScope = {"placement": self.placement}
        if self.source_context_id is not None:
            out["source_context_id"] = self.source_context_id
        return out

    @overload
    def to_wire(self, subject_id: str) -> t.MemoryCandidate: ...
    @overload
    def to_wire(self, subject_id: str, include_space: Literal[True]) -> t.MemoryCandidate: ...
    @overload
    def to_wire(self, subject_id: str, include_space: Literal[False]) -> t.ExportCandidate: ...
    def to_wire(
        self, subject_id: str, include_space: bool = True
    ) -> t.MemoryCandidate | t.ExportCandidate:
        """The candidate on the wire; without its space_id, as an export carries it."""
        out: t.ExportCandidate = {
            "schema_version": 1,
            "candidate_id": self.candidate_id,
            "subject_id": subject_id,
            "capture_scope": self.capture_scope_wire(),
            "proposed": self.proposed,
            "classification": self.classification,
            "state": choice(
                self.state, ("pending", "promoted", "fragmented", "dropped", "dismissed")
            ),
            "captured_by_principal_id": self.captured_by_principal_id,
            "captured_at": iso(self.captured_at),
            "revision": self.revision,
            "extensions": self.extensions,
        }
        if self.consumed_at is not None:
            out["consumed_at"] = iso(self.consumed_at)
        if self.consumed_by_principal_id is not None:
            out["consumed_by_principal_id"] = self.consumed_by_principal_id
        if self.outcome is not None:
            out["outcome"] = self.outcome
        if not include_space:
            return out
        # space_id third, as the model orders it (a key given twice keeps its first place)
        return {
            "schema_version": 1,
            "candidate_id": self.candidate_id,
            "space_id": self.space_id,
            **out,
        }
