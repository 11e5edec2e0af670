"""Records screen: list and search a space's (or a subject's) retained records with selection and
kind filters (memory.records.list; a text search is memory.recall, which is per subject), record
detail with revision history and tombstone (memory.records.get), edit and delete with
expected_revision, explaining a REVISION_CONFLICT.

Revision history has no op of its own: it is read only after memory.records.get has answered
the record for this caller, and only for that record, each revision shown only where the
caller's coverage reaches that revision's placement (memory.selectors.history)."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from memory.ops.base import HANDLERS
from memory.selectors.history import readable_revisions
from memory.timeutil import iso, now
from memory.wire import types as t
from memory.wire.errors import WireError
from reviews.console import PORT, Result, act, describe, principal_of, read
from reviews.forms import MODES, RecordDeleteForm, RecordEditForm, RecordFilters, first_error

PAGE_SIZE = 50


@login_required
def records(request: HttpRequest, space_id: str) -> HttpResponse:
    params = request.GET
    filters = RecordFilters(params)
    query = filters.value("q")
    ctx: dict[str, Any] = {
        "space_id": space_id,
        "params": params,
        "modes": MODES,
        "query": query,
        "records": [],
        "total": None,
        "next_cursor": None,
        "error": None,
        "searched": False,
    }
    principal = principal_of(request)
    try:
        if query:
            search = filters.wire_recall(space_id)
            if "memory.recall" not in HANDLERS:
                ctx["error"] = (
                    "Text search needs memory.recall, which this provider does not serve yet."
                )
            elif search is None:
                ctx["error"] = "A text search looks in one subject: give the subject id too."
            else:
                recall = PORT.recall(principal, search)["recall"]
                ctx.update(
                    records=[r["record"] for r in recall["results"]],
                    total=recall["total_eligible"],
                    searched=True,
                )
        else:
            answer = PORT.records_list(principal, filters.wire(space_id, PAGE_SIZE))
            ctx.update(
                records=answer["records"],
                total=answer["total_authorized"],
                next_cursor=answer["next_cursor"],
            )
    except WireError as err:
        if err.code == "NOT_FOUND" and err.details.get("resource") == "space":
            raise Http404(err.message) from err
        ctx["error"] = describe(err)
    return render(request, "reviews/records.html", ctx)


def _record(request: HttpRequest, space_id: str, record_id: str) -> t.RetainedRecord:
    return read(request, PORT.records_get, {"space_id": space_id, "record_id": record_id})["record"]


def _history(request: HttpRequest, space_id: str, record_id: str) -> list[dict[str, Any]]:
    try:
        rows = readable_revisions(principal_of(request), space_id, record_id, now())
    except WireError as err:
        raise Http404(err.message) from err
    return [
        {
            "revision": r.revision,
            "kind": r.kind,
            "text": r.content.get("text", ""),
            "created_at": iso(r.created_at),
        }
        for r in rows
    ]


def _detail(
    request: HttpRequest,
    space_id: str,
    record: t.RetainedRecord,
    status: int = 200,
    conflict: dict[str, Any] | None = None,
    form: dict[str, Any] | None = None,
) -> HttpResponse:
    return render(
        request,
        "reviews/record.html",
        {
            "space_id": space_id,
            "r": record,
            "history": _history(request, space_id, record["record_id"]),
            "conflict": conflict,
            "form": form or {},
        },
        status=status,
    )


@login_required
def record(request: HttpRequest, space_id: str, record_id: str) -> HttpResponse:
    return _detail(request, space_id, _record(request, space_id, record_id))


def _outcome(
    request: HttpRequest, space_id: str, record_id: str, result: Result, done: str
) -> HttpResponse:
    if result.ok:
        messages.success(request, done)
        return redirect("reviews:record", space_id, record_id)
    current = _record(request, space_id, record_id)
    conflict = None
    if result.code == "REVISION_CONFLICT":
        conflict = {"yours": request.POST.get("expected_revision"), "current": current["revision"]}
        messages.error(
            request,
            (
                f"Someone changed this record after you opened it: you edited revision {conflict['yours']}, "
                f"it is now at revision {current['revision']}. Nothing was saved; the current version is shown below, "
                "make your change again on top of it."
            ),
        )
    else:
        messages.error(request, describe(result.refusal))
    return _detail(
        request,
        space_id,
        current,
        status=result.refusal.status,
        conflict=conflict,
        form={"text": request.POST.get("text"), "kind": request.POST.get("kind")},
    )


@login_required
@require_POST
def edit(request: HttpRequest, space_id: str, record_id: str) -> HttpResponse:
    current = _record(request, space_id, record_id)
    form = RecordEditForm(request.POST)
    if not form.is_valid():  # text and kind are optional: the op judges the values
        messages.error(request, f"{first_error(form)} Nothing changed.")
        return redirect("reviews:record", space_id, record_id)
    body = form.wire(space_id, current)
    if body is None:
        messages.info(request, "Nothing changed.")
        return redirect("reviews:record", space_id, record_id)
    return _outcome(
        request, space_id, record_id, act(request, PORT.records_update, body), "Record saved."
    )


@login_required
@require_POST
def delete(request: HttpRequest, space_id: str, record_id: str) -> HttpResponse:
    form = RecordDeleteForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"{first_error(form)} Nothing changed.")
        return redirect("reviews:record", space_id, record_id)
    if not form.cleaned_data["confirmed"]:
        messages.error(
            request, "Tick the box to delete: the content cannot be restored. Nothing changed."
        )
        return redirect("reviews:record", space_id, record_id)
    return _outcome(
        request,
        space_id,
        record_id,
        act(request, PORT.records_delete, form.wire(space_id, record_id)),
        "Record deleted: its content is erased, the tombstone stays.",
    )
