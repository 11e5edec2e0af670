"""Exports screen: create an export of the space (memory.exports.create, optionally of named
subjects) and follow the caller's recent exports: each one's receipt (memory.receipts.get) while
pending, polling itself, then its bundle summary (memory.exports.get: digests, chunk and object
counts; never the chunk's objects, which are content).

There is no op that lists exports. The screen lists the caller's own most recent
memory.exports.create receipts in this space: only their ids are read from the receipt table
(filtered to this principal, so they are ids the caller already holds), and everything shown
comes from the ops, called per id, which decide visibility. memory.exports.get serves only the
export's creator, so these are the only exports the caller could read anyway. docs/console.md."""

from collections.abc import Iterator
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from memory.dispatch.responses import json_bytes
from memory.wire import types as t
from reviews.console import (
    PORT,
    act,
    attempt,
    describe,
    own_receipt_ids,
    principal_of,
    read,
    receipt,
    ref_id,
)
from reviews.forms import ExportForm, first_error
from reviews.views.space import space_wire

CREATE = "memory.exports.create"
RECENT = 10


def recent_receipt_ids(request: HttpRequest, space_id: str) -> list[str]:
    return own_receipt_ids(request, space_id, [CREATE], RECENT)


def export_item(request: HttpRequest, space_id: str, got: t.MemoryReceipt) -> dict[str, Any]:
    """One export as the screen shows it: its receipt and, once committed, its bundle."""
    export_id = ref_id(got, "export")
    item: dict[str, object] = {
        "receipt": got,
        "export_id": export_id,
        "bundle": None,
        "error": None,
    }
    if got["status"] == "committed" and export_id:
        answer, err = attempt(
            request,
            PORT.exports_get,
            {"space_id": space_id, "export_id": export_id, "ordinal": 0},
        )
        if answer is not None:
            item["bundle"] = answer["bundle"]  # answer["chunk"] holds content: not passed on
        else:
            item["error"] = describe(err) if err else None
    return item


@login_required
def exports(request: HttpRequest, space_id: str) -> HttpResponse:
    space = space_wire(request, space_id)
    items = []
    for receipt_id in recent_receipt_ids(request, space_id):
        got, _ = attempt(request, PORT.receipts_get, {"receipt_id": receipt_id})
        if got is not None:
            items.append(export_item(request, space_id, got["receipt"]))
    return render(
        request,
        "reviews/exports.html",
        {
            "space_id": space_id,
            "space": space,
            "items": items,
            "recent": RECENT,
        },
    )


@login_required
@require_POST
def create(request: HttpRequest, space_id: str) -> HttpResponse:
    form = ExportForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"{first_error(form)} Nothing was created.")
        return redirect("reviews:exports", space_id)
    result = act(request, PORT.exports_create, form.wire(space_id))
    if result.ok:
        messages.success(
            request,
            f"Export {ref_id(result.receipt, 'export')} admitted: a worker builds it, "
            "its progress is shown below.",
        )
    else:
        messages.error(request, describe(result.refusal))
    return redirect("reviews:exports", space_id)


@login_required
def download(request: HttpRequest, space_id: str, receipt_id: str) -> HttpResponseBase:
    """The export as one JSON Lines file: line i is the body memory.exports.get serves for
    ordinal i (`{"bundle", "chunk"}`, the same bytes as the API), streamed chunk by chunk, each
    chunk read (and re-authorized) through the op as the file is written. The import page stages
    such a file line by line. A pending, failed or unreadable export is a not-found page."""
    got = receipt(request, space_id, receipt_id, CREATE)
    export_id = ref_id(got, "export")
    if got["status"] != "committed" or not export_id:
        raise Http404("export not ready")
    first = read(
        request, PORT.exports_get, {"space_id": space_id, "export_id": export_id, "ordinal": 0}
    )
    principal = principal_of(request)

    def lines() -> Iterator[bytes]:
        yield json_bytes(dict(first)) + b"\n"
        for ordinal in range(1, first["bundle"]["chunk_count"]):
            answer = PORT.exports_get(
                principal, {"space_id": space_id, "export_id": export_id, "ordinal": ordinal}
            )
            yield json_bytes(dict(answer)) + b"\n"

    response = StreamingHttpResponse(lines(), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{space_id}-{export_id}.jsonl"'
    return response


@login_required
def item(request: HttpRequest, space_id: str, receipt_id: str) -> HttpResponse:
    """The htmx fragment: one export, polling itself while its receipt is pending."""
    got = receipt(request, space_id, receipt_id, CREATE)
    return render(
        request,
        "reviews/_export.html",
        {"space_id": space_id, "item": export_item(request, space_id, got)},
    )
