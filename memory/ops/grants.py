"""memory.grants.list, .grant, .revoke, and root grants for operators (docs/protocol.md#grants)."""

from datetime import datetime
from typing import Any

from django.conf import settings

from memory.access import (
    Coverage,
    access_grant,
    coverage_for,
    effective_ids,
    effective_q,
    gate_space_writable,
    grant_has,
    grants_held,
)
from memory.context import OpContext
from memory.models import Grant, Principal
from memory.ops.signatures import op
from memory.selectors import cursors
from memory.services.mutation import MutationScope, Outcome
from memory.services.refs import grant_ref
from memory.timeutil import parse
from memory.wire import types as t
from memory.wire.errors import (
    AmplificationDenied,
    GrantRevoked,
    invalid,
    not_found,
    permission_denied,
)

OLDEST_FIRST = cursors.Keyset("created_at", "grant_id")
DIMENSIONS = ["capabilities", "subject_ids", "context_ids", "shared_access", "expires_at"]


def _subset(child: list[Any] | None, parent: list[Any] | None) -> bool:
    if parent is None:
        return True
    return child is not None and set(child) <= set(parent)


def exceeded(parent: Grant, want: dict[str, Any]) -> list[str]:
    """The dimensions on which `want` asks for more than `parent` covers."""
    out = []
    if not all(grant_has(parent, c) for c in want["capabilities"]):
        out.append("capabilities")
    if not _subset(want["subject_ids"], parent.subject_ids):
        out.append("subject_ids")
    if not _subset(want["context_ids"], parent.context_ids):
        out.append("context_ids")
    if want["shared_access"] and not parent.shared_access:
        out.append("shared_access")
    if parent.expires_at is not None and (
        want["expires_at"] is None or want["expires_at"] > parent.expires_at
    ):
        out.append("expires_at")
    return out


def choose_parent(cov: Coverage, want: dict[str, Any], parent_id: str | None) -> Grant:
    issuers = cov.with_capability("grants_issue")
    if parent_id is not None:
        named = next((g for g in cov.grants if g.grant_id == parent_id), None)
        if named is None:
            raise not_found("grant")
        issuers = [named] if grant_has(named, "grants_issue") else []
    if not issuers:
        raise permission_denied("grants_issue")
    best: list[str] | None = None
    for grant in issuers:
        over = exceeded(grant, want)
        if not over:
            return grant
        if best is None or len(over) < len(best):
            best = over
    raise AmplificationDenied(
        "The grant asks for more than any issuing grant of the caller covers.",
        exceeds=[d for d in DIMENSIONS if d in (best or [])],
    )


def check_grant_room(space_id: str, grantee: Principal, at: datetime) -> None:
    """limits.max_grants_per_principal: every effective grant is a term of the grantee's
    coverage, read on every call it makes (issue 26: 2,000 self-issued grants slowed every
    tenant). Revoked and expired grants do not count."""
    limit = settings.SPOKE_MEMORY_LIMITS["max_grants_per_principal"]
    held = grants_held(space_id, grantee, at)
    if held >= limit:
        raise invalid(
            "too_many_grants",
            "grantee_principal_id",
            "The grantee already holds limits.max_grants_per_principal effective grants in "
            "this space; revoke one first.",
            limit=limit,
            held=held,
        )


@op("memory.grants.grant")
def grant(ctx: OpContext, req: t.GrantsGrantRequest, scope: MutationScope) -> Outcome:
    try:
        expires_at = parse(req["expires_at"]) if "expires_at" in req else None
    except (ValueError, OverflowError):
        raise invalid("time", "expires_at", "expires_at is not a valid time.")
    want = {
        "capabilities": sorted(set(req["capabilities"])),
        "subject_ids": sorted(set(req["subject_ids"])) if "subject_ids" in req else None,
        "context_ids": sorted(set(req["context_ids"])) if "context_ids" in req else None,
        "shared_access": req.get("shared_access", False),
        "expires_at": expires_at,
    }
    cov = scope.coverage(req["space_id"])
    parent = choose_parent(cov, want, req.get("parent_grant_id"))
    # The grantee's row lock orders concurrent grants to one principal, so the bound holds. No
    # key: the grantee's own writes check their receipts' foreign key to this row (a key-share
    # lock) at COMMIT, while they hold the space row this grant waits for at its commit tail;
    # FOR UPDATE would close that cycle (tests/memory/ops/test_mutation_lock_order.py).
    grantee = (
        Principal.objects.select_for_update(no_key=True)
        .filter(principal_id=req["grantee_principal_id"])
        .first()
    )
    if grantee is None:
        raise not_found("principal")
    gate_space_writable(cov.space)
    if expires_at is not None and expires_at <= ctx.at:
        raise invalid("expires_in_past", "expires_at", "expires_at must lie in the future.")
    check_grant_room(cov.space_id, grantee, ctx.at)
    new = Grant.objects.create(
        space=cov.space,
        grantee=grantee,
        issuer=ctx.principal,
        parent=parent,
        ancestor_ids=[*parent.ancestor_ids, parent.grant_id],
        created_at=ctx.at,
        extensions=req.get("extensions", {}),
        **want,
    )
    return Outcome(refs=[grant_ref(new)])


@op("memory.grants.revoke")
def revoke(ctx: OpContext, req: t.GrantsRevokeRequest, scope: MutationScope) -> Outcome:
    cov = scope.coverage(req["space_id"])
    target = access_grant(cov, req["grant_id"], lock=True)
    if target.issuer_id != ctx.principal.principal_id and not cov.administers_grant(target):
        raise permission_denied("space_admin")
    gate_space_writable(cov.space)
    if target.state == Grant.REVOKED:
        raise GrantRevoked("The grant is already revoked.")
    target.state, target.revoked_at, target.revoke_reason = (
        Grant.REVOKED,
        ctx.at,
        req.get("reason"),
    )
    target.revision += 1
    target.save(update_fields=["state", "revoked_at", "revoke_reason", "revision"])
    mark_descendants_revoked(target)
    return Outcome(refs=[grant_ref(target)])


def mark_descendants_revoked(root: Grant) -> None:
    """Every grant below `root` loses its effect with it: one update per generation, under the
    space lock the revoke holds, so no child can be issued from a branch being cut."""
    parents = [root.grant_id]
    in_space = Grant.objects.filter(space_id=root.space_id)  # a child is in its parent's space
    while parents:
        children = list(in_space.filter(parent_id__in=parents).values_list("grant_id", flat=True))
        in_space.filter(grant_id__in=children, ancestor_revoked=False).update(ancestor_revoked=True)
        parents = children


@op("memory.grants.list")
def grants_list(ctx: OpContext, req: t.GrantsListRequest) -> t.GrantsListResponse:
    cov = coverage_for(req["space_id"], ctx.principal, ctx.at)
    qs = Grant.objects.filter(space=cov.space)
    if req["view"] == "admin":
        cov.require_admin()
    else:
        qs = qs.filter(grantee=ctx.principal)
    if not req.get("include_inactive", False):
        qs = qs.filter(effective_q(ctx.at))
    live: set[str] = set()  # the page's effective grants, one query for the whole page
    items, next_cursor = cursors.keyset_page(
        ctx,
        req,
        cov.space.revision,
        cov,
        qs,
        OLDEST_FIRST,
        lambda g: g.to_wire(ctx.at, g.grant_id in live),
        prefetch=lambda page: live.update(effective_ids(page, ctx.at)),
    )
    return {
        "grants": items,
        "next_cursor": next_cursor,
    }
