"""Authored profile documents (docs/protocol.md#model-profiledocument): trusted author material that grants nothing."""

from typing import Literal, overload

from django.db import models

from memory.timeutil import iso
from memory.wire import types as t

from .scoped import SpaceScoped


class ProfileDocument(SpaceScoped):
    space = models.ForeignKey(
        "memory.Space", on_delete=models.CASCADE, related_name="profile_documents"
    )
    subject = models.ForeignKey(
        "memory.Subject", on_delete=models.CASCADE, related_name="profile_documents"
    )
    kind = models.CharField(max_length=64)
    content = models.JSONField()
    revision = models.PositiveBigIntegerField(default=1)
    author_principal_id = models.CharField(max_length=80)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    extensions = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "kind", "space"], name="profile_kind_unique"
            ),
        ]

    @overload
    def to_wire(self, subject_id: str) -> t.ProfileDocument: ...
    @overload
    def to_wire(self, subject_id: str, include_space: Literal[True]) -> t.ProfileDocument: ...
    @overload
    def to_wire(
        self, subject_id: str, include_space: Literal[False]
    ) -> t.ExportProfileDocument: ...
    def to_wire(
        self, subject_id: str, include_space: bool = True
    ) -> t.ProfileDocument | t.ExportProfileDocument:
        """The document on the wire; without its space_id, as an export carries it."""
        out: t.ExportProfileDocument = {
            "schema_version": 1,
            "subject_id": subject_id,
            "kind": self.kind,
            "content": self.content,
            "revision": self.revision,
            "author_principal_id": self.author_principal_id,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "extensions": self.extensions,
        }
        if not include_space:
            return out
        # space_id second, as the model orders it (a key given twice keeps its first place)
        return {"schema_version": 1, "space_id": self.space_id, **out}
