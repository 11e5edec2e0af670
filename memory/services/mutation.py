"""The one mechanism every mutating op goes through (docs/protocol.md#receipts, #idempotency, #authorization f).

`mutate(ctx, req, body)` runs `body(scope)` inside one durable transaction together with the
receipt, the idempotency key, the space revision bump and (for pending work) the job row.

Most of a mutation needs no space-wide order, so it runs concurrently with other writers of the
space: the body reads coverage (share-locking the grants it relies on), looks up and locks only
its own objects, validates, and writes. The space row is touched once, last, by the statement
that takes the next space revision and re-checks the state the body's gates saw (`UPDATE …
SET revision = revision + 1 WHERE … AND state = <seen> AND activation_pending = <seen>
RETURNING revision`); touched subjects are bumped (and re-checked) just before it, in the same
statement on PostgreSQL. If a gate's state changed in between, the body runs again and decides
on the new state. Ops that change the space itself, and every last attempt, take the space row
lock before the body (`scope.coverage(..., exclusive=True)`), after the rows their request
names (`_rows_first`), so they keep the writers' lock order (docs/architecture.md "Why mutations
serialize per space").

Phases: (1) before the transaction, one idempotency look-up (a replay costs that one query);
(2) the body, concurrent: coverage in one query, share-locking the grant rows; the op's own
objects under their own row locks; validation, content, object and revision rows, derived copies
(on PostgreSQL a new record, its revision and term rows are one statement); (3) the commit tail,
serialized: each touched subject `UPDATE … revision + 1 WHERE … AND state = <seen> AND
fenced_context_ids = <seen>` in key order, the space bump, the receipt and the key, COMMIT — on
PostgreSQL one statement (`statements.commit_tail`), each bump running only once the one before
found its row; a bump that finds its gate state moved makes it insert nothing and the body runs
again.

Locks, held from, why:
- grant rows `FOR SHARE`, coverage read to commit: a revocation waits for the write, so a write
  never commits after its grant's revocation; writers don't block each other;
- the op's own object row, body to commit: CAS and one-winner races are decided on that row;
- subject row, commit tail (body, for ops that change it): its revision moves by one; the bump
  re-checks state and fences;
- space row, commit tail only: the exact, gap-free space revision; re-checks `state`;
- idempotency key (unique index), insert to commit: a racing duplicate waits, then replays.
Lock order (no deadlocks among writers): grant share locks → the op's own rows → subject rows in
key order → space row → key index → at COMMIT the deferred foreign-key checks' key-share locks.
Rows a transaction waiting for the space may hold are locked `FOR NO KEY UPDATE` (the subject
bump, a grant's grantee), since key-share waits only for `FOR UPDATE`
(`test_a_grant_and_a_write_by_its_grantee_commit_without_a_deadlock`). Space-wide ops,
`records.delete` (so erasure cannot miss a reflection) and every last attempt are the exclusive
attempts above. A deadlock, serialization failure or moved gate runs the (pure) body again, up
to five attempts. SQLite has one writer (`BEGIN IMMEDIATE`).

The idempotency key is looked up once before the transaction; a racing duplicate is settled by
the key table's unique constraint (the loser rolls back and replays the winner's receipt), and a
request whose body failed re-checks the key, so a racer replays rather than answering with the
winner's effect as its error. Any WireError raised by the body rolls everything back: no row, no
receipt, no consumed key. So does losing the database before COMMIT; losing it during COMMIT
leaves the outcome unknown (`503 unavailable`, `details.outcome: "unknown"`), and a retry with
the key resolves it. A deadlock or serialization failure (PostgreSQL), or a unique violation
from a racer that created the same object (two `subjects.ensure` of a new subject), runs the
body again, which then sees the racer's committed row; left on the last attempt, a deadlock or
serialization failure answers `503 unavailable` with `Retry-After` (`outage.contended`): rolled
back, nothing changed."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import (
    IntegrityError,
    InterfaceError,
    InternalError,
    OperationalError,
    connection,
    transaction,
)
from django.db.models import Model

from memory import rows, statements
from memory.access import Coverage, coverage_for, placed_object
from memory.context import OpContext
from memory.models import (
    Candidate,
    Grant,
    IdempotencyKey,
    Job,
    Principal,
    Receipt,
    Record,
    Space,
    Subject,
)
from memory.outage import contended, is_outage, unavailable
from memory.timeutil import now
from memory.wire import types as t
from memory.wire.canonical import digest
from memory.wire.errors import IdempotencyKeyReused, WireError

log = logging.getLogger("memory.mutation")


@dataclass
class Outcome:
    refs: list[t.Ref]
    status: str = Receipt.COMMITTED
    job_kind: str | None = None
    job_params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def pending(cls, refs: list[t.Ref], job_kind: str, **job_params: Any) -> Outcome:
        """Work a job finishes: the receipt answers `pending`, and the job row (`job_kind`, its
        params) is written with it and enqueued once the transaction commits."""
        return cls(refs=refs, status=Receipt.PENDING, job_kind=job_kind, job_params=job_params)


class _Rerun(Exception):
    """What the body's gates read changed before the commit took its locks: run it again."""


ATTEMPTS = 5  # the last attempt holds the space row across its body, so no gate moves under it
RETRY_SQLSTATES = {"40P01", "40001"}  # deadlock detected, serialization failure


@dataclass
class MutationScope:
    ctx: OpContext
    key: str | None
    payload_digest: str
    space_id: str
    exclusive: bool = False
    req: Mapping[str, Any] = field(default_factory=dict)
    space: Space | None = None
    touched: dict[int, Subject] = field(default_factory=dict)
    rows_taken: bool = False
    # rows the body handed to the commit tail (defer_rows): (INSERT statement, its parameters)
    tail_rows: list[tuple[str, list[Any]]] = field(default_factory=list)

    def coverage(
        self, space_id: str, subject_id: str | None = None, exclusive: bool = False
    ) -> Coverage:
        """Load coverage for the mutation (with `subject_id`'s row in the same query).
        `exclusive` (ops that change the space itself, and every last attempt) locks the space
        row before the body reads anything, after the rows the request names (`_rows_first`:
        the writers' order); otherwise the grants are share-locked and the space row is left
        for the commit."""
        self.exclusive = self.exclusive or exclusive
        held: dict[tuple[type, str], Record | Candidate] = {}
        if self.exclusive and not self.rows_taken:
            self.rows_taken = True
            held = _rows_first(space_id, self.req)
        cov = coverage_for(
            space_id,
            self.ctx.principal,
            self.ctx.at,
            lock=self.exclusive,
            share=not self.exclusive,
            subject_id=subject_id,
        )
        cov.held.update(held)
        self.space = cov.space
        return cov

    def touch(self, subject: Subject) -> None:
        """Mark a subject changed by this op: its revision moves by one (once per op), at once
        in memory so refs can name it, and in the database at commit."""
        if subject.pk not in self.touched:
            self.touched[subject.pk] = subject
            subject.revision += 1


_running = threading.local()  # the mutation whose body runs on this thread (defer_rows)


def defer_rows(
    model: type[Model],
    fields: tuple[str, ...],
    columns: list[list[Any]],
    conflict: tuple[str, ...] = (),
    update: tuple[str, ...] = (),
) -> bool:
    """Hand rows of `model` (one list per field, as `statements.unnest_insert` takes them) to the
    commit-tail statement of the mutation whose body is running on this thread, which inserts
    them in its own round trip (PostgreSQL). False when there is no such tail (SQLite, or a
    write outside a mutation: a job): the caller inserts them itself. The rows are inserted
    only if the tail commits the mutation, like everything else its transaction wrote."""
    scope = getattr(_running, "scope", None)
    if scope is None or scope.space is None or connection.vendor != "postgresql":
        return False
    scope.tail_rows.append((statements.unnest_insert(model, fields, conflict, update), columns))
    return True


def _rows_first(
    space_id: str, req: Mapping[str, Any]
) -> dict[tuple[type, str], Record | Candidate]:
    """Before an exclusive attempt locks the space row: lock the rows its request names that
    its body or its commit tail will lock, in the order every writer takes them (its own object,
    then its subject; a grant's grantee), so that a writer holding one of them and waiting for
    the space at its commit tail is waited for, instead of closing a cycle with a holder of the
    space that reaches for its row (docs/architecture.md "Why mutations serialize per space").
    The object row FOR UPDATE, as the body's `access_*(lock=True)` takes it; the subject and the
    principal FOR NO KEY UPDATE, as the commit tail's bump and a grant take them (a no-key lock
    lets other transactions' foreign-key checks, deferred to their COMMIT, go on). Only rows:
    whether the caller may see them is decided by the body as before. The object's row, with its
    subject's row as read once locked, is returned for the body's `access_*(lock=True)`, which
    takes it instead of reading it again (both rows stay locked until the commit, so they are
    what that read would find). PostgreSQL only (SQLite has one writer)."""
    held: dict[tuple[type, str], Record | Candidate] = {}
    if connection.vendor != "postgresql":
        return held
    subject_pk = None
    named: tuple[tuple[type[Record] | type[Candidate], str], ...] = (
        (Record, "record_id"),
        (Candidate, "candidate_id"),
    )
    for model, name in named:
        if isinstance(req.get(name), str):
            obj = placed_object(model, space_id, name, req[name])
            subject_pk = None if obj is None else obj.subject_id
            if obj is not None:
                held[(model, req[name])] = obj
    if isinstance(req.get("grant_id"), str):
        grant_id = req["grant_id"]
        list(
            Grant.objects.select_for_update()
            .filter(space_id=space_id, grant_id=grant_id)
            .values_list("pk")
        )
    subjects = Subject.objects.select_for_update(no_key=True).filter(space_id=space_id)
    if subject_pk is not None:
        subject = subjects.filter(pk=subject_pk).first()
        for obj in held.values():
            if subject is not None and obj.subject_id == subject_pk:
                type(obj).subject.field.set_cached_value(obj, subject)
    elif isinstance(req.get("subject_id"), str):
        list(subjects.filter(subject_id=req["subject_id"]).values_list("pk"))
    if isinstance(req.get("grantee_principal_id"), str):
        grantee = req["grantee_principal_id"]
        list(
            Principal.objects.select_for_update(no_key=True)
            .filter(principal_id=grantee)
            .values_list("pk")
        )
    return held


def payload_digest(req: Mapping[str, Any]) -> str:
    return digest({k: v for k, v in req.items() if k != "idempotency_key"})


def _lookup(space_id: str, ctx: OpContext, key: str) -> IdempotencyKey | None:
    """The key row with its receipt: one fixed-shape query (memory/rows.py says why not the
    ORM's); the unique constraint allows at most one row."""
    k, r = rows.columns(IdempotencyKey, "k"), rows.columns(Receipt, "r")
    found = rows.fetch(
        statements.idempotency_key(), [space_id, ctx.principal.principal_id, ctx.op, key]
    )
    if not found:
        return None
    hit = k.build(found[0])
    IdempotencyKey.receipt.field.set_cached_value(hit, r.build(found[0], k.width))
    return hit


def _replay(hit: IdempotencyKey, pdigest: str) -> t.ReceiptResponse:
    if hit.payload_digest != pdigest:
        raise IdempotencyKeyReused(
            "This idempotency key was already used for a different request payload.",
            receipt_id=hit.receipt_id,
        )
    return {"receipt": hit.receipt.to_wire()}


def _retryable(exc: Exception) -> bool:
    cause = exc.__cause__
    return getattr(cause, "sqlstate", None) in RETRY_SQLSTATES


def duplicate_key(exc: Exception) -> bool:
    """A unique violation: IntegrityError (23505), or, through a Citus coordinator, the same
    violation raised on a worker by a statement the coordinator ran in several steps, which
    comes back as SQLSTATE XX000 with PostgreSQL's message (docs/scaling.md). Either is a racer
    that inserted the same key first, never an internal error."""
    if isinstance(exc, IntegrityError):
        return True
    cause = exc.__cause__
    return (
        isinstance(exc, InternalError)
        and getattr(cause, "sqlstate", None) == "XX000"
        and "duplicate key value violates unique constraint" in str(cause)
    )


def mutate(
    ctx: OpContext, req: Mapping[str, Any], body: Callable[[MutationScope], Outcome]
) -> t.ReceiptResponse:
    key = req.get("idempotency_key")
    pdigest = payload_digest(req)
    space_id = req.get("space_id") or ""
    if key is not None:
        hit = _lookup(space_id, ctx, key)
        if hit is not None:
            return _replay(hit, pdigest)
    for attempt in range(1, ATTEMPTS + 1):
        last = attempt == ATTEMPTS
        scope = MutationScope(
            ctx=ctx, key=key, payload_digest=pdigest, space_id=space_id, exclusive=last, req=req
        )
        committing = False
        try:
            with transaction.atomic(durable=True):
                _running.scope = scope
                try:
                    outcome = body(scope)
                finally:
                    _running.scope = None
                receipt = _commit(scope, req, outcome)
                committing = True  # all that is left is COMMIT, sent as the block exits
        except _Rerun:
            continue
        except (WireError, IntegrityError, InternalError) as exc:
            if isinstance(exc, InternalError) and not duplicate_key(exc):
                raise
            # a racer with the same key may have committed first: replay it, else the failure
            hit = _lookup(space_id, ctx, key) if key is not None else None
            if hit is not None:
                return _replay(hit, pdigest)
            if duplicate_key(exc):
                if not last:
                    continue  # a racer inserted the same natural key (a subject): decide again
                raise contended() from exc
            raise
        except (OperationalError, InterfaceError) as exc:
            if committing and is_outage(exc):
                raise unavailable(in_doubt=True) from exc
            if _retryable(exc):
                # rolled back (at COMMIT too: the server refused it), so nothing took
                if not last:
                    log.info("mutation retried after %s", type(exc.__cause__).__name__)
                    continue
                log.warning("mutation refused after %s", type(exc.__cause__).__name__)
                raise contended() from exc
            raise
        return {"receipt": receipt.to_wire()}
    raise contended()  # the gates moved on every attempt


def _commit(scope: MutationScope, req: Mapping[str, Any], outcome: Outcome) -> Receipt:
    """Subjects (in key order), then the space row, then receipt and key: every mutation takes
    its row locks in this order after its own objects', so writers of one space cannot deadlock
    among themselves. Each bump re-checks the state the body's gates saw (_Rerun if it moved).
    On PostgreSQL all of it is one statement (`statements.commit_tail`)."""
    ctx = scope.ctx
    at = now()
    db_at = connection.ops.adapt_datetimefield_value(at)
    touched = [scope.touched[pk] for pk in sorted(scope.touched)]
    receipt = Receipt(
        space_id=req.get("space_id"),
        principal=ctx.principal,
        op=ctx.op,
        status=outcome.status,
        payload_digest=scope.payload_digest,
        idempotency_key=scope.key,
        refs=outcome.refs,
        created_at=at,
        completed_at=None if outcome.status == Receipt.PENDING else at,
    )
    key = None
    if scope.key is not None:
        key = IdempotencyKey(
            space_id=scope.space_id,
            principal=ctx.principal,
            op=ctx.op,
            key=scope.key,
            payload_digest=scope.payload_digest,
            receipt=receipt,
            created_at=at,
        )
    if scope.space is not None and connection.vendor == "postgresql":
        # one round trip: the subject bumps, the space bump, the receipt carrying its
        # revision, the key
        revisions = _tail(
            receipt, key, touched, db_at, [db_at, *_space_gate(scope.space)], scope.tail_rows
        )
        if revisions[0] is None:
            raise _Rerun
        for subject, revision in zip(touched, revisions[1:], strict=True):
            subject.revision, subject.updated_at = revision, at
        scope.space.revision = receipt.space_revision = revisions[0]
        receipt._state.adding, receipt._state.db = False, connection.alias
    else:
        sql = statements.revision_bumps()
        for subject in touched:
            row = statements.execute(sql["subject"], [db_at, subject.space_id, subject.pk])
            if row is None or (row[1], _json(row[2])) != (
                subject.state,
                subject.fenced_context_ids,
            ):
                raise _Rerun
            subject.revision, subject.updated_at = row[0], at
        if scope.space is not None:
            row = statements.execute(sql["space"], [db_at, *_space_gate(scope.space)])
            if row is None:
                raise _Rerun
            scope.space.revision = receipt.space_revision = row[0]
        receipt.save(force_insert=True)
        if key is not None:
            key.save(force_insert=True)
    if outcome.status == Receipt.PENDING:
        if outcome.job_kind is None:
            raise RuntimeError("a pending outcome needs a job")
        Job.objects.create(
            space_id=scope.space_id,
            receipt=receipt,
            kind=outcome.job_kind,
            params=outcome.job_params,
            enqueued_at=at,
        )
        receipt_id, job_space = receipt.receipt_id, scope.space_id
        transaction.on_commit(lambda: enqueue(receipt_id, job_space), robust=True)
    return receipt


def _space_gate(space: Space) -> list[Any]:
    """The space's key and the gate state the body saw (state, activation pending), for the
    bump's re-check."""
    return [space.pk, space.state, space.activation_pending]


def _tail(
    receipt: Receipt,
    key: IdempotencyKey | None,
    subjects: list[Subject],
    db_at: Any,
    space_params: list[Any],
    rows: list[tuple[str, list[Any]]],
) -> tuple[Any, ...]:
    """PostgreSQL: the subject bumps, the space bump, the receipt insert (its space_revision
    taken from the bump) and the key insert as one statement, so the subject and space row locks
    are held for one round trip and the COMMIT. (space_revision, each subject's revision); a
    None space_revision (a gate moved): nothing was inserted, and the caller rolls back."""
    params: list[Any] = []
    for subject in subjects:
        fenced = json.dumps(subject.fenced_context_ids)
        params += [db_at, subject.space_id, subject.pk, subject.state, fenced]
    params += [*space_params, *statements.insert_values(receipt, skip="space_revision")]
    if key is not None:
        params += statements.insert_values(key, skip="receipt")
    for _, columns in rows:
        params += columns
    sql = statements.commit_tail(key is not None, len(subjects), tuple(s for s, _ in rows))
    row = statements.execute(sql, params)
    if row is None:
        raise RuntimeError("the commit tail answers one row")
    return row


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def enqueue(receipt_id: str, space_id: str) -> None:
    """Hand a job to the broker (its receipt and its space: the job row is found on its shard).
    If the broker is down this fails and is logged; the job row stays queued and the sweeper
    sends it again (the job table is the outbox)."""
    from memory.tasks import run_job

    run_job.delay(receipt_id, space_id)
