"""Reflections screen: one subject's reflections (memory.reflections.list, newest first, each
with its read-time `stale`), the subject's reflection state (memory.reflections.state: data
sufficiency, missing required profile kinds, whether the latest reflection is stale) and a
Generate form (memory.reflections.generate). The pending generation shows its receipt
(memory.receipts.get) in a fragment that polls itself until the receipt is terminal; the
terminal answer carries the refreshed panel out of band, so the new reflection appears without
a reload."""

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from memory.wire import types as t
from reviews.console import PORT, TERMINAL, act, attempt, describe, read, receipt, ref_id
from reviews.forms import PageForm

GENERATE = "memory.reflections.generate"
PAGE_SIZE = 20


def panel(request: HttpRequest, space_id: str, subject_id: str, cursor: str = "") -> dict[str, Any]:
    """State and one page of reflections; raises Http404 when the caller can't read them."""
    state = read(request, PORT.reflections_state, {"space_id": space_id, "subject_id": subject_id})[
        "state"
    ]
    page: t.ReflectionsListRequest = {
        "space_id": space_id,
        "subject_id": subject_id,
        "page_size": PAGE_SIZE,
    }
    listing: t.ReflectionsListResponse = {"reflections": [], "next_cursor": None}
    notice = None
    if cursor:
        answer, err = attempt(request, PORT.reflections_list, {**page, "cursor": cursor})
        if answer is not None:
            listing = answer
        elif err is not None and err.code != "CURSOR_INVALID":
            raise Http404(err.message) from err
        else:
            notice = "The reflections changed since that page was drawn: showing the newest again."
            cursor = ""
    if not cursor:
        listing = read(request, PORT.reflections_list, page)
    return {
        "state": state,
        "reflections": listing["reflections"],
        "next_cursor": listing["next_cursor"],
        "list_notice": notice,
        "space_id": space_id,
        "subject_id": subject_id,
    }


@login_required
def reflections(request: HttpRequest, space_id: str, subject_id: str) -> HttpResponse:
    # The receipt is read before the panel: a generation that commits in between then shows as
    # pending (and its poll brings the panel), never as committed above a list that lacks it.
    receipt_id = request.GET.get("receipt", "").strip()
    got = receipt(request, space_id, receipt_id, GENERATE) if receipt_id else None
    ctx = panel(request, space_id, subject_id, PageForm(request.GET).value())
    if got is not None:
        ctx.update(receipt=got, reflection_id=ref_id(got, "reflection"))
    return render(request, "reviews/reflections.html", ctx)


@login_required
@require_POST
def generate(request: HttpRequest, space_id: str, subject_id: str) -> HttpResponse:
    result = act(
        request,
        PORT.reflections_generate,
        t.ReflectionsGenerateRequest(space_id=space_id, subject_id=subject_id),
    )
    url = reverse("reviews:reflections", args=[space_id, subject_id])
    if result.ok:
        messages.success(
            request, "Generation admitted: it runs on a worker, its progress is shown below."
        )
        return redirect(url + "?" + urlencode({"receipt": result.receipt["receipt_id"]}))
    if result.code == "NOT_FOUND":
        raise Http404(result.refusal.message)
    messages.error(request, describe(result.refusal))
    return redirect(url)


@login_required
def progress(request: HttpRequest, space_id: str, subject_id: str, receipt_id: str) -> HttpResponse:
    """The htmx fragment: the generation's receipt, polling itself while pending. Once terminal
    it drops the polling attributes and brings the refreshed panel (state and list) along."""
    got = receipt(request, space_id, receipt_id, GENERATE)
    ctx: dict[str, Any] = {
        "space_id": space_id,
        "subject_id": subject_id,
        "receipt": got,
        "reflection_id": ref_id(got, "reflection"),
    }
    if got["status"] in TERMINAL:
        ctx.update(panel(request, space_id, subject_id), oob=True)
    return render(request, "reviews/_reflection_progress.html", ctx)
