"""A stateful model of grants (docs/protocol.md#grants): random chains of memory.grants.grant / .revoke through the
ops layer (`memory.ops.base.call`, the same gates as the wire), checked after every step against
an in-memory model:

- every answer (success or error code) is the one the model predicts;
- no derived grant covers more than its parent, on any dimension, judged with
  `Coverage.covers` over a small universe of (capability, subject, placement);
- every principal's coverage, at several instants (now and after expiries), equals the union of
  the grants the model holds effective: so revoking any ancestor removes all coverage of its
  descendants at once, and an expired parent leaves nothing behind.
Each example runs in a fresh space, so examples do not see each other's grants."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from memory.access import ADMIN, Coverage, coverage_for
from memory.models import Grant, Principal, Space
from memory.ops.base import call
from memory.services.operators import issue_root_grant
from memory.timeutil import iso, now
from memory.wire.errors import WireError

pytestmark = pytest.mark.django_db

CAPS = [ADMIN, "grants_issue", "records_read", "records_write", "recall"]
SUBJECTS = ["u1", "u2", "u3"]
CONTEXTS = ["c1", "c2", "c3"]
PLACEMENTS = [(None, None), ("shared", None)] + [("context", c) for c in CONTEXTS]
EXPIRY_HOURS = [None, 1, 2, 3]
DIMENSIONS = ["capabilities", "subject_ids", "context_ids", "shared_access", "expires_at"]
INSTANT_HOURS = [0, 1.5, 2.5, 24]
_spaces = itertools.count()


@dataclass
class ModelGrant:
    grant_id: str
    grantee: str
    issuer: str
    parent: str | None
    capabilities: set[str]
    subject_ids: set[str] | None
    context_ids: set[str] | None
    shared_access: bool
    expires_at: datetime | None
    revoked: bool = False

    def has(self, capability: str) -> bool:
        return capability in self.capabilities or ADMIN in self.capabilities

    def contains(self, want: dict) -> bool:
        """Non-amplification (docs/protocol.md#grants): this grant ⊇ `want` on every dimension."""

        def subset(child, parent):
            return parent is None or (child is not None and child <= parent)

        return (
            all(self.has(c) for c in want["capabilities"])
            and subset(want["subject_ids"], self.subject_ids)
            and subset(want["context_ids"], self.context_ids)
            and (self.shared_access or not want["shared_access"])
            and (
                self.expires_at is None
                or (want["expires_at"] is not None and want["expires_at"] <= self.expires_at)
            )
        )

    def reaches(self, other: ModelGrant) -> bool:
        """This grant reaches every subject and placement `other` does (an admin administers
        only what it covers: docs/grants.md, issue 26)."""
        return self.contains(
            {
                "capabilities": [],
                "subject_ids": other.subject_ids,
                "context_ids": other.context_ids,
                "shared_access": other.shared_access,
                "expires_at": self.expires_at,
            }
        )

    def bounded(self, dimension: str) -> bool:
        return {
            "capabilities": ADMIN not in self.capabilities,
            "subject_ids": self.subject_ids is not None,
            "context_ids": self.context_ids is not None,
            "shared_access": not self.shared_access,
            "expires_at": self.expires_at is not None,
        }[dimension]

    def covers(self, capability: str, subject: str, scope: str | None, context: str | None) -> bool:
        if not self.has(capability) or (
            self.subject_ids is not None and subject not in self.subject_ids
        ):
            return False
        if scope == "shared":
            return self.shared_access
        if scope == "context":
            return self.context_ids is None or context in self.context_ids
        return True


def optional_subset(universe: list[str]):
    return st.one_of(st.none(), st.sets(st.sampled_from(universe), min_size=1))


class GrantModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.t0 = now()
        self.space = Space.objects.create(
            space_id=f"gm{next(_spaces)}",
            display_name="grant model",
            created_at=self.t0,
            updated_at=self.t0,
        )
        self.principals = [Principal.objects.create(display_name=f"p{i}") for i in range(4)]
        root = issue_root_grant(self.space, self.principals[0])
        self.grants: dict[str, ModelGrant] = {
            root.grant_id: ModelGrant(
                root.grant_id,
                root.grantee_id,
                root.issuer_id,
                None,
                {ADMIN},
                None,
                None,
                True,
                None,
            )
        }

    # -- the model ---------------------------------------------------------------------------

    def effective(self, g: ModelGrant, at: datetime) -> bool:
        while g is not None:
            if g.revoked or (g.expires_at is not None and g.expires_at <= at):
                return False
            g = self.grants.get(g.parent) if g.parent else None
        return True

    def held(self, principal: Principal, at: datetime) -> list[ModelGrant]:
        return [
            g
            for g in self.grants.values()
            if g.grantee == principal.principal_id and self.effective(g, at)
        ]

    def predict_grant(
        self, issuer: Principal, want: dict, parent_id: str | None
    ) -> tuple[str | None, list[str]]:
        """(error code or None, the ids of the grants that may serve as parent)."""
        held = self.held(issuer, now())
        if not held:
            return "NOT_FOUND", []
        if parent_id is not None:
            named = [g for g in held if g.grant_id == parent_id]
            if not named:
                return "NOT_FOUND", []
            held = named
        issuers = [g for g in held if g.has("grants_issue")]
        if not issuers:
            return "PERMISSION_DENIED", []
        fitting = [g.grant_id for g in issuers if g.contains(want)]
        return (None, fitting) if fitting else ("AMPLIFICATION_DENIED", [])

    # -- rules -------------------------------------------------------------------------------

    @initialize()
    def start(self) -> None:
        assert len(self.grants) == 1

    def holders(self) -> list[Principal]:
        return [p for p in self.principals if self.held(p, now())]

    def pick_caller(self, pick: int, stranger: bool) -> Principal:
        """Mostly a principal holding an effective grant; sometimes anyone (often an outsider)."""
        holders = self.holders()
        pool = self.principals if stranger or not holders else holders
        return pool[pick % len(pool)]

    @rule(
        pick=st.integers(0, 50),
        stranger=st.sampled_from([False, False, False, True]),
        grantee=st.integers(0, 3),
        capabilities=st.sets(st.sampled_from(CAPS), min_size=1, max_size=3),
        issuing=st.booleans(),
        subject_ids=optional_subset(SUBJECTS),
        context_ids=optional_subset(CONTEXTS),
        shared_access=st.booleans(),
        expiry=st.sampled_from(EXPIRY_HOURS),
        narrow=st.booleans(),
        stretch=st.sampled_from([None, None, *DIMENSIONS]),
        parent_mode=st.sampled_from(["any", "named", "named", "foreign"]),
    )
    def issue(
        self,
        pick,
        stranger,
        grantee,
        capabilities,
        issuing,
        subject_ids,
        context_ids,
        shared_access,
        expiry,
        narrow,
        stretch,
        parent_mode,
    ):
        issuer, grantee = self.pick_caller(pick, stranger), self.principals[grantee]
        if issuing:  # chains only grow through grants that can issue
            capabilities = capabilities | {"grants_issue"}
        expires_at = None if expiry is None else self.t0 + timedelta(hours=expiry)
        own = self.held(issuer, now())
        if stretch is not None:  # stretch from a grant that is bounded on that dimension, if any
            own = [g for g in own if g.bounded(stretch)] or own
        base = own[pick % len(own)] if own else None
        if narrow and base is not None:
            # Mostly-valid requests: the draw clipped to one of the issuer's grants, so chains grow.
            if ADMIN not in base.capabilities:
                capabilities = (capabilities & base.capabilities) or set(
                    sorted(base.capabilities)[:1]
                )
            if base.subject_ids is not None:
                subject_ids = (subject_ids or set()) & base.subject_ids or set(base.subject_ids)
            if base.context_ids is not None:
                context_ids = (context_ids or set()) & base.context_ids or set(base.context_ids)
            shared_access = shared_access and base.shared_access
            if base.expires_at is not None:
                expires_at = min(expires_at or base.expires_at, base.expires_at)
            # Then, sometimes, ask for exactly one step more than that grant on one dimension.
            if stretch == "capabilities" and ADMIN not in base.capabilities:
                capabilities = capabilities | {next(c for c in CAPS if c not in base.capabilities)}
            elif stretch == "subject_ids" and base.subject_ids is not None:
                subject_ids = None if pick % 2 else set(subject_ids) | {f"x{pick}"}
            elif stretch == "context_ids" and base.context_ids is not None:
                context_ids = None if pick % 2 else set(context_ids) | {f"x{pick}"}
            elif stretch == "shared_access":
                shared_access = True
            elif stretch == "expires_at" and base.expires_at is not None:
                expires_at = None if pick % 2 else base.expires_at + timedelta(minutes=1)
        parent_id = None
        if parent_mode == "named" and base is not None:
            parent_id = base.grant_id
        elif parent_mode == "foreign":
            ids = sorted(self.grants)
            parent_id = ids[pick % len(ids)]
        req = {
            "space_id": self.space.space_id,
            "grantee_principal_id": grantee.principal_id,
            "capabilities": sorted(capabilities),
            "shared_access": shared_access,
        }
        if subject_ids is not None:
            req["subject_ids"] = sorted(subject_ids)
        if context_ids is not None:
            req["context_ids"] = sorted(context_ids)
        if expires_at is not None:
            req["expires_at"] = iso(expires_at)
        if parent_id is not None:
            req["parent_grant_id"] = parent_id
        want = {
            "capabilities": capabilities,
            "subject_ids": subject_ids,
            "context_ids": context_ids,
            "shared_access": shared_access,
            "expires_at": expires_at,
        }
        expected, parents = self.predict_grant(issuer, want, parent_id)
        try:
            receipt = call(issuer, "memory.grants.grant", req)["receipt"]
        except WireError as err:
            assert err.code == expected, (err.code, err.details, expected)
            event(f"grant: {err.code}")
            return
        assert expected is None, f"expected {expected}, the grant was issued"
        row = Grant.objects.get(grant_id=receipt["refs"][0]["id"])
        event(f"grant: issued at depth {len(row.ancestor_ids)}")
        assert row.parent_id in parents
        self.grants[row.grant_id] = ModelGrant(
            row.grant_id,
            grantee.principal_id,
            issuer.principal_id,
            row.parent_id,
            set(capabilities),
            subject_ids,
            context_ids,
            shared_access,
            expires_at,
        )

    @precondition(lambda self: len(self.grants) > 1)
    @rule(
        pick=st.integers(0, 50),
        stranger=st.sampled_from([False, False, False, True]),
        root=st.sampled_from([False] * 7 + [True]),
        again=st.sampled_from([False, False, False, True]),
    )
    def revoke(self, pick, stranger, root, again):
        caller = self.pick_caller(pick // 3, stranger)
        # The root rarely: revoking it ends every chain in the space at once (checked, but once).
        ids = sorted(
            g.grant_id
            for g in self.grants.values()
            if (g.parent is None) == root and g.revoked == again
        )
        if not ids:
            return
        target = self.grants[ids[pick % len(ids)]]
        held = self.held(caller, now())
        if not held:
            expected = "NOT_FOUND"
        elif target.issuer != caller.principal_id and not any(
            ADMIN in g.capabilities and g.reaches(target) for g in held
        ):
            expected = "PERMISSION_DENIED"
        elif target.revoked:
            expected = "GRANT_REVOKED"
        else:
            expected = None
        try:
            call(
                caller,
                "memory.grants.revoke",
                {"space_id": self.space.space_id, "grant_id": target.grant_id},
            )
        except WireError as err:
            assert err.code == expected, (err.code, expected)
            event(f"revoke: {err.code}")
            return
        assert expected is None, f"expected {expected}, the grant was revoked"
        target.revoked = True
        descendants = [
            g for g in self.grants.values() if g.parent and target.grant_id in self._chain(g)
        ]
        event(f"revoke: ok, with {'some' if descendants else 'no'} descendants")

    def _chain(self, g: ModelGrant) -> list[str]:
        out = []
        while g.parent:
            out.append(g.parent)
            g = self.grants[g.parent]
        return out

    # -- invariants --------------------------------------------------------------------------

    @invariant()
    def no_derived_grant_covers_more_than_its_parent(self) -> None:
        rows = {g.grant_id: g for g in Grant.objects.filter(space=self.space)}
        assert set(rows) == set(self.grants)
        for grant in rows.values():
            if grant.parent_id is None:
                continue
            parent = rows[grant.parent_id]
            assert (
                grant.expires_at is None
                or parent.expires_at is None
                or grant.expires_at <= parent.expires_at
            )
            assert parent.expires_at is None or grant.expires_at is not None
            child_cov = Coverage(self.space, grant.grantee, [grant], self.t0)
            parent_cov = Coverage(self.space, parent.grantee, [parent], self.t0)
            for cap, subject, (scope, context) in itertools.product(CAPS, SUBJECTS, PLACEMENTS):
                if child_cov.covers(cap, subject, scope, context):
                    assert parent_cov.covers(cap, subject, scope, context), (
                        grant.grant_id,
                        cap,
                        subject,
                        scope,
                        context,
                    )

    @invariant()
    def coverage_is_the_union_of_effective_grants(self) -> None:
        for hours, principal in itertools.product(INSTANT_HOURS, self.principals):
            at = self.t0 + timedelta(hours=hours) if hours else now()
            model = self.held(principal, at)
            try:
                cov = coverage_for(self.space.space_id, principal, at)
            except WireError as err:
                assert err.code == "NOT_FOUND" and not model, (principal.principal_id, hours)
                continue
            assert {g.grant_id for g in cov.grants} == {g.grant_id for g in model}
            for cap, subject, (scope, context) in itertools.product(CAPS, SUBJECTS, PLACEMENTS):
                expected = any(g.covers(cap, subject, scope, context) for g in model)
                assert cov.covers(cap, subject, scope, context) is expected, (
                    cap,
                    subject,
                    scope,
                    context,
                    hours,
                )


def test_grant_chains_never_amplify_and_revocation_reaches_every_descendant():
    run_state_machine_as_test(
        GrantModel,
        settings=settings(
            max_examples=30,
            stateful_step_count=15,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
