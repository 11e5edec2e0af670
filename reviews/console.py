"""The one path from a console request to the ops layer. A console user acts as the Principal
linked to it (SPEC §1.2): every screen calls `memory.ops.base.call(principal, op, request)` and
sees exactly what the API would answer that principal. NOT_FOUND from a read becomes a 404 page,
so a user without coverage learns nothing about another space."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import Http404, HttpRequest
from ulid import ULID

from memory.models import Principal, Receipt
from memory.ops.base import call
from memory.wire.errors import WireError


def principal_of(request: HttpRequest) -> Principal:
    principal = getattr(request.user, "principal", None) if request.user.is_authenticated else None
    if principal is None:
        raise Http404("This account is not linked to a principal.")
    return principal


def read(request: HttpRequest, op: str, body: dict) -> dict:
    """A read op for the page itself: any error is a not-found page (absent and forbidden look
    the same), never a page of another space's data."""
    try:
        return call(principal_of(request), op, body)
    except WireError as err:
        raise Http404(err.message) from err


@dataclass
class Result:
    ok: bool
    payload: dict | None = None
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
    def receipt(self) -> dict:
        return (self.payload or {}).get("receipt", {})


def act(request: HttpRequest, op: str, body: dict) -> Result:
    """A mutation: the form's own idempotency key goes along, so a double submit does one thing.
    A space the caller cannot see is a not-found page (absent and forbidden look the same); any
    other refusal is the screen's to explain."""
    key = request.POST.get("idempotency_key", "").strip()
    if key:
        body = {**body, "idempotency_key": key[:200]}
    try:
        return Result(True, payload=call(principal_of(request), op, body))
    except WireError as err:
        if err.code == "NOT_FOUND" and err.details.get("resource") == "space":
            raise Http404(err.message) from err
        return Result(False, error=err)


TERMINAL = ("committed", "failed")


def receipt(request: HttpRequest, space_id: str, receipt_id: str, *ops: str) -> dict:
    """A receipt shown as progress of pending work, through memory.receipts.get (visible to the
    principal that caused it and to space admins). A receipt of another space or op is not this
    screen's: a not-found page, like an unreadable one."""
    got = read(request, "memory.receipts.get", {"receipt_id": receipt_id})["receipt"]
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


def is_own_receipt(request: HttpRequest, receipt: dict) -> bool:
    """Whether the caller caused this receipt (the wire form does not name its principal; an
    admin may read others' receipts, but acting on one as if it were theirs is not allowed)."""
    return Receipt.objects.filter(
        receipt_id=receipt["receipt_id"], principal=principal_of(request)
    ).exists()


def ref_id(receipt: dict, ref_type: str) -> str | None:
    return next((r["id"] for r in receipt.get("refs", []) if r["type"] == ref_type), None)


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
