"""Receipts, durable idempotency keys and the job outbox (docs/protocol.md#receipts, #idempotency).

The IdempotencyKey row is both the key and its dedup tombstone: it holds only the key, the
payload digest and the receipt id, never content, and is kept indefinitely (at least
limits.idempotency_retention_s, as the protocol asks), so a replay is answered at any age.
A Job row is written in the same transaction as its pending receipt: it is the outbox, so a
broker that is down when the op is admitted loses nothing (the sweeper re-enqueues)."""

from django.db import models

from memory.ids import new_receipt_id
from memory.timeutil import iso
from memory.wire import types as t

from .scoped import SpaceScoped, choice, copied_space


class Receipt(SpaceScoped):
    COMMITTED, PENDING, FAILED = "committed", "pending", "failed"

    receipt_id = models.CharField(primary_key=True, max_length=40, default=new_receipt_id)
    space_id = models.CharField(max_length=128, null=True, blank=True)
    principal = models.ForeignKey(
        "memory.Principal", on_delete=models.CASCADE, related_name="receipts"
    )
    op = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=[(s, s) for s in (COMMITTED, PENDING, FAILED)])
    payload_digest = models.CharField(max_length=71)
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
    refs = models.JSONField(default=list)
    space_revision = models.PositiveBigIntegerField(null=True, blank=True)
    failure = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)
    extensions = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["space_id", "status"], name="receipt_space_status"),
            models.Index(fields=["space_id", "op", "idempotency_key"], name="receipt_idem_lookup"),
        ]

    def __str__(self) -> str:
        return self.receipt_id

    def to_wire(self) -> t.MemoryReceipt:
        out: t.MemoryReceipt = {
            "schema_version": 1,
            "receipt_id": self.receipt_id,
            "space_id": self.space_id,
            "op": self.op,
            "status": choice(self.status, ("committed", "pending", "failed")),
            "payload_digest": self.payload_digest,
            "refs": list(self.refs),
            "created_at": iso(self.created_at),
            "extensions": self.extensions,
        }
        if self.idempotency_key is not None:
            out["idempotency_key"] = self.idempotency_key
        if self.space_revision is not None:
            out["space_revision"] = self.space_revision
        if self.failure is not None:
            out["failure"] = self.failure
        if self.completed_at is not None:
            out["completed_at"] = iso(self.completed_at)
        return out


class IdempotencyKey(SpaceScoped):
    space_id = models.CharField(max_length=128)
    principal = models.ForeignKey(
        "memory.Principal", on_delete=models.CASCADE, related_name="idempotency_keys"
    )
    op = models.CharField(max_length=64)
    key = models.CharField(max_length=200)
    payload_digest = models.CharField(max_length=71)
    receipt = models.ForeignKey(Receipt, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["space_id", "principal", "op", "key"], name="idempotency_key_unique"
            ),
        ]


class Job(SpaceScoped):
    """Pending work behind a pending receipt. `attempts` counts deliveries started."""

    space_parent = "receipt"
    space = copied_space()

    QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"

    receipt = models.OneToOneField(
        Receipt, on_delete=models.CASCADE, primary_key=True, related_name="job"
    )
    kind = models.CharField(max_length=40)
    params = models.JSONField(default=dict)
    state = models.CharField(
        max_length=16, default=QUEUED, choices=[(s, s) for s in (QUEUED, RUNNING, DONE, FAILED)]
    )
    attempts = models.PositiveIntegerField(default=0)
    enqueued_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["state", "enqueued_at"], name="job_state_age")]


class JobHeartbeat(SpaceScoped):
    """When a running job's worker last said it is alive. Its own table, written only by the
    heartbeat thread: a job's transaction (REPEATABLE READ for exports) updates its Job row at
    completion, and a concurrent write to that same row would fail it as a serialization error."""

    space = copied_space()
    receipt_id = models.CharField(primary_key=True, max_length=40)
    beat_at = models.DateTimeField()
