"""Memory spaces and the subjects memory is about (docs/protocol.md#model-memoryspace, #model-subject)."""

from typing import Literal, overload

from django.conf import settings
from django.db import models

from memory.timeutil import iso, now
from memory.wire import types as t

from .scoped import SpaceScoped, choice


class Space(models.Model):
    ACTIVE, FROZEN = "active", "frozen"

    space_id = models.CharField(primary_key=True, max_length=128)
    display_name = models.CharField(max_length=200)
    state = models.CharField(
        max_length=16, default=ACTIVE, choices=[(ACTIVE, ACTIVE), (FROZEN, FROZEN)]
    )
    freeze_reason = models.TextField(null=True, blank=True)
    # An import's activation is accepted and not yet ended: the space takes no mutation but the
    # ones a frozen space takes (docs/transfer.md). Internal: the wire `state` is the admin's.
    activation_pending = models.BooleanField(default=False, db_default=False)
    revision = models.PositiveBigIntegerField(default=1)
    authority_generation = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=now)
    updated_at = models.DateTimeField(default=now)
    extensions = models.JSONField(default=dict, blank=True)

    class Meta:
        permissions = [("operate_space", "Can operate this space: principals, tokens, root grants")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(revision__gte=1), name="space_revision_positive"
            )
        ]

    def __str__(self) -> str:
        return self.space_id

    def to_wire(self, pending_receipts: int) -> t.MemorySpace:
        out: t.MemorySpace = {
            "schema_version": 1,
            "space_id": self.space_id,
            "display_name": self.display_name,
            "provider_id": settings.SPOKE_MEMORY_PROVIDER_ID,
            "state": choice(self.state, ("active", "frozen")),
            "revision": self.revision,
            "authority_generation": self.authority_generation,
            "pending_receipts": pending_receipts,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "extensions": self.extensions,
        }
        if self.freeze_reason is not None and self.state == self.FROZEN:
            out["freeze_reason"] = self.freeze_reason
        return out


class Subject(SpaceScoped):
    ACTIVE, FENCED, ARCHIVED = "active", "fenced", "archived"

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="subjects")
    subject_id = models.CharField(max_length=128)
    kind = models.CharField(max_length=128, null=True, blank=True)
    state = models.CharField(
        max_length=16, default=ACTIVE, choices=[(s, s) for s in (ACTIVE, FENCED, ARCHIVED)]
    )
    fenced_context_ids = models.JSONField(default=list, blank=True)
    revision = models.PositiveBigIntegerField(default=1)
    created_at = models.DateTimeField(default=now)
    updated_at = models.DateTimeField(default=now)
    extensions = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["space", "subject_id"], name="subject_unique_in_space"),
            models.CheckConstraint(
                condition=models.Q(revision__gte=1), name="subject_revision_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.space_id}/{self.subject_id}"

    @overload
    def to_wire(self) -> t.Subject: ...
    @overload
    def to_wire(self, include_space: Literal[True]) -> t.Subject: ...
    @overload
    def to_wire(self, include_space: Literal[False]) -> t.ExportSubject: ...
    def to_wire(self, include_space: bool = True) -> t.Subject | t.ExportSubject:
        """The subject on the wire; without its space_id, as an export carries it."""
        out: t.ExportSubject = {
            "schema_version": 1,
            "subject_id": self.subject_id,
            "state": choice(self.state, ("active", "fenced", "archived")),
            "fenced_context_ids": list(self.fenced_context_ids),
            "revision": self.revision,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "extensions": self.extensions,
        }
        if self.kind is not None:
            out["kind"] = self.kind
        if not include_space:
            return out
        # space_id second, as the model orders it (a key given twice keeps its first place)
        return {"schema_version": 1, "space_id": self.space_id, **out}
