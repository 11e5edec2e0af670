"""Queue screen: a space's pending candidates through memory.candidates.list, filtered by
subject, classification label and capture placement (all members of the op, so the counts are
the op's `total_authorized` over the whole filtered set), oldest or newest first, paged with the
op's keyset cursor forward and, through the session, back. The filters travel with the moderator
to the candidate page and back (`QueueFilters.query()`).

Bulk promote / drop / dismiss calls the op once per selected candidate with a key derived from
the form's one key, so a double submit does each candidate once. A bulk drop is confirmed on a
page that says what will happen before anything is consumed."""

from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from memory.timeutil import now
from memory.wire import types as t
from memory.wire.errors import WireError
from reviews import people
from reviews.console import PORT, attempt, describe, new_key, principal_of
from reviews.forms import LABELS, BulkForm, QueueFilters
from reviews.similar import normalized, record_duplicates

PAGE_SIZE = 50
PREV_KEY = "queue_prev"
PREV_KEEP = 200  # remembered (next cursor → this page's cursor) pairs per session


def _remember(request: HttpRequest, cursor: str | None, following: str | None) -> str | None:
    """The cursor of the page before this one ("" for the first page), or None when unknown
    (a bookmarked page): the op's cursor only goes forward, so the way back is remembered."""
    pairs: dict[str, Any] = request.session.get(PREV_KEY, {})
    before = pairs.get(cursor) if cursor else None
    if following:
        pairs[following] = cursor or ""
        if len(pairs) > PREV_KEEP:
            for stale in list(pairs)[: len(pairs) - PREV_KEEP]:
                del pairs[stale]
        request.session[PREV_KEY] = pairs
    return before


def mark_duplicates(
    request: HttpRequest, space_id: str, candidates: list[t.MemoryCandidate]
) -> list[dict[str, object]]:
    """The page's rows: each candidate, with `duplicate_record`: an existing record of the same
    subject, readable by the moderator, whose text is the same once case, spacing and
    punctuation are set aside (reviews.similar.record_duplicates, two queries per page); else
    `duplicate_of`: the first earlier candidate on the page of the same subject with that
    text."""
    found = (
        record_duplicates(principal_of(request), space_id, candidates, now()) if candidates else {}
    )
    rows: list[dict[str, object]] = []
    seen: dict[tuple[str, str], str] = {}
    for c in candidates:
        row: dict[str, object] = {**c}
        if c["candidate_id"] in found:
            row["duplicate_record"] = found[c["candidate_id"]]
        key = (c["subject_id"], normalized(c["proposed"]["content"]["text"]))
        if key[1] and key in seen:
            row["duplicate_of"] = seen[key]
        else:
            seen.setdefault(key, c["candidate_id"])
        rows.append(row)
    return rows


def queue_page(request: HttpRequest, space_id: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """One screen of the queue; raises Http404 when the space is not visible."""
    filters = QueueFilters(params)
    cursor = filters.value("cursor") or None
    answer, error = attempt(request, PORT.candidates_list, filters.wire(space_id, PAGE_SIZE))
    if error is not None and error.code == "NOT_FOUND" and error.details.get("resource") == "space":
        raise Http404(error.message) from error
    candidates = answer["candidates"] if answer else []
    next_cursor = answer["next_cursor"] if answer else None
    before = _remember(request, cursor, next_cursor)
    return {
        "space_id": space_id,
        "filters": filters,
        "q": filters.query(),
        "queue_filters": filters.hidden(),
        "candidates": mark_duplicates(request, space_id, candidates),
        "principal_names": people.named(c["captured_by_principal_id"] for c in candidates),
        "total": answer["total_authorized"] if answer else 0,
        "next_cursor": next_cursor,
        "cursor": cursor or "",
        "prev_cursor": before,
        "first_page": not cursor,
        "labels": LABELS,
        "error": describe(error) if error else None,
        "label_counts": _counts(c["classification"]["label"] for c in candidates),
        "bulk_key": new_key(),
    }


def _counts(values: Iterable[str]) -> list[tuple[str, int]]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return sorted(out.items())


class HtmxHttpRequest(HttpRequest):
    """A request through django-htmx's middleware (settings.MIDDLEWARE), which sets `htmx`."""

    htmx: Any


@login_required
def queue(request: HtmxHttpRequest, space_id: str) -> HttpResponse:
    ctx = queue_page(request, space_id, request.GET)
    template = (
        "reviews/_queue_table.html"
        if request.htmx and not request.htmx.boosted
        else "reviews/queue.html"
    )
    return render(request, template, ctx)


VERBS = {"promote": "promoted", "drop": "dropped", "dismiss": "dismissed"}


@login_required
@require_POST
def bulk(request: HttpRequest, space_id: str) -> HttpResponse:
    """Promote, drop or dismiss the selected candidates. Each candidate gets its own key derived
    from the form's one key, so a resubmit of the same form does each one at most once."""
    form = BulkForm(request.POST)
    filters = QueueFilters(request.POST)
    back = reverse("reviews:queue", args=[space_id]) + filters.query()
    if not form.is_valid():
        messages.error(request, form.problem())
        return redirect(back)
    ids = form.cleaned_data["candidate_ids"]
    action = form.cleaned_data["action"]
    if action == "drop" and not form.cleaned_data["confirmed"]:
        return render(
            request,
            "reviews/bulk_confirm.html",
            {
                "space_id": space_id,
                "ids": ids,
                "form": form,
                "queue_filters": filters.hidden(),
                "back": back,
            },
        )
    done, taken, records, failed = 0, 0, 0, []
    principal = principal_of(request)
    for cid in ids:
        try:
            if action == "dismiss":
                receipt = PORT.candidates_dismiss(principal, form.wire_dismiss(space_id, cid))
            else:
                receipt = PORT.candidates_review(principal, form.wire_review(space_id, cid))
            done += 1
            records += sum(1 for r in receipt["receipt"]["refs"] if r["type"] == "record")
        except WireError as err:
            if err.code == "CANDIDATE_CONSUMED":
                taken += 1
            else:
                failed.append(describe(err))
    if done:
        made = f" into {records} record{'s' if records != 1 else ''}" if action == "promote" else ""
        messages.success(
            request, f"{done} candidate{'s' if done != 1 else ''} {VERBS[action]}{made}."
        )
    if taken:
        messages.info(request, f"{taken} had already been handled by another reviewer.")
    for line in sorted(set(failed)):
        messages.error(request, line)
    return redirect(back)
