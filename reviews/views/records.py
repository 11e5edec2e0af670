"""Records screen: list and search a space's (or a subject's) retained records with selection and
kind filters (memory.records.list; a text search is memory.recall, which is per subject), record
detail with revision history and tombstone (memory.records.get), edit and delete with
expected_revision, explaining a REVISION_CONFLICT.

Revision history has no op of its own: it is read only after memory.records.get has answered
the record for this caller, and only for that record, each revision shown only where the
caller's coverage reaches that revision's placement (memory.selectors.history)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from memory.ops.base import HANDLERS, call
from memory.selectors.history import readable_revisions
from memory.timeutil import iso, now
from memory.wire.errors import WireError
from reviews.console import act, describe, principal_of, read
from reviews.forms import ReasonForm, RecordEditForm, id_list

MODES = ["all", "contexts", "shared", "contexts_and_shared"]


def _list_body(space_id: str, params) -> dict:
    body: dict = {"space_id": space_id, "page_size": 50}
    if params.get("subject", "").strip():
        body["subject_id"] = params["subject"].strip()
    mode = params.get("mode", "all")
    if mode in MODES and mode != "all":
        body["selection"] = {"mode": mode}
        contexts = id_list(params.get("contexts", ""))
        if contexts:
            body["selection"]["context_ids"] = contexts
    kinds = id_list(params.get("kinds", ""))
    if kinds:
        body["kinds"] = kinds
    if params.get("tombstoned"):
        body["include_tombstoned"] = True
    if params.get("cursor"):
        body["cursor"] = params["cursor"]
    return body


@login_required
def records(request, space_id: str):
    params = request.GET
    query = params.get("q", "").strip()
    ctx: dict = {
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
            body = {
                k: v
                for k, v in _list_body(space_id, params).items()
                if k in ("space_id", "subject_id", "selection", "kinds")
            }
            if "memory.recall" not in HANDLERS:
                ctx["error"] = (
                    "Text search needs memory.recall, which this provider does not serve yet."
                )
            elif "subject_id" not in body:
                ctx["error"] = "A text search looks in one subject: give the subject id too."
            else:
                body["query"] = {"text": query}
                recall = call(principal, "memory.recall", body)["recall"]
                ctx.update(
                    records=[r["record"] for r in recall["results"]],
                    total=recall["total_eligible"],
                    searched=True,
                )
        else:
            answer = call(principal, "memory.records.list", _list_body(space_id, params))
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


def _record(request, space_id: str, record_id: str) -> dict:
    return read(request, "memory.records.get", {"space_id": space_id, "record_id": record_id})[
        "record"
    ]


def _history(request, space_id: str, record_id: str) -> list[dict]:
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
    request, space_id: str, record: dict, status: int = 200, conflict: dict | None = None, form=None
):
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
def record(request, space_id: str, record_id: str):
    return _detail(request, space_id, _record(request, space_id, record_id))


def _outcome(request, space_id: str, record_id: str, result, done: str):
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
        messages.error(request, describe(result.error))
    return _detail(
        request,
        space_id,
        current,
        status=result.error.status,
        conflict=conflict,
        form={"text": request.POST.get("text"), "kind": request.POST.get("kind")},
    )


def _expected(request) -> int:
    try:
        return int(request.POST.get("expected_revision", ""))
    except ValueError:
        raise Http404("no revision") from None


@login_required
@require_POST
def edit(request, space_id: str, record_id: str):
    current = _record(request, space_id, record_id)
    body: dict = {
        "space_id": space_id,
        "record_id": record_id,
        "expected_revision": _expected(request),
    }
    form = RecordEditForm(request.POST)
    form.is_valid()  # both fields optional: the op judges the values
    text, kind = form.cleaned_data.get("text"), form.cleaned_data.get("kind", "")
    if "text" in request.POST and text != current["content"]["text"]:
        body["content"] = {**current["content"], "text": text}
    if kind and kind != current["kind"]:
        body["kind"] = kind
    if "content" not in body and "kind" not in body:
        messages.info(request, "Nothing changed.")
        return redirect("reviews:record", space_id, record_id)
    return _outcome(
        request, space_id, record_id, act(request, "memory.records.update", body), "Record saved."
    )


@login_required
@require_POST
def delete(request, space_id: str, record_id: str):
    body: dict = {
        "space_id": space_id,
        "record_id": record_id,
        "expected_revision": _expected(request),
    }
    body.update(ReasonForm.member_of(request.POST))
    if not request.POST.get("confirmed"):
        messages.error(
            request, "Tick the box to delete: the content cannot be restored. Nothing changed."
        )
        return redirect("reviews:record", space_id, record_id)
    return _outcome(
        request,
        space_id,
        record_id,
        act(request, "memory.records.delete", body),
        "Record deleted: its content is erased, the tombstone stays.",
    )
