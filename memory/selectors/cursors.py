"""Signed keyset cursors (docs/protocol.md#cursors). A cursor carries the keyset position and a binding: the
digest of the caller, the op, the request (every member but cursor and page_size), the
revision of what is read and the caller's grant state. Any change or tampering: CURSOR_INVALID."""

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any, TypeVar

from django.conf import settings
from django.core import signing
from django.db.models import Model, Q, QuerySet

from memory.access import Coverage
from memory.context import OpContext
from memory.timeutil import iso, parse
from memory.wire.canonical import digest
from memory.wire.errors import CursorInvalid, WireError

SALT = "spoke-memory.cursor.v1"
# Every listing's keyset position is [time, id]: a server time and a server-made id.
_POSITION_ID = re.compile(r"[a-z]{3}_[A-Za-z0-9]{1,64}")


def _binding(ctx: OpContext, req: Mapping[str, Any], revision: int, cov: Coverage) -> str:
    request = {k: v for k, v in req.items() if k not in ("cursor", "page_size")}
    return digest([ctx.principal.principal_id, ctx.op, request, revision, cov.state_digest()])


def cursor_invalid() -> WireError:
    return CursorInvalid("The cursor is stale, foreign or altered: start the listing again.")


def encode(
    ctx: OpContext, req: Mapping[str, Any], revision: int, cov: Coverage, position: list[Any]
) -> str:
    return signing.dumps({"b": _binding(ctx, req, revision, cov), "k": position}, salt=SALT)


def decode(
    ctx: OpContext, req: Mapping[str, Any], revision: int, cov: Coverage
) -> list[Any] | None:
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
    if not _position_ok(position):
        # signed by this server but not a position it makes (an old format, a key shared with
        # another deployment): refused like any other bad cursor, never a 5xx
        raise cursor_invalid()
    return position


def _position_ok(position: Any) -> bool:
    if not (isinstance(position, list) and len(position) == 2):
        return False
    at, last_id = position
    if not (isinstance(at, str) and isinstance(last_id, str)):
        return False
    if _POSITION_ID.fullmatch(last_id) is None:
        return False
    try:
        parse(at)
    except ValueError:
        return False
    return True


T = TypeVar("T")
W = TypeVar("W")  # a wire item (the generated type of a list's items)
M = TypeVar("M", bound=Model)
# The response's own spelling (memory/dispatch/responses.py), built once: json.dumps with
# arguments builds a new encoder per call, which cost more than the weighing itself.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _weight(value: Any) -> int:
    """Bytes of `value` as the response spells it (UTF-8 JSON, no spaces)."""
    text = _ENCODER.encode(value)
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def take_page(
    rows: Iterable[T], size: int, wire: Callable[[T], W]
) -> tuple[list[W], T, bool] | tuple[list[W], None, bool]:
    """A list page: up to `size` rows, as wire items, whose JSON array weighs at most
    SPOKE_MEMORY_PAGE_BYTES (docs/decisions/what-one-answer-may-weigh.md); a page always
    holds its first item, so a listing moves on whatever one item weighs. Returns the items, the
    last row taken (the next cursor's position) and whether rows are left, in which case the
    page ends with a next_cursor. `rows` is read lazily, one row past the page at most."""
    taken = list(islice(rows, size + 1))
    page, more = taken[:size], len(taken) > size
    items = [wire(row) for row in page]
    ceiling = settings.SPOKE_MEMORY_PAGE_BYTES
    # One encoding of the whole page decides nearly every page (far below the ceiling) ...
    if len(items) <= 1 or _weight(items) <= ceiling:
        return (items, page[-1], more) if page else (items, None, more)
    # ... and a page over it is cut before the item that passes it.
    weight = 1  # "["
    for n, item in enumerate(items):
        weight += _weight(item) + 1  # the item, then "," or "]"
        if n > 0 and weight > ceiling:
            return items[:n], page[n - 1], True
    return items, page[-1], more


def page_size(req: Mapping[str, Any]) -> int:
    # JSON has one number type: the schema's "integer" admits 2.0, which must page like 2.
    return int(req.get("page_size", 50))


def after(
    qs: QuerySet[M],
    position: list[Any] | None,
    time_field: str,
    id_field: str,
    descending: bool = False,
) -> QuerySet[M]:
    """Rows strictly past a keyset position `[time, id]` in (time, id) order, ascending or not."""
    if position is None:
        return qs
    at, last_id = parse(position[0]), position[1]
    op = "lt" if descending else "gt"
    return qs.filter(
        Q(**{f"{time_field}__{op}": at}) | Q(**{time_field: at, f"{id_field}__{op}": last_id})
    )


@dataclass(frozen=True)
class Keyset:
    """A listing's order: by `(time_field, id_field)`, newest first when `descending`. The
    cursor's position is that pair of the page's last row."""

    time_field: str
    id_field: str
    descending: bool = False

    def order(self) -> tuple[str, str]:
        sign = "-" if self.descending else ""
        return (sign + self.time_field, sign + self.id_field)


def keyset_page(
    ctx: OpContext,
    req: Mapping[str, Any],
    revision: int,
    cov: Coverage,
    qs: QuerySet[M],
    keyset: Keyset,
    wire: Callable[[M], W],
    keep: Callable[[Iterator[M]], Iterator[M]] | None = None,
    prefetch: Callable[[list[M]], None] | None = None,
) -> tuple[list[W], str | None]:
    """One page of a list op (the four list ops share it): the request's cursor decoded
    (CURSOR_INVALID when stale, foreign or altered), the rows past its position in the keyset's
    order, a page of them as wire items (`take_page`) and the next cursor, bound to the request,
    the revision and the caller's grants. `keep` filters rows SQL could only narrow (a
    cognition filter's matcher, a reflection's reader view): the rows are then streamed and
    filtered until the page is full. `prefetch` sees the page's rows before any is rendered (one
    query for what `wire` needs of all of them)."""
    position = decode(ctx, req, revision, cov)
    size = page_size(req)
    ordered = after(qs, position, keyset.time_field, keyset.id_field, keyset.descending)
    ordered = ordered.order_by(*keyset.order())
    rows: Iterable[M]
    if keep is None:
        rows = list(ordered[: size + 1])
        if prefetch is not None:
            prefetch(rows[:size])
    else:
        rows = islice(keep(ordered.iterator(chunk_size=max(size + 1, 100))), size + 1)
    items, last, more = take_page(rows, size, wire)
    next_cursor = None
    if more and last is not None:
        at = getattr(last, keyset.time_field)
        next_cursor = encode(ctx, req, revision, cov, [iso(at), getattr(last, keyset.id_field)])
    return items, next_cursor
