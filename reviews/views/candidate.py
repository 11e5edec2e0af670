"""Candidate screen: the proposed content (text; structured data pretty-printed; cognition as a
table), where it came from, and the evidence to decide with: the subject's records most similar
to it (memory.recall, over what the moderator's grants cover, with the engine's score and a
likely-duplicate mark, reviews/similar.py), the subject's newest records and its profile
documents. A frozen space or a fenced/archived subject or capture context is a banner before
the actions, which are disabled with the reason.

Every read is an op call as the moderator; a panel the moderator may not read (no `recall`,
`records_read` or profile grant) says so instead of failing the page. The queue's filters come
along in the query string: after an action the next candidate is the head of the same filtered
queue, and "← Queue" returns to it. When another reviewer got there first
(CANDIDATE_CONSUMED) the console says so and moves on: no error page."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from memory.wire import types as t
from memory.wire.errors import WireError
from reviews import people
from reviews.console import PORT, act, attempt, describe, read
from reviews.forms import QueueFilters, ReviewForm
from reviews.similar import DUPLICATE_AT, overlap
from reviews.views.space import space_wire
from reviews.words import named

# Labels that are also record kinds (the op falls back to `note` for the others).
KIND_LABELS = {"preference", "fact", "event", "plan"}
COGNITION_COLUMNS = [
    "type",
    "proposition",
    "attribution",
    "basis",
    "times",
    "polarity",
    "confidence",
    "intensity",
]
SIMILAR = 5
NEWEST = 5
DONE = {"promote": "Promoted", "fragment": "Fragmented", "drop": "Dropped", "dismiss": "Dismissed"}


def _candidate(request: HttpRequest, space_id: str, candidate_id: str) -> t.MemoryCandidate:
    return read(request, PORT.candidates_get, {"space_id": space_id, "candidate_id": candidate_id})[
        "candidate"
    ]


def _why(err: WireError | None) -> str | None:
    """Why a panel's read (`attempt`) left it empty, in a sentence; None when it answered."""
    if err is None:
        return None
    if err.code == "PERMISSION_DENIED":
        need = err.details.get("capability", "a read grant")
        return f"Your grants do not include {need} on this subject."
    return describe(err)


def evidence(request: HttpRequest, space_id: str, cand: t.MemoryCandidate) -> dict[str, Any]:
    subject_id, text = cand["subject_id"], cand["proposed"]["content"]["text"]
    recall, recall_err = attempt(
        request,
        PORT.recall,
        {
            "space_id": space_id,
            "subject_id": subject_id,
            "query": {"text": text[:4096]},
            "budget": {"max_records": SIMILAR},
        },
    )
    similar = []
    for hit in recall["recall"]["results"] if recall else []:
        likeness = overlap(text, hit["record"]["content"]["text"])
        similar.append({**hit, "overlap": likeness, "duplicate": likeness >= DUPLICATE_AT})
    newest, newest_err = attempt(
        request,
        PORT.records_list,
        {"space_id": space_id, "subject_id": subject_id, "page_size": NEWEST},
    )
    profile, profile_err = attempt(
        request, PORT.profile_get, {"space_id": space_id, "subject_id": subject_id}
    )
    return {
        "similar": similar,
        "similar_note": _why(recall_err),
        "duplicate_at": DUPLICATE_AT,
        "duplicates": [s for s in similar if s["duplicate"]],
        "newest": newest["records"] if newest else [],
        "newest_total": newest["total_authorized"] if newest else None,
        "newest_note": _why(newest_err),
        "documents": profile["profile"]["documents"] if profile else [],
        "profile_note": _why(profile_err),
    }


def blocked(request: HttpRequest, space_id: str, cand: t.MemoryCandidate) -> list[str]:
    """Why no review can be committed now (the op's state gates, said before trying)."""
    reasons = []
    space = space_wire(request, space_id)
    if space["state"] == "frozen":
        why = space.get("freeze_reason")
        reasons.append("The space is frozen" + (f": {why}" if why else "") + ".")
    subject, _ = attempt(
        request, PORT.subjects_get, {"space_id": space_id, "subject_id": cand["subject_id"]}
    )
    if subject:
        s = subject["subject"]
        placement = cand["capture_scope"]["placement"]
        if s["state"] == "archived":
            reasons.append(f"The subject {s['subject_id']} is archived: it accepts no writes.")
        elif s["state"] == "fenced":
            reasons.append(f"The subject {s['subject_id']} is fenced: no writes until unfenced.")
        if placement["scope"] == "context" and placement["context_id"] in s["fenced_context_ids"]:
            reasons.append(
                f"The capture context {placement['context_id']} is fenced for this subject."
            )
    return reasons


def next_pending(
    request: HttpRequest, space_id: str, filters: QueueFilters, after: str | None
) -> str | None:
    """The head of the same filtered queue (other than `after`), or None."""
    answer, _ = attempt(request, PORT.candidates_list, filters.wire(space_id, 2, paged=False))
    if answer is None:
        return None
    return next(
        (c["candidate_id"] for c in answer["candidates"] if c["candidate_id"] != after), None
    )


def _move_on(
    request: HttpRequest, space_id: str, candidate_id: str, filters: QueueFilters
) -> HttpResponse:
    following = next_pending(request, space_id, filters, after=candidate_id)
    if following:
        return redirect(reverse("reviews:candidate", args=[space_id, following]) + filters.query())
    return redirect(reverse("reviews:queue", args=[space_id]) + filters.query())


def _render(
    request: HttpRequest,
    space_id: str,
    cand: t.MemoryCandidate,
    filters: QueueFilters,
    status: int = 200,
    form: ReviewForm | None = None,
) -> HttpResponse:
    content = cand["proposed"]["content"]
    rows = [
        [_cell(entry.get(col)) for col in COGNITION_COLUMNS]
        for entry in content.get("cognition", [])
    ]
    kept = form.kept() if form is not None else {}
    fragments = kept.get("fragments") or [{"text": content["text"], "kind": ""}]
    pending = cand["state"] == "pending"
    found = evidence(request, space_id, cand)
    named = people.named(
        [cand["captured_by_principal_id"], cand.get("consumed_by_principal_id")]
        + [r["provenance"]["author_principal_id"] for r in found["newest"]]
    )
    return render(
        request,
        "reviews/candidate.html",
        {
            "space_id": space_id,
            "c": cand,
            "content": content,
            "cognition_rows": rows,
            "cognition_columns": COGNITION_COLUMNS,
            "form": kept,
            "errors": form.errors if form is not None else {},
            "fragments": fragments,
            "pending": pending,
            "blocked": blocked(request, space_id, cand) if pending else [],
            "q": filters.query(),
            "queue_filters": filters.hidden(),
            "principal_names": named,
            "default_kind": cand["proposed"].get("kind")
            or (label if (label := cand["classification"]["label"]) in KIND_LABELS else "note"),
            **found,
        },
        status=status,
    )


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_cell(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    return str(value)


@login_required
def candidate(request: HttpRequest, space_id: str, candidate_id: str) -> HttpResponse:
    cand = _candidate(request, space_id, candidate_id)
    return _render(request, space_id, cand, QueueFilters(request.GET))


@login_required
@require_POST
def review(request: HttpRequest, space_id: str, candidate_id: str) -> HttpResponse:
    cand = _candidate(request, space_id, candidate_id)
    filters = QueueFilters(request.POST)
    form = ReviewForm(request.POST)
    if not form.is_valid():
        for line in form.non_field_errors():
            messages.error(request, str(line))
        return _render(request, space_id, cand, filters, status=400, form=form)
    action = form.cleaned_data["action"]
    if action == "dismiss":
        result = act(request, PORT.candidates_dismiss, form.wire_dismiss(space_id, candidate_id))
    else:
        result = act(request, PORT.candidates_review, form.wire_review(space_id, cand))
    if result.ok:
        records = [r["id"] for r in result.receipt["refs"] if r["type"] == "record"]
        what = named(cand["proposed"]["content"]["text"], cand["subject_id"])
        into = f" into {', '.join(records)}" if records else ""
        messages.success(request, f"{DONE[action]} {what} (candidate {candidate_id}{into}).")
        return _move_on(request, space_id, candidate_id, filters)
    if result.code == "CANDIDATE_CONSUMED":
        fresh = _candidate(request, space_id, candidate_id)
        messages.info(
            request,
            f"Another reviewer got there first: {named(cand['proposed']['content']['text'], cand['subject_id'])} "
            f"(candidate {candidate_id}) was already {fresh['state']}. Moving on.",
        )
        return _move_on(request, space_id, candidate_id, filters)
    assert result.error is not None
    messages.error(request, describe(result.error))
    return _render(request, space_id, cand, filters, status=result.error.status, form=form)
