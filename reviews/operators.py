"""Who may operate a space (docs/protocol.md#operators): Django staff holding guardian's object permission
`memory.operate_space` on that Space. The choices are explicit: `with_superuser=False` and
`accept_global_perms=False`, so a superuser is not silently an operator of every space; it
grants itself (or anyone) the permission per space in the Django admin, which it controls anyway.

Operators act outside the grants of docs/protocol.md#grants (they bootstrap them), and a token reaches every
space its principal holds a grant in, so who manages a principal decides who can reach what
(issue 26; docs/operators.md "Who manages a principal"). A principal belongs to its *home*
space, the one whose Operate page made it:
- its tokens are revoked by the operators of its home (a grant elsewhere never takes that away);
- a new token is issued only by an operator of its home who also operates every space the
  principal holds an effective grant in, and never for a principal linked to another console
  user (a person: the token would let the operator act as them wherever they are granted);
- a root grant is made only for a principal whose home the operator operates.
A principal without a home (made by `manage.py spoke`, the demo, or before homes existed) gets
no token and no root grant from the console; its tokens are revoked there only by an operator of
every space it holds an effective grant in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Q
from django.http import Http404
from guardian.shortcuts import get_objects_for_user

from memory.access import effective_q
from memory.models import ApiToken, Grant, Principal, Space
from memory.timeutil import now

PERM = "memory.operate_space"
# The console user of a request (`request.user`).
ConsoleUser: TypeAlias = User | AnonymousUser


def operated_spaces(user: ConsoleUser) -> list[Space]:
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return []
    qs = get_objects_for_user(
        user, PERM, klass=Space, with_superuser=False, accept_global_perms=False
    )
    return list(qs.order_by("space_id"))


def require_operator(user: ConsoleUser, space_id: str) -> Space:
    for space in operated_spaces(user):
        if space.space_id == space_id:
            return space
    raise Http404("not an operator of this space")


@dataclass(frozen=True)
class Management:
    """What an operator may do with one principal's credentials."""

    revoke: bool  # revoke its tokens, and give it a root grant in a space the operator operates
    issue: bool  # issue it a new token
    why_not: str  # why `issue` is refused, for the page ("" when it is not)


def reached_spaces(principals: list[Principal]) -> dict[str, set[str]]:
    """The spaces each principal holds an effective grant in (one query): where its tokens
    reach. Revoked and expired grants reach nothing, ever again (docs/protocol.md#grants)."""
    out: dict[str, set[str]] = {p.pk: set() for p in principals}
    rows = Grant.objects.filter(effective_q(now()), grantee__in=principals).values_list(
        "grantee_id", "space_id"
    )
    for grantee, space_id in rows:
        out[grantee].add(space_id)
    return out


def management(
    user: ConsoleUser,
    principal: Principal,
    mine: set[str] | None = None,
    reached: set[str] | None = None,
) -> Management:
    if mine is None:
        mine = {s.space_id for s in operated_spaces(user)}
    if reached is None:
        reached = reached_spaces([principal])[principal.pk]
    if principal.home_space_id is not None:
        owns = principal.home_space_id in mine
    else:
        owns = bool(reached) and reached <= mine
    if not owns:
        return Management(False, False, "It belongs to a space you do not operate.")
    if principal.home_space_id is None:
        why = "It was made outside the console: manage.py spoke issue-token gives it tokens."
    elif not reached <= mine:
        why = "It also holds grants in a space you do not operate."
    elif principal.user_id is not None and principal.user_id != user.pk:
        why = "It is a console user's own principal: a token would let you act as them."
    else:
        why = ""
    return Management(True, not why, why)


def listed_principals(user: ConsoleUser, space: Space) -> list[Principal]:
    """The principals the Operate page of `space` shows: those holding a grant here and those
    made here (their home). Each carries `grants_here` and `management` (what this operator may
    do with its tokens)."""
    here = set(Grant.objects.filter(space=space).values_list("grantee_id", flat=True))
    principals = list(
        Principal.objects.filter(Q(pk__in=here) | Q(home_space=space))
        .select_related("user")
        .order_by("display_name", "principal_id")
    )
    mine = {s.space_id for s in operated_spaces(user)}
    reached = reached_spaces(principals)
    for p in principals:
        p.management = management(user, p, mine, reached[p.pk])  # type: ignore[attr-defined]
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
