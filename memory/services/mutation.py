"""The one mechanism every mutating op goes through (SPEC §2.4, §2.5, §2.6 f).

`mutate(ctx, req, body)` runs `body(scope)` inside one durable transaction together with the
receipt, the idempotency key, the space revision bump and (for pending work) the job row. The
body locks the space first through `scope.coverage()`, so mutations of one space serialize on
that row; a key is re-checked under the lock, so a racing duplicate replays instead of
executing, and the unique constraint on the key backs that up if anything slips past.
Any WireError raised by the body rolls everything back: no row, no receipt, no consumed key.
So does losing the database before COMMIT; losing it during COMMIT leaves the outcome unknown
(`503 unavailable`, `details.outcome: "unknown"`), and a retry with the key resolves it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import IntegrityError, InterfaceError, OperationalError, transaction
from django.db.models import F

from memory.access import Coverage, coverage_for
from memory.context import OpContext
from memory.models import IdempotencyKey, Job, Receipt, Space, Subject
from memory.outage import is_outage, unavailable
from memory.timeutil import now
from memory.wire.canonical import digest
from memory.wire.errors import WireError

log = logging.getLogger("memory.mutation")


@dataclass
class Outcome:
    refs: list[dict]
    status: str = Receipt.COMMITTED
    job_kind: str | None = None
    job_params: dict = field(default_factory=dict)


class _Replay(Exception):
    def __init__(self, receipt: Receipt) -> None:
        self.receipt = receipt


@dataclass
class MutationScope:
    ctx: OpContext
    key: str | None
    payload_digest: str
    space_key: str
    space: Space | None = None
    touched: dict[int, Subject] = field(default_factory=dict)

    def coverage(self, space_id: str) -> Coverage:
        """Lock the space row, re-check the idempotency key under the lock, load coverage."""
        cov = coverage_for(space_id, self.ctx.principal, self.ctx.at, lock=True)
        self.space = cov.space
        if self.key is not None:
            hit = _lookup(self.space_key, self.ctx, self.key)
            if hit is not None:
                raise _Replay(_replay(hit, self.payload_digest))
        return cov

    def touch(self, subject: Subject) -> None:
        """Mark a subject changed by this op: its revision moves by one (once per op), at once
        in memory so refs can name it, and in the database at commit."""
        if subject.pk not in self.touched:
            self.touched[subject.pk] = subject
            subject.revision += 1


def payload_digest(req: dict) -> str:
    return digest({k: v for k, v in req.items() if k != "idempotency_key"})


def _lookup(space_key: str, ctx: OpContext, key: str) -> IdempotencyKey | None:
    return (
        IdempotencyKey.objects.select_related("receipt")
        .filter(space_key=space_key, principal=ctx.principal, op=ctx.op, key=key)
        .first()
    )


def _replay(hit: IdempotencyKey, pdigest: str) -> Receipt:
    if hit.payload_digest != pdigest:
        raise WireError(
            "IDEMPOTENCY_KEY_REUSED",
            "This idempotency key was already used for a different request payload.",
            receipt_id=hit.receipt_id,
        )
    return hit.receipt


def mutate(ctx: OpContext, req: dict, body: Callable[[MutationScope], Outcome]) -> dict:
    key = req.get("idempotency_key")
    pdigest = payload_digest(req)
    space_key = req.get("space_id") or ""
    if key is not None:
        hit = _lookup(space_key, ctx, key)
        if hit is not None:
            return {"receipt": _replay(hit, pdigest).to_wire()}
    scope = MutationScope(ctx=ctx, key=key, payload_digest=pdigest, space_key=space_key)
    committing = False
    try:
        with transaction.atomic(durable=True):
            outcome = body(scope)
            receipt = _commit(scope, req, outcome)
            committing = True  # all that is left is COMMIT, sent as the block exits
    except _Replay as replay:
        return {"receipt": replay.receipt.to_wire()}
    except IntegrityError:
        if key is not None:
            hit = _lookup(space_key, ctx, key)
            if hit is not None:
                return {"receipt": _replay(hit, pdigest).to_wire()}
        raise
    except (OperationalError, InterfaceError) as exc:
        if committing and is_outage(exc):
            raise unavailable(in_doubt=True) from exc
        raise
    return {"receipt": receipt.to_wire()}


def _commit(scope: MutationScope, req: dict, outcome: Outcome) -> Receipt:
    ctx = scope.ctx
    at = now()
    space_revision = None
    if scope.space is not None:
        Space.objects.filter(pk=scope.space.pk).update(revision=F("revision") + 1, updated_at=at)
        space_revision = scope.space.revision + 1
        scope.space.revision = space_revision
    for subject in scope.touched.values():
        Subject.objects.filter(pk=subject.pk).update(revision=F("revision") + 1, updated_at=at)
        subject.updated_at = at
    receipt = Receipt.objects.create(
        space_id=req.get("space_id"),
        principal=ctx.principal,
        op=ctx.op,
        status=outcome.status,
        payload_digest=scope.payload_digest,
        idempotency_key=scope.key,
        refs=outcome.refs,
        space_revision=space_revision,
        created_at=at,
        completed_at=None if outcome.status == Receipt.PENDING else at,
    )
    if scope.key is not None:
        IdempotencyKey.objects.create(
            space_key=scope.space_key,
            principal=ctx.principal,
            op=ctx.op,
            key=scope.key,
            payload_digest=scope.payload_digest,
            receipt=receipt,
            created_at=at,
        )
    if outcome.status == Receipt.PENDING:
        if outcome.job_kind is None:
            raise RuntimeError("a pending outcome needs a job")
        Job.objects.create(
            receipt=receipt, kind=outcome.job_kind, params=outcome.job_params, enqueued_at=at
        )
        receipt_id = receipt.receipt_id
        transaction.on_commit(lambda: enqueue(receipt_id), robust=True)
    return receipt


def enqueue(receipt_id: str) -> None:
    """Hand a job to the broker. If the broker is down this fails and is logged; the job row
    stays queued and the sweeper sends it again (the job table is the outbox)."""
    from memory.tasks import run_job

    run_job.delay(receipt_id)
