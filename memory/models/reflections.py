"""Reflections: derived synthesis over a pinned basis (docs/protocol.md#model-reflection). `stale` is computed at read
time; `filter_key` is the canonical form of the pinned cognition filter ('' when absent) so
memory.reflections.list can match it exactly in SQL."""

from collections.abc import Mapping
from typing import Any, Literal, overload

from django.db import models

from memory.timeutil import iso
from memory.wire import types as t
from memory.wire.canonical import canonical

from .scoped import SpaceScoped


def filter_key(cognition_filter: Mapping[str, Any] | None) -> str:
    """The `filter_key` column's value for a pinned cognition filter."""
    return "" if cognition_filter is None else canonical(cognition_filter).decode("utf-8")


class Reflection(SpaceScoped):
    space = models.ForeignKey("memory.Space", on_delete=models.CASCADE, related_name="reflections")
    subject = models.ForeignKey(
        "memory.Subject", on_delete=models.CASCADE, related_name="reflections"
    )
    reflection_id = models.CharField(max_length=80)
    content = models.JSONField()
    basis = models.JSONField()
    cognition_filter = models.JSONField(null=True, blank=True)
    filter_key = models.TextField(default="", blank=True)
    generated_at = models.DateTimeField()
    generated_by_principal_id = models.CharField(max_length=80)
    extensions = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["space", "reflection_id"], name="reflection_unique_in_space"
            ),
        ]
        indexes = [
            models.Index(
                fields=["subject", "generated_at", "reflection_id"], name="reflection_subject_order"
            ),
        ]

    @overload
    def to_wire(self, subject_id: str, stale: bool) -> t.Reflection: ...
    @overload
    def to_wire(
        self, subject_id: str, stale: bool, include_space: Literal[True]
    ) -> t.Reflection: ...
    @overload
    def to_wire(
        self, subject_id: str, stale: bool, include_space: Literal[False]
    ) -> t.ExportReflection: ...
    def to_wire(
        self, subject_id: str, stale: bool, include_space: bool = True
    ) -> t.Reflection | t.ExportReflection:
        """The reflection on the wire; without its space_id, as an export carries it."""
        out: t.ExportReflection = {
            "schema_version": 1,
            "reflection_id": self.reflection_id,
            "subject_id": subject_id,
            "content": self.content,
            "basis": self.basis,
            "generated_at": iso(self.generated_at),
            "generated_by_principal_id": self.generated_by_principal_id,
            "stale": stale,
            "extensions": self.extensions,
        }
        if self.cognition_filter is not None:
            out["cognition_filter"] = self.cognition_filter
        if not include_space:
            return out
        # space_id third, as the model orders it (a key given twice keeps its first place)
        return {
            "schema_version": 1,
            "reflection_id": self.reflection_id,
            "space_id": self.space_id,
            **out,
            "stale": stale,
        }
