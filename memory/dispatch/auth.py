"""Bearer tokens (docs/protocol.md#authentication) and `Spoke-Session` (docs/protocol.md#sessions). Tokens are stored as SHA-256 only;
the lookup is by hash, and the stored hash is compared in constant time."""

import hmac
from datetime import timedelta
from typing import Any

from django.conf import settings

from memory import rows, statements
from memory.flags import CORE, SUB_FLAGS
from memory.models import Principal, WireSession
from memory.models.principals import hash_token
from memory.timeutil import now
from memory.wire.errors import SessionInvalid, Unauthenticated, WireError

# A session's expiry slides on use; the row is rewritten at most this often.
SESSION_REFRESH_S = 60


def unauthenticated() -> WireError:
    """The 401, with the challenge RFC 6750 §3 asks of a bearer-token resource (as /mcp/ sends)."""
    err = Unauthenticated("A valid bearer token is required.")
    err.headers["WWW-Authenticate"] = "Bearer"
    return err


def principal_for_header(header: str | None) -> Principal:
    if not header or not header.startswith("Bearer "):
        raise unauthenticated()
    token = header[len("Bearer ") :].strip()
    if not token or len(token) > 512:
        raise unauthenticated()
    wanted = hash_token(token)
    found = rows.fetch(statements.token_principal(), [wanted])
    if not found or not hmac.compare_digest(found[0][-1], wanted):
        raise unauthenticated()
    return rows.columns(Principal, "p").build(found[0])


def default_negotiated() -> tuple[str, ...]:
    return (CORE,) if CORE in settings.SPOKE_MEMORY_SERVED_CAPABILITIES else ()


def negotiate(requested: list[str]) -> list[str]:
    served = set(settings.SPOKE_MEMORY_SERVED_CAPABILITIES)
    chosen = served.intersection(requested)
    if CORE not in chosen:
        chosen.difference_update(SUB_FLAGS)
    return sorted(chosen)


def session_invalid() -> WireError:
    return SessionInvalid("The Spoke-Session header names no open session of this caller.")


def session_for(principal: Principal, session_id: str) -> WireSession:
    at = now()
    session = WireSession.objects.filter(session_id=session_id).first()
    if (
        session is None
        or session.principal_id != principal.principal_id
        or session.closed_at is not None
        or session.expires_at <= at
    ):
        raise session_invalid()
    ttl = settings.SPOKE_MEMORY_LIMITS["session_ttl_s"]
    fresh = at + timedelta(seconds=ttl)
    if (fresh - session.expires_at).total_seconds() >= SESSION_REFRESH_S:
        WireSession.objects.filter(pk=session.pk).update(expires_at=fresh)
        session.expires_at = fresh
    return session


def open_session(
    principal: Principal, requested: list[str], extensions: dict[str, Any]
) -> WireSession:
    at = now()
    return WireSession.objects.create(
        principal=principal,
        negotiated_capabilities=negotiate(requested),
        opened_at=at,
        expires_at=at + timedelta(seconds=settings.SPOKE_MEMORY_LIMITS["session_ttl_s"]),
        extensions=extensions,
    )
