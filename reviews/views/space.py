"""Space screen: freeze/unfreeze with a reason, subject fence/unfence/archive and context fences,
pending_receipts (updating itself while work is pending)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from memory.wire import types as t
from reviews.console import PORT, Result, act, attempt, describe, read
from reviews.forms import FenceForm, FreezeForm, SubjectForm, first_error


def space_wire(request: HttpRequest, space_id: str) -> t.MemorySpace:
    for space in read(request, PORT.spaces_list, {})["spaces"]:
        if space["space_id"] == space_id:
            return space
    raise Http404("space")


@login_required
def space(request: HttpRequest, space_id: str) -> HttpResponse:
    sp = space_wire(request, space_id)
    lookup = SubjectForm(request.GET)
    subject, subject_error = None, None
    body = lookup.wire(space_id)
    if body is not None:
        answer, err = attempt(request, PORT.subjects_get, body)
        subject = answer["subject"] if answer else None
        subject_error = describe(err) if err else None
    return render(
        request,
        "reviews/space.html",
        {
            "space_id": space_id,
            "space": sp,
            "subject": subject,
            "subject_id": lookup.value(),
            "subject_error": subject_error,
        },
    )


@login_required
def pending(request: HttpRequest, space_id: str) -> HttpResponse:
    """The htmx partial: pending receipts, polled while non-zero."""
    return render(
        request,
        "reviews/_pending.html",
        {"space_id": space_id, "space": space_wire(request, space_id)},
    )


def _report(request: HttpRequest, result: Result, done: str) -> None:
    if result.ok:
        messages.success(request, done)
    else:
        messages.error(request, describe(result.refusal))


@login_required
@require_POST
def freeze(request: HttpRequest, space_id: str) -> HttpResponse:
    form = FreezeForm(request.POST)
    form.is_valid()  # the reason is optional, and a long one is cut, never refused
    _report(
        request,
        act(request, PORT.spaces_freeze, form.wire(space_id)),
        "Space frozen: it accepts no change until unfrozen.",
    )
    return redirect("reviews:space", space_id)


@login_required
@require_POST
def unfreeze(request: HttpRequest, space_id: str) -> HttpResponse:
    _report(
        request,
        act(request, PORT.spaces_unfreeze, t.SpacesUnfreezeRequest(space_id=space_id)),
        "Space unfrozen.",
    )
    return redirect("reviews:space", space_id)


@login_required
@require_POST
def fence(request: HttpRequest, space_id: str) -> HttpResponse:
    form = FenceForm(request.POST)
    subject_id = request.POST.get("subject_id", "").strip()
    back = reverse("reviews:space", args=[space_id]) + "?" + _q(subject_id)
    if not form.is_valid():
        messages.error(request, f"{first_error(form)} Nothing changed.")
        return redirect(back)
    body = form.wire(space_id)
    if body["action"] == "archive" and not form.cleaned_data["confirmed"]:
        messages.error(request, "Tick the box to archive: archiving is terminal. Nothing changed.")
        return redirect(back)
    what = f"context {body['context_id']} of " if "context_id" in body else ""
    _report(
        request,
        act(request, PORT.subjects_fence, body),
        f"Done: {body['action']} {what}subject {body['subject_id']}.",
    )
    return redirect(back)


def _q(subject_id: str) -> str:
    from urllib.parse import urlencode

    return urlencode({"subject": subject_id})
