"""Grants (docs/protocol.md#model-memorygrant, #grants). `ancestor_ids` is the chain from the root to the parent, written once at
issue. `ancestor_revoked` is set on every descendant when a grant is revoked (in the same
transaction, under the space lock), so a caller's effective grants are one indexed query.
Expiry needs no walk: a child never outlives its parent (non-amplification on expires_at)."""

from datetime import datetime
from typing import Literal

from django.db import models

from memory.ids import new_grant_id
from memory.timeutil import iso
from memory.wire import types as t

from .scoped import SpaceScoped


class Grant(SpaceScoped):
    ACTIVE, REVOKED = "active", "revoked"

    grant_id = models.CharField(primary_key=True, max_length=40, default=new_grant_id)
    space = models.ForeignKey("memory.Space", on_delete=models.CASCADE, related_name="grants")
    grantee = models.ForeignKey(
        "memory.Principal", on_delete=models.CASCADE, related_name="grants_held"
    )
    issuer = models.ForeignKey(
        "memory.Principal", on_delete=models.CASCADE, related_name="grants_issued"
    )
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="children"
    )
    ancestor_ids = models.JSONField(default=list, blank=True)
    capabilities = models.JSONField()
    subject_ids = models.JSONField(null=True, blank=True)
    context_ids = models.JSONField(null=True, blank=True)
    shared_access = models.BooleanField(default=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    state = models.CharField(
        max_length=16, default=ACTIVE, choices=[(ACTIVE, ACTIVE), (REVOKED, REVOKED)]
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoke_reason = models.TextField(null=True, blank=True)
    revision = models.PositiveBigIntegerField(default=1)
    ancestor_revoked = models.BooleanField(default=False)
    created_at = models.DateTimeField()
    extensions = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["space", "grantee", "state"], name="grant_space_grantee"),
            models.Index(fields=["space", "created_at", "grant_id"], name="grant_space_order"),
        ]

    def __str__(self) -> str:
        return self.grant_id

    def wire_state(self, at: datetime) -> Literal["active", "revoked", "expired"]:
        if self.state == self.REVOKED:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= at:
            return "expired"
        return "active"

    def to_wire(self, at: datetime, effective: bool) -> t.MemoryGrant:
        out: t.MemoryGrant = {
            "schema_version": 1,
            "grant_id": self.grant_id,
            "space_id": self.space_id,
            "grantee_principal_id": self.grantee_id,
            "issuer_principal_id": self.issuer_id,
            "parent_grant_id": self.parent_id,
            "capabilities": list(self.capabilities),
            "shared_access": self.shared_access,
            "state": self.wire_state(at),
            "effective": effective,
            "revision": self.revision,
            "created_at": iso(self.created_at),
            "extensions": self.extensions,
        }
        if self.subject_ids is not None:
            out["subject_ids"] = list(self.subject_ids)
        if self.context_ids is not None:
            out["context_ids"] = list(self.context_ids)
        if self.expires_at is not None:
            out["expires_at"] = iso(self.expires_at)
        if self.revoked_at is not None:
            out["revoked_at"] = iso(self.revoked_at)
        return out
