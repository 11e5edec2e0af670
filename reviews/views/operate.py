"""Operator pages (SPEC §8): create principals, issue and revoke API tokens, make root grants for
a space. Guarded by guardian's `memory.operate_space` on that space (see reviews.operators), not
by the grants of SPEC §4, which these actions bootstrap. Every action goes through
`memory.services.operators`, the same service `manage.py spoke` calls."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from memory.models import ApiToken, Principal
from memory.services import operators
from memory.services.operators import OperatorError, UserNotLinkable
from reviews.operators import active_tokens, listed_principals, manageable, require_operator


@login_required
def operate(request, space_id: str):
    space = require_operator(request.user, space_id)
    principals = listed_principals(request.user, space)
    tokens = active_tokens(principals)
    return render(
        request,
        "reviews/operate.html",
        {
            "space_id": space_id,
            "space": space,
            "principals": principals,
            "tokens": tokens,
            "new_token": request.session.pop("console_new_token", None),
        },
    )


def _show_token_once(request, principal: Principal, token: str) -> None:
    # Kept in the session only until the next page view shows it, then gone.
    request.session["console_new_token"] = {"principal_id": principal.principal_id, "token": token}


@login_required
@require_POST
def create_principal(request, space_id: str):
    space = require_operator(request.user, space_id)
    try:
        principal, token = operators.create_principal_with_token(
            request.POST.get("display_name", "").strip()[:200],
            request.POST.get("kind", Principal.SERVICE),
            username=request.POST.get("username", "").strip(),
            token_label=f"created in the console for {space_id}",
            root_grant_in=space if request.POST.get("root_grant") else None,
        )
    except UserNotLinkable:
        messages.error(request, "That user does not exist or is already linked to a principal.")
        return redirect("reviews:operate", space_id)
    except OperatorError as err:
        messages.error(request, str(err))
        return redirect("reviews:operate", space_id)
    _show_token_once(request, principal, token)
    messages.success(
        request, f"Principal {principal.display_name} ({principal.principal_id}) created."
    )
    return redirect("reviews:operate", space_id)


def _manageable_principal(request, principal_id: str) -> Principal | None:
    principal = Principal.objects.filter(principal_id=principal_id).first()
    if principal is None or not manageable(request.user, principal):
        messages.error(
            request,
            "No such principal is managed by you (its grants must all lie in spaces you operate).",
        )
        return None
    return principal


@login_required
@require_POST
def issue_token(request, space_id: str):
    require_operator(request.user, space_id)
    principal = _manageable_principal(request, request.POST.get("principal_id", "").strip())
    if principal is not None:
        _show_token_once(
            request,
            principal,
            operators.issue_token(principal, label=request.POST.get("label", "")[:200]),
        )
        messages.success(
            request, f"Token issued for {principal.display_name} ({principal.principal_id})."
        )
    return redirect("reviews:operate", space_id)


@login_required
@require_POST
def revoke_token(request, space_id: str):
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
    if token is None or not manageable(request.user, token.principal):
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
def root_grant(request, space_id: str):
    space = require_operator(request.user, space_id)
    try:
        typed = request.POST.get("principal_id", "").strip()
        principal = operators.get_principal(typed or request.POST.get("principal_pick", "").strip())
    except OperatorError:
        messages.error(request, "No such principal.")
    else:
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
