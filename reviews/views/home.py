"""The spaces the console user can see (memory.spaces.list) and the spaces it operates."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from memory.ops.base import call
from reviews.operators import operated_spaces


@login_required
def home(request):
    principal = getattr(request.user, "principal", None)
    spaces = call(principal, "memory.spaces.list", {})["spaces"] if principal else []
    return render(
        request,
        "reviews/home.html",
        {
            "principal": principal,
            "spaces": spaces,
            "operated": operated_spaces(request.user),
        },
    )
