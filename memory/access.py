"""Coverage (docs/protocol.md#grants) and the one `access_*` function per protected object type (docs/protocol.md#authorization a-b).

A caller's coverage in a space is the union of its effective grants there, loaded fresh on every
call (reads are re-authorized each time). Each action must be covered by one grant. Objects the
caller cannot read answer NOT_FOUND exactly as absent ones do."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar, get_args

from django.db import connection, models
from django.db.models import BooleanField, Expression, F, Q

from memory import rows, statements
from memory.models import Candidate, Grant, Principal, Receipt, Record, Space, Subject
from memory.models.records import CONTEXT, SHARED
from memory.wire.canonical import canonical, digest
from memory.wire.errors import (
    ContextFenced,
    SpaceFrozen,
    SubjectArchived,
    SubjectFenced,
    not_found,
    permission_denied,
)
from memory.wire.types import Capability

ADMIN = "space_admin"
P = TypeVar("P", bound=Record | Candidate)  # an object placed in a subject's context or shared
# The grant capabilities, in the schema's order (docs/protocol.md#grants), from the generated wire types.
CAPABILITIES: list[str] = list(get_args(Capability))


def grant_has(grant: Grant, capability: str) -> bool:
    caps = grant.capabilities
    return capability in caps or ADMIN in caps


def grant_covers_subject(grant: Grant, subject_id: str) -> bool:
    return grant.subject_ids is None or subject_id in grant.subject_ids


def grant_covers_placement(grant: Grant, scope: str, context_id: str | None) -> bool:
    if scope == SHARED:
        return grant.shared_access
    return grant.context_ids is None or context_id in grant.context_ids


def grant_covers_space(grant: Grant) -> bool:
    """No subject or context limit, and shared access: the grant's reach is the whole space."""
    return grant.subject_ids is None and grant.context_ids is None and grant.shared_access


def grant_contains(outer: Grant, inner: Grant) -> bool:
    """`outer` reaches every subject and placement `inner` does (capabilities and expiry aside):
    the subject, context and shared dimensions of non-amplification (docs/protocol.md#grants)."""
    subjects_in = outer.subject_ids is None or (
        inner.subject_ids is not None and set(inner.subject_ids) <= set(outer.subject_ids)
    )
    contexts_in = outer.context_ids is None or (
        inner.context_ids is not None and set(inner.context_ids) <= set(outer.context_ids)
    )
    return subjects_in and contexts_in and (outer.shared_access or not inner.shared_access)


def effective_q(at: datetime) -> Q:
    """Grants in force at `at`: active, unexpired, no revoked ancestor (a stored flag)."""
    return Q(state=Grant.ACTIVE, ancestor_revoked=False) & (
        Q(expires_at__isnull=True) | Q(expires_at__gt=at)
    )


# The coverage filter (`Coverage.placement_q`): up to this many groups of subjects reaching the
# same placements, a term per group; past it, three terms whatever the grants, the last one a
# look-up of (subject, context) pairs, up to MAX_PAIRS of them (past that, a term per distinct
# set of contexts: at most the grant count, limits.max_grants_per_principal).
GROUPS = 3
MAX_PAIRS = 16_384


# From this many effective grants on, the coverage query carries the space and subject columns
# on the first grant's row only (`statements.coverage(once=True)`): its sub-select costs PostgreSQL
# ~0.07 ms more to plan and run, decoding the repeated columns costs ~12 µs per extra grant.
# Which form a (space, principal) gets is a per-process hint from its previous coverage read;
# both forms give the same answer.
MANY_GRANTS = 4
_MANY_GRANTS: dict[tuple[str, str], bool] = {}
_coverage_sql = statements.coverage  # looked up per call: a test substitutes it


def effective_grants(
    space_id: str,
    principal: Principal,
    at: datetime,
    with_space: bool = False,
    share: bool = False,
    subject_id: str | None = None,
) -> list[Grant]:
    """The principal's effective grants in a space, in issue order; one query. `with_space` joins
    the space row in (each grant's `.space`), so a read's whole coverage is that one query;
    `subject_id` also joins that subject of the space (each grant's `._subject`, None when
    absent). `share` (PostgreSQL) takes a share lock on the grant rows: a mutation relies on
    them until it commits, so a revocation waits for it (docs/architecture.md)."""
    if not with_space:
        return list(
            Grant.objects.filter(effective_q(at), space_id=space_id, grantee=principal).order_by(
                "created_at", "grant_id"
            )
        )
    g, s = rows.columns(Grant, "g"), rows.columns(Space, "s")
    sub = rows.columns(Subject, "sub")
    joined = subject_id is not None
    where = [
        space_id,
        principal.principal_id,
        Grant.ACTIVE,
        False,
        connection.ops.adapt_datetimefield_value(at),
    ]
    share = share and connection.vendor == "postgresql"
    space_at, subject_at = g.width + s.names.index("space_id"), g.width + s.width
    hint = (space_id, principal.principal_id)
    for once in (True, False) if _MANY_GRANTS.get(hint) else (False,):
        params = [*(where if once else []), *([subject_id] if joined else []), *where]
        out = []
        space = subject = None
        for row in rows.fetch(_coverage_sql(share, joined, once), params):
            grant = g.build(row)
            if space is None and row[space_at] is not None:
                space = s.build(row, g.width)
                subject = (
                    sub.build(row, subject_at) if joined and row[subject_at] is not None else None
                )
            out.append(grant)
        if space is not None or not out:
            break
        # A grant revoked between the statement's choice of the first grant and its share lock:
        # no row carried the space; read it again the plain way (every row joined).
    if (len(out) >= MANY_GRANTS) != bool(_MANY_GRANTS.get(hint)):
        if len(_MANY_GRANTS) >= 10_000:
            _MANY_GRANTS.clear()
        _MANY_GRANTS[hint] = len(out) >= MANY_GRANTS
    cache_space = Grant.space.field.set_cached_value
    for grant in out:
        cache_space(grant, space)
        if joined:
            grant._subject = subject  # type: ignore[attr-defined]  # the row read with it
    return out


def grants_held(space_id: str, grantee: Principal, at: datetime) -> int:
    """How many effective grants a principal holds in a space: the terms of its coverage, which
    limits.max_grants_per_principal bounds (memory.grants.grant, operators' root grants)."""
    return Grant.objects.filter(effective_q(at), space_id=space_id, grantee=grantee).count()


def effective_ids(grants: list[Grant], at: datetime) -> set[str]:
    """Which of these grants (any grantee) are effective now; no query."""
    return {
        g.grant_id
        for g in grants
        if g.state == Grant.ACTIVE
        and not g.ancestor_revoked
        and (g.expires_at is None or g.expires_at > at)
    }


@dataclass
class Coverage:
    space: Space
    principal: Principal
    grants: list[Grant]
    at: datetime
    # the subject loaded with the coverage (one query), when the caller named one: (id, row)
    loaded_subject: tuple[str, Subject | None] | None = None
    # rows an exclusive mutation locked before the coverage (mutation._rows_first), by (model,
    # wire id), with their subject: `access_*(lock=True)` takes them instead of reading again
    held: dict[tuple[type, str], Record | Candidate] = field(default_factory=dict)

    @property
    def space_id(self) -> str:
        return self.space.space_id

    def with_capability(self, capability: str) -> list[Grant]:
        return [g for g in self.grants if grant_has(g, capability)]

    def is_admin(self) -> bool:
        """A space-wide admin: one effective space_admin grant reaching the whole space. A
        narrowed space_admin administers only what it covers (docs/grants.md), so the acts on
        the space as a whole (freeze, unfreeze, the admin grant list, others' receipts) are not
        its to do."""
        return any(grant_covers_space(g) for g in self.with_capability(ADMIN))

    def administers_subject(
        self, subject_id: str, scope: str | None = None, context_id: str | None = None
    ) -> bool:
        """One space_admin grant covers the subject and this placement, or, without a placement,
        every placement the subject has (no context limit, shared access): fencing or archiving
        a whole subject stops writes in contexts a context-narrowed admin does not cover."""
        for g in self.with_capability(ADMIN):
            if not grant_covers_subject(g, subject_id):
                continue
            if scope is None:
                if g.context_ids is None and g.shared_access:
                    return True
            elif grant_covers_placement(g, scope, context_id):
                return True
        return False

    def administers_grant(self, target: Grant) -> bool:
        """One space_admin grant contains every subject and placement `target` reaches: an admin
        revokes only grants inside its own reach (a root grant only a space-wide admin)."""
        return any(grant_contains(g, target) for g in self.with_capability(ADMIN))

    def covers(
        self,
        capability: str,
        subject_id: str,
        scope: str | None = None,
        context_id: str | None = None,
    ) -> bool:
        for g in self.grants:
            if not grant_has(g, capability) or not grant_covers_subject(g, subject_id):
                continue
            if scope is None or grant_covers_placement(g, scope, context_id):
                return True
        return False

    def covers_any(
        self,
        capabilities: list[str],
        subject_id: str,
        scope: str | None = None,
        context_id: str | None = None,
    ) -> bool:
        return any(self.covers(c, subject_id, scope, context_id) for c in capabilities)

    def require(
        self,
        capability: str,
        subject_id: str,
        scope: str | None = None,
        context_id: str | None = None,
    ) -> None:
        if not self.covers(capability, subject_id, scope, context_id):
            raise permission_denied(capability)

    def require_admin(self) -> None:
        if not self.is_admin():
            raise permission_denied(ADMIN)

    def placement_q(
        self,
        capabilities: list[str],
        subject_field: str = "subject__subject_id",
        scope_field: str = "placement_scope",
        context_field: str = "placement_context_id",
    ) -> Q:
        """SQL filter for the objects one of these capabilities covers (a union over grants).
        Matches nothing when no grant holds the capability. Neither its size nor its cost per
        row grows with the grant count (issue 26: 2,000 grants made 2,000 ORs in every query;
        issue 39: 64 grants of 64 shapes still made 64): the grants covering every subject are
        one term (the union of their placements); the others are merged per subject (less what
        that term covers), and the subjects grouped by what they reach, a term per group while
        there are at most GROUPS; past that at most three terms whatever the grants: the
        subjects reached in their shared scope, those reached in every context, and the
        (subject, context) pairs of the rest (one hashed look-up per row, `_PairsIn`)."""
        every, reach = self.reach(capabilities)
        q = Q(pk__in=[])
        if every is not None:
            q |= placed_q(_listed(every[0]), every[1], scope_field, context_field)
        groups: dict[tuple[frozenset[str] | None, bool], list[str]] = {}
        for subject_id, (contexts, shared) in sorted(reach.items()):
            place = (None if contexts is None else frozenset(contexts), shared)
            groups.setdefault(place, []).append(subject_id)
        if len(groups) <= GROUPS:
            for (in_contexts, shared), subjects in sorted(groups.items(), key=_place_key):
                q |= self._subjects_q(subject_field, subjects) & placed_q(
                    _listed(in_contexts), shared, scope_field, context_field
                )
            return q
        in_shared = sorted(s for s, (_, shared) in reach.items() if shared)
        in_every_context = sorted(s for s, (contexts, _) in reach.items() if contexts is None)
        limited: dict[str, set[str]] = {s: c for s, (c, _) in reach.items() if c}
        if in_shared:
            q |= self._subjects_q(subject_field, in_shared) & Q(**{scope_field: SHARED})
        if in_every_context:
            q |= self._subjects_q(subject_field, in_every_context) & Q(**{scope_field: CONTEXT})
        relation, _, field_name = subject_field.rpartition("__")
        pairs = sorted((s, c) for s, contexts in limited.items() for c in contexts)
        if pairs and len(pairs) <= MAX_PAIRS and relation and field_name == "subject_id":
            q |= Q(**{scope_field: CONTEXT}) & Q(
                _PairsIn(relation, context_field, self.space_id, pairs)
            )
            return q
        by_contexts: dict[frozenset[str], list[str]] = {}
        for subject_id, contexts in sorted(limited.items()):
            by_contexts.setdefault(frozenset(contexts), []).append(subject_id)
        for some, subjects in sorted(by_contexts.items(), key=lambda i: sorted(i[0])):
            q |= self._subjects_q(subject_field, subjects) & placed_q(
                sorted(some), False, scope_field, context_field
            )
        return q

    def reach(
        self, capabilities: list[str]
    ) -> tuple[tuple[set[str] | None, bool] | None, dict[str, tuple[set[str] | None, bool]]]:
        """What these capabilities reach, merged: the placement of every subject (contexts,
        None for every one; shared), None when no grant covering every subject holds one; and
        per named subject, what its grants reach beyond that (subjects it adds nothing to left
        out). The union of the two is the union of the grants."""
        every: tuple[set[str] | None, bool] | None = None
        reach: dict[str, tuple[set[str] | None, bool]] = {}
        for g in self.grants:
            if not any(grant_has(g, c) for c in capabilities):
                continue
            contexts = None if g.context_ids is None else set(g.context_ids)
            if g.subject_ids is None:
                every = _joined(every, contexts, bool(g.shared_access))
            else:
                for subject_id in g.subject_ids:
                    reach[subject_id] = _joined(
                        reach.get(subject_id), contexts, bool(g.shared_access)
                    )
        all_contexts, all_shared = every if every is not None else (set(), False)
        for subject_id, (contexts, shared) in list(reach.items()):
            if all_contexts is None:
                contexts = set()
            elif contexts is not None:
                contexts = contexts - all_contexts
            shared = shared and not all_shared
            if contexts == set() and not shared:
                del reach[subject_id]  # nothing beyond what every subject gets (or nothing)
            else:
                reach[subject_id] = (contexts, shared)
        return every, reach

    def subject_q(
        self,
        capabilities: list[str],
        subject_id: str,
        scope_field: str = "placement_scope",
        context_field: str = "placement_context_id",
    ) -> Q:
        """`placement_q` for the objects of one subject (the caller filters on it): that
        subject's reach through these capabilities, one term."""
        view = self.subject_view(capabilities, subject_id)
        contexts = None if view["all_contexts"] else view["context_ids"]
        return placed_q(contexts, view["shared"], scope_field, context_field)

    def _subjects_q(self, subject_field: str, subject_ids: list[str]) -> Q:
        """The objects of these subjects of the space. Through the subject relation, a subquery
        naming the space (`subject_id IN (SELECT id FROM memory_subject WHERE space_id = … AND
        subject_id IN …)`), not a join on the subject's id alone: on Citus a join that does not
        name the space needs repartitioning and is refused (docs/scaling.md)."""
        relation, _, field = subject_field.rpartition("__")
        if relation and field == "subject_id":
            subjects = Subject.objects.filter(space_id=self.space_id, subject_id__in=subject_ids)
            return Q(**{f"{relation}__in": subjects.values("pk")})
        return Q(**{f"{subject_field}__in": subject_ids})

    def subject_view(self, capabilities: list[str], subject_id: str) -> dict[str, Any]:
        """The caller's coverage for one subject through these capabilities, as plain data:
        contexts (None = all), shared. Used to pin reflection coverage and compare it."""
        contexts: set[str] | None = set()
        shared = False
        for g in self.grants:
            if not any(grant_has(g, c) for c in capabilities) or not grant_covers_subject(
                g, subject_id
            ):
                continue
            shared = shared or g.shared_access
            if g.context_ids is None:
                contexts = None
            elif contexts is not None:
                contexts.update(g.context_ids)
        return {
            "all_contexts": contexts is None,
            "context_ids": sorted(contexts or []),
            "shared": shared,
        }

    def footprint(self, capability: str) -> list[dict[str, Any]]:
        """What this capability covers in the space, as plain data: one rectangle
        {subject_ids, context_ids, shared} per grant holding it (None = every), deduplicated and
        sorted. Stored with an export; memory.engine.transfer.footprint_includes compares two."""
        rects = {
            canonical_str(r): r
            for r in (
                {
                    "subject_ids": None if g.subject_ids is None else sorted(g.subject_ids),
                    "context_ids": None if g.context_ids is None else sorted(g.context_ids),
                    "shared": bool(g.shared_access),
                }
                for g in self.with_capability(capability)
            )
        }
        return [rects[k] for k in sorted(rects)]

    def state_digest(self) -> str:
        """Identity of the caller's grant state; a cursor is bound to it (docs/protocol.md#cursors)."""
        return digest([[g.grant_id, g.revision] for g in self.grants])


def _place_key(
    item: tuple[tuple[frozenset[str] | None, bool], Any],
) -> tuple[bool, list[str], bool]:
    (contexts, shared), _ = item
    return (contexts is None, sorted(contexts or []), shared)


def _listed(contexts: Collection[str] | None) -> list[str] | None:
    return None if contexts is None else sorted(contexts)


def _joined(
    reach: tuple[set[str] | None, bool] | None, contexts: set[str] | None, shared: bool
) -> tuple[set[str] | None, bool]:
    """A reach (contexts, None for every one; shared) widened by one grant's placement."""
    if reach is None:
        return (None if contexts is None else set(contexts)), shared
    was, was_shared = reach
    return (None if was is None or contexts is None else was | contexts), was_shared or shared


class _PairsIn(Expression):
    """`(subject, context) IN (the (subject row, context) pairs named, of the space)`: PostgreSQL
    hashes the sub-select's rows once (a hashed SubPlan) and looks each row up once, SQLite
    builds an index of them; the pairs are one array parameter each (PostgreSQL) or one JSON
    parameter (SQLite), so neither the statement nor a row's cost grows with their number. The
    sub-select names the space (one shard on Citus, docs/scaling.md)."""

    output_field = BooleanField()

    def __init__(
        self, subject: str, context: str, space_id: str, pairs: list[tuple[str, str]]
    ) -> None:
        super().__init__(output_field=BooleanField())
        self.columns: list[Any] = [F(subject), F(context)]
        self.space_id, self.pairs = space_id, pairs

    def get_source_expressions(self) -> list[Any]:
        return self.columns

    def set_source_expressions(self, exprs: Any) -> None:
        self.columns = list(exprs)

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        subject, subject_params = compiler.compile(self.columns[0])
        context, context_params = compiler.compile(self.columns[1])
        qn = connection.ops.quote_name
        if connection.vendor == "postgresql":
            source = "unnest(CAST(%s AS text[]), CAST(%s AS text[])) AS pq_v(s, c)"
            named, placed = "pq_v.s", "pq_v.c"
            params: list[Any] = [[s for s, _ in self.pairs], [c for _, c in self.pairs]]
        else:
            source = "json_each(%s) AS pq_v"
            named, placed = "json_extract(pq_v.value, '$[0]')", "json_extract(pq_v.value, '$[1]')"
            params = [json.dumps(self.pairs)]
        # Only compiled columns and quoted identifiers are formatted in; the pairs are bound.
        table = qn(Subject._meta.db_table)
        sql = (
            f"({subject}, {context}) IN (SELECT pq_s.{qn('id')}, {placed}"  # noqa: S608
            f" FROM {table} pq_s JOIN {source} ON {named} = pq_s.{qn('subject_id')}"
            f" WHERE pq_s.{qn('space_id')} = %s)"
        )
        return sql, [*subject_params, *context_params, *params, self.space_id]


def canonical_str(value: object) -> str:
    return canonical(value).decode("utf-8")


def placed_q(
    context_ids: list[str] | None,
    shared: bool,
    scope_field: str = "placement_scope",
    context_field: str = "placement_context_id",
) -> Q:
    """Objects placed in these contexts (`None`: every context) or, with `shared`, in the
    subject's shared scope: the placement half of a grant, and of a subject view."""
    if context_ids is not None and not context_ids:
        return Q(**{scope_field: SHARED}) if shared else Q(pk__in=[])
    place = Q(**{scope_field: CONTEXT})
    if context_ids is not None:
        place &= Q(**{f"{context_field}__in": context_ids})
    if shared:
        place |= Q(**{scope_field: SHARED})
    return place


def coverage_for(
    space_id: str,
    principal: Principal,
    at: datetime,
    lock: bool = False,
    share: bool = False,
    subject_id: str | None = None,
) -> Coverage:
    """Load the space and the caller's coverage. A space where the caller holds no effective
    grant is NOT_FOUND, like an absent one. A read is one query (grants joined with their space,
    and with the subject `subject_id` names, for `access_subject`). `lock` first takes the space
    row lock for an exclusive mutation, then reads the grants under it; `share` share-locks the
    grant rows instead (a mutation that touches the space row only at commit)."""
    loaded = None
    if lock:
        space = Space.objects.select_for_update().filter(space_id=space_id).first()
        if space is None:
            raise not_found("space")
        grants = effective_grants(space_id, principal, at)
    else:
        grants = effective_grants(
            space_id, principal, at, with_space=True, share=share, subject_id=subject_id
        )
        if not grants:
            raise not_found("space")
        space = grants[0].space
        if subject_id is not None:
            loaded = (subject_id, grants[0]._subject)  # type: ignore[attr-defined]
    if not grants:
        raise not_found("space")
    return Coverage(space=space, principal=principal, grants=grants, at=at, loaded_subject=loaded)


def access_subject(
    cov: Coverage, subject_id: str, capabilities: list[str] | None = None, lock: bool = False
) -> Subject:
    """The subject, if it exists and one of the caller's grants (with any of `capabilities`, or
    any capability at all) covers it; NOT_FOUND otherwise."""
    if not lock and cov.loaded_subject is not None and cov.loaded_subject[0] == subject_id:
        subject = cov.loaded_subject[1]
    else:
        qs = Subject.objects.select_for_update() if lock else Subject.objects
        subject = qs.filter(space_id=cov.space_id, subject_id=subject_id).first()
    visible = subject is not None and any(
        grant_covers_subject(g, subject_id)
        and (capabilities is None or any(grant_has(g, c) for c in capabilities))
        for g in cov.grants
    )
    if subject is None or not visible:
        raise not_found("subject")
    return subject


def require_read(cov: Coverage, capabilities: list[str], subject: Subject | None) -> None:
    """A list needs a read capability: on the subject when it names one, else anywhere in the
    space. A visible subject without it is PERMISSION_DENIED (docs/protocol.md#authorization b), not an empty page."""
    if subject is None:
        held = any(cov.with_capability(c) for c in capabilities)
    else:
        held = cov.covers_any(capabilities, subject.subject_id)
    if not held:
        raise permission_denied(capabilities[0])


def gate_space_writable(space: Space) -> None:
    if space.state == Space.FROZEN:
        raise SpaceFrozen("The space is frozen: it accepts no mutation until unfrozen.")
    if space.activation_pending:
        # what the activation is about to replace must not change meanwhile (docs/transfer.md)
        raise SpaceFrozen(
            "An import is being activated in this space: it accepts no mutation until the "
            "activation ends.",
            reason="import_activating",
        )


def gate_subject_writable(
    subject: Subject, scope: str | None = None, context_id: str | None = None
) -> None:
    """State gates for a write about a subject, optionally placed in a context (docs/protocol.md#authorization)."""
    if subject.state == Subject.ARCHIVED:
        raise SubjectArchived("The subject is archived: it accepts no further writes.")
    if subject.state == Subject.FENCED:
        raise SubjectFenced("The subject is fenced: it accepts no writes until unfenced.")
    if scope == CONTEXT and context_id is not None and context_id in subject.fenced_context_ids:
        raise ContextFenced("That context is fenced for this subject.", context_id=context_id)


def _access_placed(
    model: type[P],
    cov: Coverage,
    id_field: str,
    object_id: str,
    capabilities: list[str],
    scope_attr: str,
    context_attr: str,
    resource: str,
    lock: bool,
) -> P:
    """The object, if it is in the space and one grant with any of `capabilities` covers its
    subject and placement; NOT_FOUND otherwise. `lock` takes its row lock (not the subject's):
    the row the mutation already locked (`cov.held`), or one fixed-shape query with its subject
    joined (rows.py says why not the ORM's)."""
    held = cov.held.pop((model, object_id), None) if lock else None
    obj = held if isinstance(held, model) else None  # held by (model, id): always the model's
    if obj is None:
        obj = placed_object(model, cov.space_id, id_field, object_id, lock)
    if obj is None or not cov.covers_any(
        capabilities, obj.subject.subject_id, getattr(obj, scope_attr), getattr(obj, context_attr)
    ):
        raise not_found(resource)
    return obj


def placed_object(
    model: type[P], space_id: str, id_field: str, object_id: str, lock: bool = True
) -> P | None:
    """The object of the space by its wire id with its subject (one fixed-shape query:
    statements.placed), its row locked FOR UPDATE with `lock`; None when there is none."""
    o, sub = rows.columns(model, "o"), rows.columns(Subject, "sub")
    table: type[models.Model] = model
    found = rows.fetch(statements.placed(table, id_field, lock), [space_id, object_id])
    if not found:
        return None
    obj = o.build(found[0])
    model.subject.field.set_cached_value(obj, sub.build(found[0], o.width))
    return obj


def access_record(
    cov: Coverage, record_id: str, capabilities: list[str] | None = None, lock: bool = False
) -> Record:
    """The record, if a grant with any of `capabilities` (default records_read) covers its
    subject and placement; NOT_FOUND (resource "record") otherwise."""
    return _access_placed(
        Record,
        cov,
        "record_id",
        record_id,
        capabilities or ["records_read"],
        "placement_scope",
        "placement_context_id",
        "record",
        lock,
    )


def access_candidate(
    cov: Coverage, candidate_id: str, capabilities: list[str] | None = None, lock: bool = False
) -> Candidate:
    """The candidate, if a grant with any of `capabilities` (default candidates_read or review)
    covers its subject and capture-scope placement; NOT_FOUND (resource "candidate") otherwise.
    `lock` takes the candidate row lock for a review."""
    return _access_placed(
        Candidate,
        cov,
        "candidate_id",
        candidate_id,
        capabilities or ["candidates_read", "review"],
        "scope_placement_scope",
        "scope_context_id",
        "candidate",
        lock,
    )


def access_receipt(principal: Principal, at: datetime, receipt: Receipt | None) -> Receipt:
    """A receipt is visible to the principal that caused it and to the space-wide admins of its
    space (a narrowed space_admin is not one: a receipt's refs can name any subject); anything
    else, and no receipt at all, is NOT_FOUND (resource "receipt")."""
    if receipt is not None:
        if receipt.principal_id == principal.principal_id:
            return receipt
        if receipt.space_id is not None and any(
            grant_has(g, ADMIN) and grant_covers_space(g)
            for g in effective_grants(receipt.space_id, principal, at)
        ):
            return receipt
    raise not_found("receipt")


def access_grant(cov: Coverage, grant_id: str, lock: bool = False) -> Grant:
    """A grant of the covered space by id (NOT_FOUND, resource "grant", when the space has none);
    `lock` takes its row lock. Who may act on it is the op's gate (issuer or space admin)."""
    qs = Grant.objects.select_for_update() if lock else Grant.objects
    grant = qs.filter(space=cov.space, grant_id=grant_id).first()
    if grant is None:
        raise not_found("grant")
    return grant
