"""Space screen: freeze/unfreeze with a reason, subject fence/unfence/archive and context fences,
pending_receipts (updating itself while work is pending)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from memory.ops.base import call
from memory.wire.errors import WireError
from reviews.console import act, describe, principal_of, read
from reviews.forms import ReasonForm


def space_wire(request, space_id: str) -> dict:
    for space in read(request, "memory.spaces.list", {})["spaces"]:
        if space["space_id"] == space_id:
            return space
    raise Http404("space")


@login_required
def space(request, space_id: str):
    sp = space_wire(request, space_id)
    subject, subject_error = None, None
    subject_id = request.GET.get("subject", "").strip()
    if subject_id:
        try:
            subject = call(
                principal_of(request),
                "memory.subjects.get",
                {"space_id": space_id, "subject_id": subject_id},
            )["subject"]
        except WireError as err:
            subject_error = describe(err)
    return render(
        request,
        "reviews/space.html",
        {
            "space_id": space_id,
            "space": sp,
            "subject": subject,
            "subject_id": subject_id,
            "subject_error": subject_error,
        },
    )


@login_required
def pending(request, space_id: str):
    """The htmx partial: pending receipts, polled while non-zero."""
    return render(
        request,
        "reviews/_pending.html",
        {"space_id": space_id, "space": space_wire(request, space_id)},
    )


def _report(request, result, done: str) -> None:
    if result.ok:
        messages.success(request, done)
    else:
        messages.error(request, describe(result.error))


@login_required
@require_POST
def freeze(request, space_id: str):
    body = {"space_id": space_id, **ReasonForm.member_of(request.POST)}
    _report(
        request,
        act(request, "memory.spaces.freeze", body),
        "Space frozen: it accepts no change until unfrozen.",
    )
    return redirect("reviews:space", space_id)


@login_required
@require_POST
def unfreeze(request, space_id: str):
    _report(
        request, act(request, "memory.spaces.unfreeze", {"space_id": space_id}), "Space unfrozen."
    )
    return redirect("reviews:space", space_id)


@login_required
@require_POST
def fence(request, space_id: str):
    subject_id = request.POST.get("subject_id", "").strip()
    body = {
        "space_id": space_id,
        "subject_id": subject_id,
        "action": request.POST.get("action", ""),
    }
    if request.POST.get("context_id", "").strip():
        body["context_id"] = request.POST["context_id"].strip()
    body.update(ReasonForm.member_of(request.POST))
    if body["action"] == "archive" and not request.POST.get("confirmed"):
        messages.error(request, "Tick the box to archive: archiving is terminal. Nothing changed.")
        return redirect(reverse("reviews:space", args=[space_id]) + "?" + _q(subject_id))
    what = f"context {body['context_id']} of " if "context_id" in body else ""
    _report(
        request,
        act(request, "memory.subjects.fence", body),
        f"Done: {body['action']} {what}subject {subject_id}.",
    )
    return redirect(reverse("reviews:space", args=[space_id]) + "?" + _q(subject_id))


def _q(subject_id: str) -> str:
    from urllib.parse import urlencode

    return urlencode({"subject": subject_id})
