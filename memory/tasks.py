"""Celery tasks. They take ids only, load the job row, run the job's handler and complete the
receipt (docs/workers.md).

- Delivery is at-least-once (acks_late, reject_on_worker_lost). A job is claimed by a conditional
  update (queued -> running), so a redelivered task does nothing while the job runs or after it
  finished.
- A handler runs inside ONE transaction together with the completion of its receipt: its effect
  and the `committed` receipt become visible together or not at all. A worker killed mid-job
  leaves nothing behind (the transaction dies with its connection). Completion is conditional
  on the receipt still being pending; if another run got there first the handler's work is
  rolled back, so a job never takes effect twice.
- A handler raising WireError fails the receipt with that content-free code and message; any
  other exception fails it with internal_error (logged here, never echoed).
- While a job runs, a heartbeat thread stamps its JobHeartbeat row every third of
  SPOKE_MEMORY_JOB_TIMEOUT_S on its own connection, so a long job is never taken for a dead one.
- The sweeper (beat, every SPOKE_MEMORY_SWEEP_INTERVAL_S) re-queues jobs stuck past
  SPOKE_MEMORY_JOB_TIMEOUT_S (running with no heartbeat for that long: the worker died; queued:
  the broker lost or never got the message; the Job table is the outbox) and fails them after
  MAX_ATTEMPTS, so no receipt stays pending forever."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Exists, F, OuterRef, Q

from memory.models import Job, JobHeartbeat, Receipt
from memory.observability import metrics
from memory.observability.context import OP, PRINCIPAL_ID, SPACE_ID
from memory.observability.observe import tracer
from memory.timeutil import now
from memory.wire import types as t
from memory.wire.errors import WireError

log = logging.getLogger("memory.tasks")
jobs_log = logging.getLogger("memory.jobs")  # one line per job (shown in the JSON log format)
MAX_ATTEMPTS = 3


# A job kind's work: `fn(job) -> refs` (the receipt's refs).
JobRun = Callable[[Job], list[t.Ref]]


@dataclass
class JobHandler:
    run: JobRun
    on_failure: Callable[[Job, dict[str, Any]], object] | None = None


JOB_HANDLERS: dict[str, JobHandler] = {}

# Derived copies made after commit (embeddings): each drain empties its backlog and returns how
# many objects it covered. Registered (`register_drain`) by the recall engine registry for the
# configured engine's copies.
DRAINS: list[Callable[[], int]] = []


def register_drain(drain: Callable[[], int]) -> None:
    """Run `drain` in every `drain_derived` from now on (once however often it is registered)."""
    if drain not in DRAINS:
        DRAINS.append(drain)


@shared_task(name="memory.tasks.drain_derived", ignore_result=True)
def drain_derived() -> int:
    """Make the derived copies queued by committed writes (woken after such commits, one message
    per burst per process: `wake_drain`; and by the sweep, so a lost broker message only delays
    them)."""
    started = time.perf_counter()
    with tracer.start_as_current_span("memory.drain_derived") as span:
        made = sum(drain() for drain in DRAINS)
        span.set_attribute("memory.embeddings.made", made)
    metrics.EMBEDDINGS_DRAINED.inc(made)
    metrics.DRAIN_DURATION.observe(time.perf_counter() - started)
    return made


class Coalesced:
    """`send()` on behalf of many callers, at most once per window per process, never dropping a
    call: the first call of a burst sends at once (in its own thread) and opens a window of
    SPOKE_MEMORY_DRAIN_WAKE_MS; calls inside it only mark it, and when it closes one more send
    goes out (from the window's timer thread) if any came, opening the next window. Every call is
    thus followed by a send that starts after it, which is what a wake-up after COMMIT needs: the
    drain it wakes reads everything committed before the call. The timer thread is not a daemon,
    so a process that exits with a window open still sends at its end; a process that dies leaves
    it to the beat sweep (which wakes the drain on its own), as a lost broker message would."""

    def __init__(self, send: Callable[[], object], what: str) -> None:
        self._send, self._what = send, what
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._asked = False
        os.register_at_fork(after_in_child=self._forget)

    def __call__(self) -> None:
        window = settings.SPOKE_MEMORY_DRAIN_WAKE_MS / 1000
        if window > 0:
            with self._lock:
                if self._timer is not None:
                    self._asked = True  # the send at the window's end starts after this call
                    return
                self._open(window)
        self._send()

    def flush(self) -> None:
        """Close the open window now (sending if a call is waiting for it)."""
        with self._lock:
            timer = self._timer
        if timer is not None:
            timer.cancel()
            self._close(timer)

    def _open(self, window: float) -> None:
        timer = threading.Timer(window, lambda: self._close(timer))
        timer.name = f"coalesced {self._what}"
        self._timer = timer
        timer.start()

    def _close(self, timer: threading.Timer) -> None:
        with self._lock:
            if self._timer is not timer:
                return  # closed already (flush() and the timer both got here)
            self._timer = None
            asked, self._asked = self._asked, False
            if asked:
                self._open(settings.SPOKE_MEMORY_DRAIN_WAKE_MS / 1000)
        if asked:
            try:
                self._send()
            except Exception:  # noqa: BLE001 - the sweep wakes the drain anyway
                log.warning("broker unavailable; %s waits for the next sweep", self._what)

    def _forget(self) -> None:
        """In a forked child: no window is open there (the timer thread stayed in the parent)."""
        self._lock = threading.Lock()
        self._timer, self._asked = None, False


def _send_drain() -> None:
    drain_derived.delay()


# What a content write calls after its COMMIT (hybrid_store): one drain message per burst.
wake_drain = Coalesced(_send_drain, "the derived-copy drain")


def job_handler(
    kind: str, on_failure: Callable[[Job, dict[str, Any]], object] | None = None
) -> Callable[[JobRun], JobRun]:
    """Register `fn(job) -> refs` for a job kind. `on_failure(job, failure)` runs in the
    transaction that fails the receipt (e.g. to mark an export failed)."""

    def register(fn: JobRun) -> JobRun:
        JOB_HANDLERS[kind] = JobHandler(fn, on_failure)
        return fn

    return register


class RunAgain(Exception):  # noqa: N818 - an instruction, not an error
    """Raised by a handler whose work must be redone from the start (its snapshot is outdated):
    its transaction rolls back and the job is queued again, within MAX_ATTEMPTS. A serialization
    failure of the database (SQLSTATE 40001) is treated the same way."""


def _serialization_failure(err: BaseException) -> bool:
    return isinstance(err, DatabaseError) and getattr(err.__cause__, "sqlstate", None) == "40001"


def _run_again(job: Job) -> None:
    if job.attempts >= MAX_ATTEMPTS:
        fail(job, "internal_error", "The job kept conflicting with concurrent changes.")
        return
    if Job.objects.filter(space_id=job.space_id, pk=job.pk, state=Job.RUNNING).update(
        state=Job.QUEUED, enqueued_at=now()
    ):
        try:
            run_job.delay(job.receipt_id, job.space_id)
        except Exception:
            log.warning("broker unavailable; job %s stays queued", job.receipt_id)


class _Superseded(Exception):
    """The receipt was completed by another run: roll this run's work back."""


def _claim(receipt_id: str, space_id: str | None = None) -> Job | None:
    """Claim a queued job (queued -> running). `space_id`: the job's space, which every message
    since issue 30 carries; a message from before (a receipt id alone) finds it first, by its
    receipt's primary key."""
    if space_id is None:
        space_id = (
            Job.objects.filter(receipt_id=receipt_id).values_list("space_id", flat=True).first()
        )
        if space_id is None:
            return None
    updated = Job.objects.filter(space_id=space_id, receipt_id=receipt_id, state=Job.QUEUED).update(
        state=Job.RUNNING, attempts=F("attempts") + 1, started_at=now()
    )
    if not updated:
        return None
    return Job.objects.select_related("receipt").get(
        space_id=space_id, receipt_id=receipt_id, receipt__space_id=space_id
    )


def complete(
    job: Job, status: str, refs: list[t.Ref] | None = None, failure: dict[str, Any] | None = None
) -> bool:
    """Complete a still-pending receipt and its job. False when it was no longer pending."""
    at = now()
    done = Receipt.objects.filter(
        space_id=job.space_id, pk=job.receipt_id, status=Receipt.PENDING
    ).update(
        status=status,
        refs=refs if refs is not None else job.receipt.refs,
        failure=failure,
        completed_at=at,
    )
    if done:
        Job.objects.filter(space_id=job.space_id, pk=job.pk).update(
            state=Job.DONE if status == Receipt.COMMITTED else Job.FAILED, finished_at=at
        )
    return bool(done)


def fail(job: Job, code: str, message: str) -> None:
    failure = {"code": code, "message": message}
    handler = JOB_HANDLERS.get(job.kind)
    with transaction.atomic():
        if complete(job, Receipt.FAILED, failure=failure) and handler and handler.on_failure:
            handler.on_failure(job, failure)


class Heartbeat(threading.Thread):
    """Stamps a running job's JobHeartbeat row until stopped, from its own thread and therefore
    its own database connection (outside the job's transaction), and removes the row at the end.
    A failed stamp is skipped, not fatal. Not on SQLite: a job is one write transaction there,
    which holds the database lock the heartbeat would need (docs/workers.md)."""

    def __init__(self, job: Job) -> None:
        super().__init__(name=f"heartbeat-{job.receipt_id}", daemon=True)
        self.receipt_id, self.space_id = job.receipt_id, job.space_id
        self.interval = max(settings.SPOKE_MEMORY_JOB_TIMEOUT_S / 3, 0.2)
        self.stopped = threading.Event()
        self.stamped = False

    @classmethod
    def around(cls, job: Job) -> Heartbeat | None:
        if connection.vendor == "sqlite":
            return None
        beat = cls(job)
        beat.start()
        return beat

    def run(self) -> None:
        try:
            while not self.stopped.wait(self.interval):
                self.stamped |= self._quietly(
                    lambda: JobHeartbeat.objects.update_or_create(
                        space_id=self.space_id,
                        receipt_id=self.receipt_id,
                        defaults={"beat_at": now()},
                    )
                )
            if self.stamped:
                self._quietly(
                    lambda: JobHeartbeat.objects.filter(
                        space_id=self.space_id, receipt_id=self.receipt_id
                    ).delete()
                )
        finally:
            connection.close()

    def _quietly(self, write: Callable[[], object]) -> bool:
        try:
            write()
            return True
        except DatabaseError:
            log.warning("heartbeat of job %s not recorded this time", self.receipt_id)
            return False

    def stop(self) -> None:
        self.stopped.set()
        self.join()


def execute(job: Job) -> None:
    """Run a claimed job to its end (committed, or failed), with a heartbeat while it runs."""
    handler = JOB_HANDLERS.get(job.kind)
    if handler is None:
        fail(job, "internal_error", "No handler for this job kind.")
        return
    heartbeat = Heartbeat.around(job)
    started = time.perf_counter()
    kind = job.kind if job.kind in JOB_HANDLERS else "other"
    # every line logged while the job runs names its receipt's principal, space and op
    receipt = job.receipt
    tokens = (
        PRINCIPAL_ID.set(receipt.principal_id),
        SPACE_ID.set(job.space_id),
        OP.set(receipt.op),
    )
    try:
        with tracer.start_as_current_span("memory.job") as span:
            span.set_attribute("memory.job.kind", kind)
            _execute(job, handler)
    finally:
        if heartbeat is not None:
            heartbeat.stop()
        elapsed = time.perf_counter() - started
        outcome = _job_outcome(job)
        metrics.JOB_DURATION.labels(kind=kind).observe(elapsed)
        metrics.JOBS.labels(kind=kind, outcome=outcome).inc()
        jobs_log.info(
            "job %s %s %.1fms",
            kind,
            outcome,
            elapsed * 1000,
            extra={"kind": kind, "outcome": outcome, "duration_ms": round(elapsed * 1000, 3)},
        )
        for var, token in zip((PRINCIPAL_ID, SPACE_ID, OP), tokens, strict=True):
            var.reset(token)


def _job_outcome(job: Job) -> str:
    """committed, failed, or again (re-queued, superseded, or not readable now)."""
    try:
        state = Job.objects.filter(space_id=job.space_id, pk=job.pk).values_list("state", flat=True)
        found = next(iter(state), "")
    except DatabaseError:
        return "unknown"
    return {Job.DONE: "committed", Job.FAILED: "failed"}.get(found, "again")


def _execute(job: Job, handler: JobHandler) -> None:
    try:
        with transaction.atomic():
            refs = handler.run(job)
            if not complete(job, Receipt.COMMITTED, refs=refs):
                raise _Superseded
    except _Superseded:
        log.info("job %s was completed by another run; this run rolled back", job.receipt_id)
    except WireError as err:
        fail(job, err.code, err.message)
    except Exception as err:
        if isinstance(err, RunAgain) or _serialization_failure(err):
            log.info("job %s (%s) runs again: %s", job.receipt_id, job.kind, type(err).__name__)
            _run_again(job)
            return
        log.exception("job %s (%s) failed", job.receipt_id, job.kind)
        fail(job, "internal_error", "The job failed.")


@shared_task(name="memory.tasks.run_job", acks_late=True, reject_on_worker_lost=True)
def run_job(receipt_id: str, space_id: str | None = None) -> None:
    """`space_id`: the job's space (messages sent before it was carried have none: see _claim)."""
    job = _claim(receipt_id, space_id)
    if job is None:
        return  # already done, running elsewhere, or unknown: a redelivery does nothing
    execute(job)


@shared_task(name="memory.tasks.sweep_jobs")
def sweep_jobs() -> dict[str, Any]:
    """Re-queue jobs stuck running past the timeout (their worker died) or never delivered
    (queued past the timeout: the broker was down); fail those out of attempts."""
    cutoff = now() - timedelta(seconds=settings.SPOKE_MEMORY_JOB_TIMEOUT_S)
    alive = JobHeartbeat.objects.filter(
        space_id=OuterRef("space_id"), receipt_id=OuterRef("pk"), beat_at__gte=cutoff
    )
    stuck = Job.objects.filter(
        Q(state=Job.RUNNING, started_at__lt=cutoff) & ~Exists(alive)
        | Q(state=Job.QUEUED, enqueued_at__lt=cutoff)
    )  # the scan reads across spaces; what it does to each job names the job's space
    requeued = failed = 0
    for job in stuck:
        if job.attempts >= MAX_ATTEMPTS:
            # its receipt read naming the space (a join on receipt_id alone is refused by Citus)
            job.receipt = Receipt.objects.get(space_id=job.space_id, pk=job.receipt_id)
            fail(job, "internal_error", "The job did not finish in time.")
            failed += 1
            continue
        if Job.objects.filter(space_id=job.space_id, pk=job.pk, state=job.state).update(
            state=Job.QUEUED, enqueued_at=now()
        ):
            requeued += 1
            try:
                run_job.delay(job.receipt_id, job.space_id)
            except Exception:
                log.warning("broker unavailable; job %s stays queued", job.receipt_id)
    if DRAINS:
        try:
            drain_derived.delay()
        except Exception:
            log.warning("broker unavailable; derived copies wait for the next sweep")
    return {"requeued": requeued, "failed": failed}
