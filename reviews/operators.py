"""Who may operate a space (SPEC §8): Django staff holding guardian's object permission
`memory.operate_space` on that Space. The choices are explicit: `with_superuser=False` and
`accept_global_perms=False`, so a superuser is not silently an operator of every space; it
grants itself (or anyone) the permission per space in the Django admin, which it controls anyway.
Operators act outside the grants of SPEC §4 (they bootstrap them), so their reach is kept to
their spaces: a token can be issued or revoked only for a principal whose grants all lie in
spaces the operator operates (or that holds none yet)."""

from __future__ import annotations

from django.db.models import Q
from django.http import Http404
from guardian.shortcuts import get_objects_for_user

from memory.models import ApiToken, Grant, Principal, Space

PERM = "memory.operate_space"


def operated_spaces(user) -> list[Space]:
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return []
    qs = get_objects_for_user(
        user, PERM, klass=Space, with_superuser=False, accept_global_perms=False
    )
    return list(qs.order_by("space_id"))


def require_operator(user, space_id: str) -> Space:
    for space in operated_spaces(user):
        if space.space_id == space_id:
            return space
    raise Http404("not an operator of this space")


def manageable(user, principal: Principal) -> bool:
    mine = {s.space_id for s in operated_spaces(user)}
    theirs = set(Grant.objects.filter(grantee=principal).values_list("space_id", flat=True))
    return bool(mine) and theirs <= mine


def listed_principals(user, space: Space) -> list[Principal]:
    """The principals the Operate page of `space` shows: those holding a grant here and those
    holding none anywhere (made without a root grant, so only a token names them). Each carries
    `grants_here` and `manageable`: whether this operator may issue and revoke its tokens (see
    `manageable`)."""
    anywhere = Grant.objects.values("grantee_id")
    here = set(Grant.objects.filter(space=space).values_list("grantee_id", flat=True))
    principals = list(
        Principal.objects.filter(Q(pk__in=here) | ~Q(pk__in=anywhere))
        .select_related("user")
        .order_by("display_name", "principal_id")
    )
    mine = [s.space_id for s in operated_spaces(user)]
    elsewhere = set(
        Grant.objects.filter(grantee__in=principals)
        .exclude(space_id__in=mine)
        .values_list("grantee_id", flat=True)
    )
    for p in principals:
        p.manageable = bool(mine) and p.pk not in elsewhere  # type: ignore[attr-defined]
        p.grants_here = p.pk in here  # type: ignore[attr-defined]
    return principals


def active_tokens(principals: list[Principal]) -> list[ApiToken]:
    """Every active token of these principals, oldest first, each with its principal."""
    by_id = {p.pk: p for p in principals}
    tokens = list(
        ApiToken.objects.filter(principal__in=principals, revoked_at__isnull=True).order_by(
            "created_at", "pk"
        )
    )
    for t in tokens:
        t.principal = by_id[t.principal_id]
    return tokens
