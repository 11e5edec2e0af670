"""Grants screen (docs/protocol.md#model-memorygrant, #grants): the admin view of a space's grants with their chain, an issue
form that explains AMPLIFICATION_DENIED dimension by dimension, revoke with confirmation."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from memory.access import CAPABILITIES
from memory.timeutil import iso
from memory.wire import types as t
from reviews import people
from reviews.console import PORT, act, attempt, describe, read
from reviews.forms import GrantForm, PageForm, RevokeForm

DIMENSION_TEXT = {
    "capabilities": "Capabilities: you asked for {asked}; none of your issuing grants holds {missing} (they hold {held}).",
    "subject_ids": "Subjects: you asked for {asked}; your issuing grant covers {held}.",
    "context_ids": "Contexts: you asked for {asked}; your issuing grant covers {held}.",
    "shared_access": "Shared access: you asked for it, but your issuing grant has no shared access.",
    "expires_at": "Expiry: a grant can't outlive its parent; you asked for {asked}, your issuing grant ends {held}.",
}


def _listing(request: HttpRequest, space_id: str, cursor: str) -> tuple[t.GrantsListResponse, str]:
    body: t.GrantsListRequest = {
        "space_id": space_id,
        "view": "admin",
        "include_inactive": True,
        "page_size": 100,
    }
    if cursor:
        body["cursor"] = cursor
    answer, err = attempt(request, PORT.grants_list, body)
    if answer is not None:
        return answer, "admin"
    if err is not None and err.code != "PERMISSION_DENIED":
        raise Http404(err.message) from err
    body["view"] = "own"
    return read(request, PORT.grants_list, body), "own"


def _own_issuers(request: HttpRequest, space_id: str) -> list[t.MemoryGrant]:
    own = read(request, PORT.grants_list, {"space_id": space_id, "view": "own", "page_size": 200})
    return [
        g
        for g in own["grants"]
        if g["effective"] and ({"grants_issue", "space_admin"} & set(g["capabilities"]))
    ]


def _show(values: Any, absent: str) -> str:
    if values is None:
        return absent
    if isinstance(values, bool):
        return "yes" if values else "no"
    return ", ".join(values) if isinstance(values, list) else str(values)


def explain(
    exceeds: list[str], asked: t.GrantsGrantRequest, issuers: list[t.MemoryGrant]
) -> list[str]:
    """One sentence per exceeded dimension, naming what was asked and what the caller holds."""
    held_caps = sorted({c for g in issuers for c in g["capabilities"]})
    best = issuers[0] if issuers else None
    held = {
        "capabilities": _show(held_caps, "none"),
        "subject_ids": _show(best.get("subject_ids") if best else None, "all subjects"),
        "context_ids": _show(best.get("context_ids") if best else None, "all contexts"),
        "expires_at": _show(best.get("expires_at") if best else None, "never"),
    }
    shown = {
        "capabilities": _show(asked.get("capabilities"), "none"),
        "subject_ids": _show(asked.get("subject_ids"), "all subjects"),
        "context_ids": _show(asked.get("context_ids"), "all contexts"),
        "expires_at": _show(asked.get("expires_at"), "never"),
    }
    admin = "space_admin" in held_caps
    missing = [] if admin else [c for c in asked.get("capabilities", []) if c not in held_caps]
    return [
        DIMENSION_TEXT[d].format(
            asked=shown.get(d, ""), held=held.get(d, ""), missing=_show(missing, "none")
        )
        for d in exceeds
        if d in DIMENSION_TEXT
    ]


def _choices(named: dict[str, str]) -> list[tuple[str, str]]:
    """The grantee picker: the principals the caller's grants list names (grantees and issuers,
    `named` by display name), by name. Coverage-respecting by construction: only people the
    caller's own `memory.grants.list` answer shows."""
    return sorted(named.items(), key=lambda c: (c[1], c[0]))


def _page(
    request: HttpRequest,
    space_id: str,
    form: GrantForm,
    status: int = 200,
    denied: list[str] | None = None,
) -> HttpResponse:
    listing, view = _listing(request, space_id, PageForm(request.GET).value())
    grants = listing["grants"]
    named = people.named(
        pid for g in grants for pid in (g["grantee_principal_id"], g["issuer_principal_id"])
    )
    children: dict[str, list[str]] = {}
    for g in grants:
        if g["parent_grant_id"]:
            children.setdefault(g["parent_grant_id"], []).append(g["grant_id"])
    return render(
        request,
        "reviews/grants.html",
        {
            "space_id": space_id,
            "grants": grants,
            "choices": _choices(named),
            "principal_names": named,
            "children": children,
            "view": view,
            "next_cursor": listing["next_cursor"],
            "form": form,
            "denied": denied or [],
            "capabilities": CAPABILITIES,
        },
        status=status,
    )


@login_required
def grants(request: HttpRequest, space_id: str) -> HttpResponse:
    return _page(request, space_id, GrantForm())


@login_required
@require_POST
def issue(request: HttpRequest, space_id: str) -> HttpResponse:
    form = GrantForm(request.POST)
    if not form.is_valid():
        return _page(request, space_id, form, status=400)
    body = form.wire(space_id)
    result = act(request, PORT.grants_grant, body)
    if result.ok:
        messages.success(request, f"Grant {result.receipt['refs'][0]['id']} issued.")
        return redirect("reviews:grants", space_id)
    denied = []
    if result.code == "AMPLIFICATION_DENIED":
        denied = explain(
            result.refusal.details.get("exceeds", []), body, _own_issuers(request, space_id)
        )
    messages.error(request, describe(result.refusal))
    return _page(request, space_id, form, status=result.refusal.status, denied=denied)


def _find_grant(request: HttpRequest, space_id: str, grant_id: str) -> t.MemoryGrant:
    cursor = ""
    while True:
        listing, _ = _listing(request, space_id, cursor)
        for g in listing["grants"]:
            if g["grant_id"] == grant_id:
                return g
        cursor = listing["next_cursor"] or ""
        if not cursor:
            raise Http404("grant")


@login_required
def revoke(request: HttpRequest, space_id: str, grant_id: str) -> HttpResponse:
    if request.method == "POST":
        form = RevokeForm(request.POST)
        form.is_valid()  # the reason is optional, and a long one is cut, never refused
        result = act(request, PORT.grants_revoke, form.wire(space_id, grant_id))
        if result.ok:
            messages.success(
                request,
                f"Grant {grant_id} revoked; grants issued under it are no longer effective.",
            )
        else:
            messages.error(request, describe(result.refusal))
        return redirect("reviews:grants", space_id)
    grant = _find_grant(request, space_id, grant_id)
    return render(
        request, "reviews/grant_revoke.html", {"space_id": space_id, "grant": grant, "now": iso}
    )
