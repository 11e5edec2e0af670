"""The one path from a console request to the ops layer. A console user acts as the Principal
linked to it (docs/protocol.md#authentication): every screen calls an op through the typed in-process port
(`PORT`, `memory.ops.port.InProcessMemoryPort`: one method per op, taking the op's request
TypedDict and answering its answer TypedDict, so mypy checks every member a screen sends or
reads) and sees exactly what the API would answer that principal. NOT_FOUND from a read becomes
a 404 page, so a user without coverage learns nothing about another space."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Concatenate, NotRequired, ParamSpec, TypedDict, TypeVar

from django.http import Http404, HttpRequest
from ulid import ULID

from memory.models import Principal, Receipt
from memory.ops.port import InProcessMemoryPort
from memory.wire import types as t
from memory.wire.errors import WireError

PORT = InProcessMemoryPort()


class Keyed(TypedDict):
    """What every mutating op's request has: an optional idempotency key."""

    idempotency_key: NotRequired[str]


# `read` and `attempt` pass the request on as the port method's own parameter (a ParamSpec), so
# a literal `{...}` is checked against that op's request TypedDict. `act` adds the form's key to
# its request, so it takes a TypedDict value (a form's `.wire()`, or `t.XRequest(...)`).
Args = ParamSpec("Args")
Ans = TypeVar("Ans")
KeyedReq = TypeVar("KeyedReq", bound=Keyed)


def principal_of(request: HttpRequest) -> Principal:
    principal: Principal | None = (
        getattr(request.user, "principal", None) if request.user.is_authenticated else None
    )
    if principal is None:
        raise Http404("This account is not linked to a principal.")
    return principal


def read(
    request: HttpRequest,
    op: Callable[Concatenate[Principal, Args], Ans],
    *body: Args.args,
    **named: Args.kwargs,
) -> Ans:
    """A read op for the page itself (`read(request, PORT.records_get, {...})`): any error is a
    not-found page (absent and forbidden look the same), never a page of another space's data."""
    try:
        return op(principal_of(request), *body, **named)
    except WireError as err:
        raise Http404(err.message) from err


def attempt(
    request: HttpRequest,
    op: Callable[Concatenate[Principal, Args], Ans],
    *body: Args.args,
    **named: Args.kwargs,
) -> tuple[Ans | None, WireError | None]:
    """A read whose refusal the screen explains: (answer, None) or (None, the error)."""
    try:
        return op(principal_of(request), *body, **named), None
    except WireError as err:
        return None, err


@dataclass
class Result:
    ok: bool
    payload: t.ReceiptResponse | None = None
    error: WireError | None = None

    @property
    def code(self) -> str | None:
        return self.error.code if self.error else None

    @property
    def refusal(self) -> WireError:
        """The error of a refused call (a screen reads it once `ok` is false)."""
        if self.error is None:
            raise ValueError("the call was not refused")
        return self.error

    @property
    def receipt(self) -> t.MemoryReceipt:
        """The receipt of an accepted call (a screen reads it once `ok` is true)."""
        if self.payload is None:
            raise ValueError("the call was refused")
        return self.payload["receipt"]


def act(
    request: HttpRequest,
    op: Callable[[Principal, KeyedReq], t.ReceiptResponse],
    body: KeyedReq,
) -> Result:
    """A mutation (`act(request, PORT.spaces_freeze, form.wire(space_id))`): the form's own
    idempotency key goes along, so a double submit does one thing. A space the caller cannot see
    is a not-found page (absent and forbidden look the same); any other refusal is the screen's
    to explain."""
    key = request.POST.get("idempotency_key", "").strip()
    if key:
        body = body.copy()
        body["idempotency_key"] = key[:200]
    try:
        return Result(True, payload=op(principal_of(request), body))
    except WireError as err:
        if err.code == "NOT_FOUND" and err.details.get("resource") == "space":
            raise Http404(err.message) from err
        return Result(False, error=err)


TERMINAL = ("committed", "failed")


def receipt(request: HttpRequest, space_id: str, receipt_id: str, *ops: str) -> t.MemoryReceipt:
    """A receipt shown as progress of pending work, through memory.receipts.get (visible to the
    principal that caused it and to space admins). A receipt of another space or op is not this
    screen's: a not-found page, like an unreadable one."""
    got = read(request, PORT.receipts_get, {"receipt_id": receipt_id})["receipt"]
    if got["space_id"] != space_id or got["op"] not in ops:
        raise Http404("receipt")
    return got


def own_receipt_ids(request: HttpRequest, space_id: str, ops: list[str], limit: int) -> list[str]:
    """The ids of the caller's own newest receipts of these ops in the space. The one console read
    outside the ops: ids the caller was already given; what they say is read per id through
    memory.receipts.get."""
    rows = Receipt.objects.filter(space_id=space_id, principal=principal_of(request), op__in=ops)
    return list(
        rows.order_by("-created_at", "-receipt_id").values_list("receipt_id", flat=True)[:limit]
    )


def is_own_receipt(request: HttpRequest, receipt: t.MemoryReceipt) -> bool:
    """Whether the caller caused this receipt (the wire form does not name its principal; an
    admin may read others' receipts, but acting on one as if it were theirs is not allowed)."""
    return Receipt.objects.filter(
        receipt_id=receipt["receipt_id"], principal=principal_of(request)
    ).exists()


def ref_id(receipt: t.MemoryReceipt, ref_type: str) -> str | None:
    return next((r["id"] for r in receipt["refs"] if r["type"] == ref_type), None)


def new_key() -> str:
    return str(ULID())


def field_words(path: str) -> str:
    """A JSON pointer of a request as words: `/decision/fragments/0/kind` → "Fragment 1 kind"."""
    parts = [p for p in path.split("/") if p and p not in ("decision", "content_override")]
    words: list[str] = []
    for part in parts:
        if part.isdigit():
            words.append(str(int(part) + 1))
        else:
            words.append(part.rstrip("s") if part == "fragments" else part.replace("_", " "))
    text = " ".join(words) or "The request"
    return text[:1].upper() + text[1:]


def describe(err: WireError) -> str:
    """A message for people: the wire message (it never echoes content) and the code; a schema
    refusal names each field in words from `details.errors`."""
    errors = err.details.get("errors") if err.details.get("reason") == "schema" else None
    if errors:
        named = "; ".join(f"{field_words(e['path'])}: {e['message']}" for e in errors[:5])
        return f"{named} ({err.code})"
    return f"{err.message} ({err.code})"
