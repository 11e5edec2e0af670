"""Operator pages (docs/protocol.md#operators): create principals, issue and revoke API tokens, make root grants for
a space. Guarded by guardian's `memory.operate_space` on that space (see reviews.operators), not
by the grants of docs/protocol.md#grants, which these actions bootstrap. Every action goes through
`memory.services.operators`, the same service `manage.py spoke` calls."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_POST

from memory.models import ApiToken, Principal, Space
from memory.services import operators
from memory.services.operators import OperatorError, UserNotLinkable
from reviews.operators import active_tokens, listed_principals, management, require_operator

NOT_YOURS = "No such principal is managed by you (it must belong to a space you operate)."


@login_required
def operate(request: HttpRequest, space_id: str) -> HttpResponse:
    return _page(request, require_operator(request.user, space_id))


def _page(
    request: HttpRequest, space: Space, new_token: dict[str, Any] | None = None
) -> HttpResponse:
    principals = listed_principals(request.user, space)
    response = render(
        request,
        "reviews/operate.html",
        {
            "space_id": space.space_id,
            "space": space,
            "principals": principals,
            "tokens": active_tokens(principals),
            "new_token": new_token,
        },
    )
    if new_token is not None:
        patch_cache_control(response, no_store=True, private=True)
    return response


def _show_token_once(
    request: HttpRequest, space: Space, principal: Principal, token: str, mcp: bool = False
) -> HttpResponse:
    """The answer to the POST that made the token shows it, once: it is never stored, not even
    in the session until the next page view (issue 26 item 10), and the answer is not cached.
    Reloading it asks the browser to send the form again, which makes another token. `mcp`:
    an agent's token, shown with the space's MCP URL as this request reached the server and a
    host configuration that names the token by an environment variable, never by value."""
    shown: dict[str, Any] = {"principal_id": principal.principal_id, "token": token}
    if mcp:
        shown["mcp_url"] = request.build_absolute_uri(f"/mcp/{space.space_id}")
    return _page(request, space, shown)


@login_required
@require_POST
def create_principal(request: HttpRequest, space_id: str) -> HttpResponse:
    """A principal of this space (its home). It gets a first token shown once, unless it is
    linked to another console user: a person's token is not the operator's to hold."""
    space = require_operator(request.user, space_id)
    username = request.POST.get("username", "").strip()
    someone_else = bool(username) and username != request.user.get_username()
    try:
        principal, token = operators.create_home_principal(
            space,
            request.POST.get("display_name", "").strip()[:200],
            request.POST.get("kind", Principal.SERVICE),
            username=username,
            token_label=None if someone_else else f"created in the console for {space_id}",
            root_grant=bool(request.POST.get("root_grant")),
        )
    except UserNotLinkable:
        messages.error(request, "That user does not exist or is already linked to a principal.")
        return redirect("reviews:operate", space_id)
    except OperatorError as err:
        messages.error(request, str(err))
        return redirect("reviews:operate", space_id)
    done = f"Principal {principal.display_name} ({principal.principal_id}) created."
    if token is None:
        messages.success(
            request,
            f"{done} It is {username}'s own: they sign in to the console as it; no API token is "
            "issued to you for it.",
        )
        return redirect("reviews:operate", space_id)
    messages.success(request, done)
    return _show_token_once(request, space, principal, token)


def _principal_to_issue(request: HttpRequest, principal_id: str) -> Principal | None:
    principal = Principal.objects.filter(principal_id=principal_id).first()
    rights = management(request.user, principal) if principal is not None else None
    if rights is None or not rights.revoke:
        messages.error(request, NOT_YOURS)
        return None
    if not rights.issue:
        messages.error(request, f"No token issued for {principal}: {rights.why_not}")
        return None
    return principal


@login_required
@require_POST
def issue_token(request: HttpRequest, space_id: str) -> HttpResponse:
    space = require_operator(request.user, space_id)
    principal = _principal_to_issue(request, request.POST.get("principal_id", "").strip())
    if principal is None:
        return redirect("reviews:operate", space_id)
    token = operators.issue_token(principal, label=request.POST.get("label", "")[:200])
    messages.success(
        request, f"Token issued for {principal.display_name} ({principal.principal_id})."
    )
    return _show_token_once(request, space, principal, token)


@login_required
@require_POST
def revoke_token(request: HttpRequest, space_id: str) -> HttpResponse:
    """Revoke one active token, asked once on the page (the `confirmed` box). The token's clear
    value is never shown again: it was never stored; the page names a token by its label,
    creation time and the first characters of its hash."""
    require_operator(request.user, space_id)
    pk = request.POST.get("token_pk", "")
    token = (
        ApiToken.objects.select_related("principal")
        .filter(pk=int(pk) if pk.isdigit() else 0, revoked_at__isnull=True)
        .first()
    )
    if token is None or not management(request.user, token.principal).revoke:
        messages.error(request, "No such active token is managed by you.")
    elif not request.POST.get("confirmed"):
        messages.error(
            request,
            "Nothing was revoked: tick the box to confirm that clients using this token will be "
            "refused from now on.",
        )
    else:
        operators.revoke_tokens(ApiToken.objects.filter(pk=token.pk))
        messages.success(
            request,
            f"Token {token.token_hash[:8]}… of {token.principal.display_name} "
            f"({token.principal_id}) revoked; requests with it are refused from now on.",
        )
    return redirect("reviews:operate", space_id)


@login_required
@require_POST
def root_grant(request: HttpRequest, space_id: str) -> HttpResponse:
    """A root grant here, only for a principal this operator manages: one of another space
    would be taken out of its own operators' hands (they could no longer issue its tokens).
    Absent and not managed get one message."""
    space = require_operator(request.user, space_id)
    typed = request.POST.get("principal_id", "").strip()
    chosen = typed or request.POST.get("principal_pick", "").strip()
    principal = Principal.objects.filter(principal_id=chosen).first() if chosen else None
    if principal is None or not management(request.user, principal).revoke:
        messages.error(request, NOT_YOURS)
        return redirect("reviews:operate", space_id)
    try:
        grant = operators.issue_root_grant(space, principal)
    except OperatorError as err:  # the grantee holds limits.max_grants_per_principal
        messages.error(request, str(err))
    else:
        messages.success(
            request,
            f"Root grant {grant.grant_id} made for {principal.display_name} "
            f"({principal.principal_id}).",
        )
    return redirect("reviews:operate", space_id)


@login_required
@require_POST
def create_agent(request: HttpRequest, space_id: str) -> HttpResponse:
    """`manage.py spoke create-agent` on the page: a principal of this space for an agent, its
    token shown once, and a grant to capture, recall, read and create subjects (nothing that
    reviews), narrowed to the subjects typed (comma- or space-separated) when any are."""
    space = require_operator(request.user, space_id)
    typed = request.POST.get("subject_ids", "")[:20_000].replace(",", " ").split()
    try:
        principal, token, _ = operators.create_agent(
            space,
            request.POST.get("display_name", "").strip()[:200] or "Agent",
            typed or None,
            home=space,
            token_label=f"agent created in the console for {space_id}",
        )
    except OperatorError as err:
        messages.error(request, str(err))
        return redirect("reviews:operate", space_id)
    reach = f"{len(typed)} subject(s)" if typed else "every subject"
    messages.success(
        request,
        f"Agent {principal.display_name} ({principal.principal_id}) created: it may capture, "
        f"recall, read and create subjects ({reach}) in {space_id}, and cannot review. Its "
        "MCP URL and a host configuration are below its token.",
    )
    return _show_token_once(request, space, principal, token, mcp=True)
