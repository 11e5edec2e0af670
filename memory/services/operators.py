"""Operators' actions (docs/protocol.md#operators): spaces, principals, API tokens and root grants. These bootstrap
the grants of docs/protocol.md#grants, so they sit outside the ops and their gates; who may call them is the
caller's business (`manage.py spoke` runs with the server's own rights, the console's Operate
page checks guardian's `memory.operate_space`). `manage.py spoke`, the console and the demo all
go through here, so a principal, a token or a root grant is made one way.

Bad input raises `OperatorError` with a message for the operator and changes nothing."""

import re

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, QuerySet

from memory.access import grants_held
from memory.models import ApiToken, Grant, Principal, Space
from memory.models.principals import hash_token
from memory.timeutil import now
from memory.wire.validation import catalog

SPACE_ID = re.compile(r"^[A-Za-z0-9._:@-]{1,128}$")
RATE = re.compile(r"^[1-9][0-9]{0,8}/(s|sec|second|m|min|minute|h|hour|d|day)$")
KINDS = (Principal.SERVICE, Principal.USER)


class OperatorError(ValueError):
    """Refused operator input; `str(err)` is the message to show (it never echoes a token)."""


class UserNotLinkable(OperatorError):
    """The console user named for a new principal does not exist or already has one. The console
    shows one message for both, so an operator of one space learns nothing of other users."""


def create_space(space_id: str, display_name: str | None = None) -> Space:
    if not SPACE_ID.match(space_id):
        raise OperatorError("A space id is 1-128 characters of [A-Za-z0-9._:@-].")
    if Space.objects.filter(space_id=space_id).exists():
        raise OperatorError(f"Space {space_id} already exists.")
    at = now()
    return Space.objects.create(
        space_id=space_id, display_name=display_name or space_id, created_at=at, updated_at=at
    )


def get_space(space_id: str) -> Space:
    space = Space.objects.filter(space_id=space_id).first()
    if space is None:
        raise OperatorError(f"No space {space_id}.")
    return space


def get_principal(principal_id: str) -> Principal:
    principal = Principal.objects.filter(principal_id=principal_id).first()
    if principal is None:
        raise OperatorError(f"No principal {principal_id}.")
    return principal


def create_principal(
    display_name: str,
    kind: str = Principal.SERVICE,
    username: str = "",
    home: Space | None = None,
) -> Principal:
    """A principal, linked to the console user `username` when given (one principal per user),
    belonging to `home` when an operator of that space made it (the console)."""
    if not display_name or kind not in KINDS:
        raise OperatorError("A principal needs a display name and a kind (service or user).")
    user = None
    if username:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise UserNotLinkable(f"No user named {username}.")
        if Principal.objects.filter(user=user).exists():
            raise UserNotLinkable(f"User {username} is already linked to a principal.")
    return Principal.objects.create(
        display_name=display_name, kind=kind, user=user, home_space=home
    )


def create_principal_with_token(
    display_name: str,
    kind: str = Principal.SERVICE,
    username: str = "",
    token_label: str = "",
    root_grant_in: Space | None = None,
    home: Space | None = None,
) -> tuple[Principal, str]:
    """A principal (of `home`, when given) and its first token (and a root grant in
    `root_grant_in`), all or nothing. The clear token is returned once and never stored."""
    with transaction.atomic():
        principal = create_principal(display_name, kind, username, home)
        token = issue_token(principal, token_label)
        if root_grant_in is not None:
            issue_root_grant(root_grant_in, principal)
    return principal, token


def create_home_principal(
    home: Space,
    display_name: str,
    kind: str = Principal.SERVICE,
    username: str = "",
    token_label: str | None = "",
    root_grant: bool = False,
) -> tuple[Principal, str | None]:
    """A principal an operator of `home` makes (the console): it belongs to that space, gets a
    first token unless `token_label` is None, and a root grant in `home` when asked; all or
    nothing. Who may be given a token is the caller's rule (reviews.operators)."""
    with transaction.atomic():
        principal = create_principal(display_name, kind, username, home)
        token = None if token_label is None else issue_token(principal, token_label)
        if root_grant:
            issue_root_grant(home, principal)
    return principal, token


def issue_token(principal: Principal, label: str = "") -> str:
    return principal.issue_token(label=label)


def revoke_tokens(tokens: QuerySet[ApiToken]) -> int:
    """Revoke the still-active tokens among `tokens`; how many were."""
    return tokens.filter(revoked_at__isnull=True).update(revoked_at=now())


def revoke_token_value(token: str) -> None:
    """Revoke an active token given its clear value."""
    if not revoke_tokens(ApiToken.objects.filter(token_hash=hash_token(token))):
        raise OperatorError("No such active token.")


def set_rate(principal: Principal, rate: str) -> Principal:
    """The principal's own request rate (`N/s`, `N/min`, `N/hour`, `N/day`), or `default` for
    the server's SPOKE_MEMORY_RATE (memory/limits.py)."""
    rate = rate.strip().lower()
    if rate == "default":
        principal.rate = None
    elif RATE.match(rate):
        principal.rate = rate
    else:
        raise OperatorError("The rate must be N/s, N/min, N/hour or N/day (N ≥ 1), or 'default'.")
    principal.save(update_fields=["rate"])
    return principal


def issue_root_grant(space: Space, principal: Principal) -> Grant:
    """A space_admin grant with no parent. Its issuer is the grantee itself; `parent_grant_id:
    null` is what marks it as a root. Bumps the space revision like any grant."""
    at = now()
    limit = settings.SPOKE_MEMORY_LIMITS["max_grants_per_principal"]
    with transaction.atomic():
        # the principal's row lock orders this with memory.grants.grant to the same grantee
        Principal.objects.select_for_update().filter(pk=principal.pk).first()
        held = grants_held(space.space_id, principal, at)
        if held >= limit:
            raise OperatorError(
                f"{principal.principal_id} already holds {held} effective grants in {space.space_id}"
                f" (limits.max_grants_per_principal is {limit}); revoke one first."
            )
        Space.objects.filter(pk=space.pk).update(revision=F("revision") + 1, updated_at=at)
        return Grant.objects.create(
            space=space,
            grantee=principal,
            issuer=principal,
            parent=None,
            ancestor_ids=[],
            capabilities=["space_admin"],
            shared_access=True,
            created_at=at,
        )


# An agent's grant (issue 41): what an agent that proposes and recalls needs, and nothing that
# reviews. `subjects_write` lets its `remember` create a subject it has not met yet.
AGENT_CAPABILITIES = ("capture", "recall", "records_read", "profile_read", "subjects_write")


def create_agent(
    space: Space,
    display_name: str = "Agent",
    subject_ids: list[str] | None = None,
    home: Space | None = None,
    token_label: str = "agent",  # noqa: S107 - a label, not a secret
) -> tuple[Principal, str, Grant]:
    """A principal for an agent, its first token and one grant in `space` with
    AGENT_CAPABILITIES (narrowed to `subject_ids` when given), shared access, every context; all
    or nothing. Like a root grant it has no parent (an operator bootstraps it); unlike one it
    holds no space_admin, so its holder can neither review nor issue grants, and a space-wide
    admin may revoke it (docs/decisions/agent-principals.md)."""
    if not display_name.strip():
        raise OperatorError("An agent needs a display name.")
    if subject_ids is not None:
        subject_ids = sorted(set(subject_ids))
        limit = settings.SPOKE_MEMORY_LIMITS["max_list_items"]
        valid = catalog().component_validator("SubjectId")
        if not subject_ids or len(subject_ids) > limit:
            raise OperatorError(f"Give 1 to {limit} subject ids, or none for every subject.")
        if any(not valid.is_valid(s) for s in subject_ids):
            raise OperatorError("A subject id is 1-128 characters of [A-Za-z0-9._:@-].")
    at = now()
    with transaction.atomic():
        principal = create_principal(display_name.strip()[:200], Principal.SERVICE, home=home)
        token = issue_token(principal, token_label)
        Space.objects.filter(pk=space.pk).update(revision=F("revision") + 1, updated_at=at)
        grant = Grant.objects.create(
            space=space,
            grantee=principal,
            issuer=principal,
            parent=None,
            ancestor_ids=[],
            capabilities=list(AGENT_CAPABILITIES),
            subject_ids=subject_ids,
            shared_access=True,
            created_at=at,
        )
    return principal, token, grant
