"""Signed keyset cursors (SPEC §2.7). A cursor carries the keyset position and a binding: the
digest of the caller, the op, the request (every member but cursor and page_size), the
revision of what is read and the caller's grant state. Any change or tampering: CURSOR_INVALID."""

from typing import Any

from django.core import signing
from django.db.models import Q, QuerySet

from memory.access import Coverage
from memory.context import OpContext
from memory.timeutil import parse
from memory.wire.canonical import digest
from memory.wire.errors import WireError

SALT = "spoke-memory.cursor.v1"


def _binding(ctx: OpContext, req: dict, revision: int, cov: Coverage) -> str:
    request = {k: v for k, v in req.items() if k not in ("cursor", "page_size")}
    return digest([ctx.principal.principal_id, ctx.op, request, revision, cov.state_digest()])


def cursor_invalid() -> WireError:
    return WireError(
        "CURSOR_INVALID", "The cursor is stale, foreign or altered: start the listing again."
    )


def encode(ctx: OpContext, req: dict, revision: int, cov: Coverage, position: list[Any]) -> str:
    return signing.dumps({"b": _binding(ctx, req, revision, cov), "k": position}, salt=SALT)


def decode(ctx: OpContext, req: dict, revision: int, cov: Coverage) -> list[Any] | None:
    """The keyset position of the request's cursor, or None without one."""
    token = req.get("cursor")
    if token is None:
        return None
    try:
        data = signing.loads(token, salt=SALT)
    except signing.BadSignature:
        raise cursor_invalid()
    if not isinstance(data, dict) or data.get("b") != _binding(ctx, req, revision, cov):
        raise cursor_invalid()
    position = data.get("k")
    if not isinstance(position, list):
        raise cursor_invalid()
    return position


def page_size(req: dict) -> int:
    # JSON has one number type: the schema's "integer" admits 2.0, which must page like 2.
    return int(req.get("page_size", 50))


def after(
    qs: QuerySet,
    position: list[Any] | None,
    time_field: str,
    id_field: str,
    descending: bool = False,
) -> QuerySet:
    """Rows strictly past a keyset position `[time, id]` in (time, id) order, ascending or not."""
    if position is None:
        return qs
    at, last_id = parse(position[0]), position[1]
    op = "lt" if descending else "gt"
    return qs.filter(
        Q(**{f"{time_field}__{op}": at}) | Q(**{time_field: at, f"{id_field}__{op}": last_id})
    )
