"""Objects for the tests and the benches (bench/ imports this module too), made the way the
product makes them: a space and a principal by their models, as `manage.py spoke` does; a root
grant by the operators' service; subjects and everything after them through the ops themselves
(`memory.ops.base.call`: admission, grants, mutate(), receipts), never by writing rows that an
op would have written differently."""

from __future__ import annotations

from collections.abc import Iterable

from memory.models import Principal, Space
from memory.ops.base import call
from memory.services.operators import issue_root_grant
from memory.timeutil import now


def make_space(space_id: str = "s1", display_name: str | None = None) -> Space:
    at = now()
    return Space.objects.create(
        space_id=space_id, display_name=display_name or space_id, created_at=at, updated_at=at
    )


def make_principal(
    name: str, kind: str = "service", token_label: str = "", **fields
) -> tuple[Principal, str]:
    """A principal and its one clear token (stored hashed; this is the only time it is seen)."""
    principal = Principal.objects.create(display_name=name, kind=kind, **fields)
    return principal, principal.issue_token(token_label)


def make_admin(
    space: Space, name: str = "admin", token_label: str = "", **fields
) -> tuple[Principal, str]:
    """A principal with a root grant (space_admin over the whole space) and its token."""
    principal, token = make_principal(name, token_label=token_label, **fields)
    issue_root_grant(space, principal)
    return principal, token


def ensure_subjects(principal: Principal, space_id: str, subject_ids: Iterable[str]) -> list[str]:
    ids = list(subject_ids)
    for subject_id in ids:
        call(principal, "memory.subjects.ensure", {"space_id": space_id, "subject_id": subject_id})
    return ids
