"""My recent actions, and undoing a promote.

The panel lists the moderator's own newest review and dismiss receipts in the space (ids read
with `own_receipt_ids`, everything shown read per id through the ops): what was done, to which
candidate, and the records it produced. A promote (or fragment) is undone, for UNDO_WINDOW after
the action, by deleting the records it produced through memory.records.delete with a reason
naming the undo; the candidate stays consumed (the wire has no way back to pending). A drop or
dismiss consumed the candidate without a record: nothing to undo, and the panel says so."""

from datetime import UTC, datetime, timedelta
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from memory.timeutil import parse
from memory.wire import types as t
from memory.wire.errors import WireError
from reviews.console import (
    PORT,
    attempt,
    describe,
    is_own_receipt,
    own_receipt_ids,
    principal_of,
    read,
    ref_id,
)
from reviews.forms import QueueFilters
from reviews.views.space import space_wire
from reviews.words import named

UNDO_WINDOW = timedelta(minutes=5)
RECENT = 8
REVIEW = "memory.candidates.review"
DISMISS = "memory.candidates.dismiss"
UNDOABLE = ("promote", "fragment")


def _outcome(request: HttpRequest, space_id: str, got: t.MemoryReceipt) -> dict[str, Any]:
    cid = ref_id(got, "candidate")
    records = [r["id"] for r in got["refs"] if r["type"] == "record"]
    item: dict[str, Any] = {
        "receipt": got,
        "candidate_id": cid,
        "record_ids": records,
        "action": "dismiss",
    }
    answer = None
    if cid:
        answer, _ = attempt(
            request, PORT.candidates_get, {"space_id": space_id, "candidate_id": cid}
        )
    if answer is not None:  # what it said and about whom: the row names it by its words
        item["text"] = answer["candidate"]["proposed"]["content"]["text"]
        item["subject_id"] = answer["candidate"]["subject_id"]
    if got["op"] == REVIEW and cid:
        outcome = answer["candidate"].get("outcome") if answer else None
        item["action"] = outcome["action"] if outcome else "review"
    age = datetime.now(UTC) - parse(got["created_at"])
    item["undo_until"] = parse(got["created_at"]) + UNDO_WINDOW
    item["undoable"] = (
        item["action"] in UNDOABLE and got["status"] == "committed" and age <= UNDO_WINDOW
    )
    return item


def live_records(
    request: HttpRequest, space_id: str, record_ids: list[str]
) -> list[t.RetainedRecord]:
    """The produced records still there (not tombstoned) as the caller reads them."""
    out = []
    for rid in record_ids:
        answer, _ = attempt(request, PORT.records_get, {"space_id": space_id, "record_id": rid})
        if answer is not None and not answer["record"].get("tombstone"):
            out.append(answer["record"])
    return out


def recent_actions(request: HttpRequest, space_id: str) -> list[dict[str, Any]]:
    items = []
    for rid in own_receipt_ids(request, space_id, [REVIEW, DISMISS], RECENT):
        got, _ = attempt(request, PORT.receipts_get, {"receipt_id": rid})
        if got is None:
            continue
        item = _outcome(request, space_id, got["receipt"])
        if item["undoable"]:
            item["live"] = [
                r["record_id"] for r in live_records(request, space_id, item["record_ids"])
            ]
            item["undoable"] = bool(item["live"])
            item["undone"] = not item["live"]
        items.append(item)
    return items


@login_required
def recent(request: HttpRequest, space_id: str) -> HttpResponse:
    space_wire(request, space_id)  # a space the caller sees, else not found
    return render(
        request,
        "reviews/_recent_panel.html",
        {
            "space_id": space_id,
            "items": recent_actions(request, space_id),
            "window_minutes": int(UNDO_WINDOW.total_seconds() // 60),
            "queue_filters": QueueFilters(request.GET).hidden(),
        },
    )


class UndoForm(forms.Form):
    """Undo a promote: each record it produced is deleted under its own key, derived from the
    form's one key."""

    idempotency_key = forms.CharField(max_length=150)

    def wire(self, space_id: str, record: t.RetainedRecord, reason: str) -> t.RecordsDeleteRequest:
        """The delete of one produced record, at the revision read."""
        key = f"{self.cleaned_data['idempotency_key']}:{record['record_id']}"
        return {
            "space_id": space_id,
            "record_id": record["record_id"],
            "expected_revision": record["revision"],
            "reason": reason,
            "idempotency_key": key[:200],
        }


@login_required
@require_POST
def undo(request: HttpRequest, space_id: str, receipt_id: str) -> HttpResponse:
    """Delete the records a promote of mine produced, within UNDO_WINDOW of it."""
    back = reverse("reviews:queue", args=[space_id]) + QueueFilters(request.POST).query()
    form = UndoForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The form is incomplete; reload the page and try again.")
        return redirect(back)
    got = read(request, PORT.receipts_get, {"receipt_id": receipt_id})["receipt"]
    # A space admin reads every receipt of the space; Undo is only for the caller's own
    # (docs/console.md: someone else's receipt has no Undo, a not-found page).
    if got["space_id"] != space_id or got["op"] != REVIEW or not is_own_receipt(request, got):
        raise Http404("receipt")
    item = _outcome(request, space_id, got)
    if item["action"] not in UNDOABLE:
        messages.error(
            request,
            f"A {item['action']} consumed {item['candidate_id']} without a record: "
            "there is nothing to undo.",
        )
        return redirect(back)
    if not item["undoable"]:
        messages.error(
            request,
            f"The undo window ({int(UNDO_WINDOW.total_seconds() // 60)} minutes) has passed: "
            "delete the records from their pages if they should go.",
        )
        return redirect(back)
    reason = (
        f"undo: {item['action']} of {item['candidate_id']} undone by its reviewer ({receipt_id})"
    )
    deleted, failed = [], []
    principal = principal_of(request)
    for rec in live_records(request, space_id, item["record_ids"]):
        try:
            PORT.records_delete(principal, form.wire(space_id, rec, reason))
            deleted.append(rec["record_id"])
        except WireError as err:
            failed.append(f"{rec['record_id']}: {describe(err)}")
    if deleted:
        messages.success(
            request,
            f"Undone: {named(item.get('text'), item.get('subject_id', '?'))} is no longer a "
            f"memory (deleted {', '.join(deleted)}); candidate {item['candidate_id']} stays "
            "consumed (a reviewed candidate does not return to the queue).",
        )
    elif not failed:
        messages.info(request, "Already undone: the records are deleted.")
    for line in failed:
        messages.error(request, line)
    return redirect(back)
