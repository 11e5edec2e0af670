"""The spaces the console user can see (memory.spaces.list) and the spaces it operates."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memory.models import Principal
from memory.wire import types as t
from memory.wire.errors import WireError
from reviews.console import PORT
from reviews.operators import operated_spaces


def pending_candidates(principal: Principal, space_id: str) -> int | None:
    """The pending candidates the caller may read in the space (`total_authorized` of a one-row
    page), or None without a read capability there."""
    try:
        body: t.CandidatesListRequest = {
            "space_id": space_id,
            "states": ["pending"],
            "page_size": 1,
        }
        return PORT.candidates_list(principal, body)["total_authorized"]
    except WireError:
        return None


@login_required
def home(request: HttpRequest) -> HttpResponse:
    principal = getattr(request.user, "principal", None)
    spaces: list[dict[str, object]] = []
    if principal is not None:
        for space in PORT.spaces_list(principal, {})["spaces"]:
            pending = pending_candidates(principal, space["space_id"])
            spaces.append({**space, "pending_candidates": pending})
    return render(
        request,
        "reviews/home.html",
        {
            "principal": principal,
            "spaces": spaces,
            "operated": operated_spaces(request.user),
        },
    )
