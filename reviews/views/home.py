"""The spaces the console user can see (memory.spaces.list) and the spaces it operates."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from memory.ops.base import call
from memory.wire.errors import WireError
from reviews.operators import operated_spaces


def pending_candidates(principal, space_id: str) -> int | None:
    """The pending candidates the caller may read in the space (`total_authorized` of a one-row
    page), or None without a read capability there."""
    try:
        body = {"space_id": space_id, "states": ["pending"], "page_size": 1}
        return call(principal, "memory.candidates.list", body)["total_authorized"]
    except WireError:
        return None


@login_required
def home(request):
    principal = getattr(request.user, "principal", None)
    spaces = call(principal, "memory.spaces.list", {})["spaces"] if principal else []
    for space in spaces:
        space["pending_candidates"] = pending_candidates(principal, space["space_id"])
    return render(
        request,
        "reviews/home.html",
        {
            "principal": principal,
            "spaces": spaces,
            "operated": operated_spaces(request.user),
        },
    )
