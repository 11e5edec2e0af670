"""Who may operate a space (SPEC §8): Django staff holding guardian's object permission
`memory.operate_space` on that Space. The choices are explicit: `with_superuser=False` and
`accept_global_perms=False`, so a superuser is not silently an operator of every space; it
grants itself (or anyone) the permission per space in the Django admin, which it controls anyway.
Operators act outside the grants of SPEC §4 (they bootstrap them), so their reach is kept to
their spaces: a token can be issued or revoked only for a principal whose grants all lie in
spaces the operator operates (or that holds none yet)."""

from __future__ import annotations

from django.http import Http404
from guardian.shortcuts import get_objects_for_user

from memory.models import Grant, Principal, Space

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
