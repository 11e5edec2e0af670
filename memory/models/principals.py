"""Principals, their API tokens (stored as SHA-256 only) and wire sessions (docs/protocol.md#authentication, #sessions, #model-principal)."""

import hashlib
import secrets

from django.conf import settings
from django.db import models

from memory.ids import new_principal_id, new_session_id
from memory.timeutil import iso, now
from memory.wire import types as t

from .scoped import choice

TOKEN_PREFIX = "smk_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Principal(models.Model):
    SERVICE, USER = "service", "user"

    principal_id = models.CharField(primary_key=True, max_length=40, default=new_principal_id)
    kind = models.CharField(
        max_length=16, default=SERVICE, choices=[(SERVICE, SERVICE), (USER, USER)]
    )
    display_name = models.CharField(max_length=200)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="principal",
    )
    created_at = models.DateTimeField(default=now)
    # The space whose operator made it on the console's Operate page: that space's operators
    # manage its tokens (reviews.operators). None: made by `manage.py spoke` or the demo (server
    # rights), or before homes existed.
    # No database constraint: on Citus the principals are a reference table and the spaces a
    # distributed one, which a foreign key cannot join (docs/scaling.md); SET_NULL is Django's.
    home_space = models.ForeignKey(
        "memory.Space",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="home_principals",
        db_constraint=False,
    )
    extensions = models.JSONField(default=dict, blank=True)
    # the principal's own request rate ("N/s|m|h|d"), set by `manage.py spoke set-rate`;
    # None: the server's SPOKE_MEMORY_RATE
    rate = models.CharField(max_length=32, null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.display_name} ({self.principal_id})"

    def to_wire(self) -> t.Principal:
        return {
            "schema_version": 1,
            "principal_id": self.principal_id,
            "kind": choice(self.kind, ("service", "user")),
            "display_name": self.display_name,
            "extensions": self.extensions,
        }

    def issue_token(self, label: str = "") -> str:
        """Make a new token; the clear value is returned once and never stored."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        ApiToken.objects.create(principal=self, token_hash=hash_token(token), label=label)
        return token


class ApiToken(models.Model):
    principal = models.ForeignKey(Principal, on_delete=models.CASCADE, related_name="tokens")
    token_hash = models.CharField(max_length=64, unique=True)
    label = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(default=now)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"token {self.token_hash[:8]}… of {self.principal_id}"


class WireSession(models.Model):
    session_id = models.CharField(primary_key=True, max_length=40, default=new_session_id)
    principal = models.ForeignKey(Principal, on_delete=models.CASCADE, related_name="sessions")
    negotiated_capabilities = models.JSONField(default=list)
    opened_at = models.DateTimeField(default=now)
    expires_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)
    extensions = models.JSONField(default=dict, blank=True)

    def to_wire(self) -> t.Session:
        return {
            "schema_version": 1,
            "session_id": self.session_id,
            "principal_id": self.principal_id,
            "negotiated_capabilities": list(self.negotiated_capabilities),
            "opened_at": iso(self.opened_at),
            "expires_at": iso(self.expires_at),
            "extensions": self.extensions,
        }
