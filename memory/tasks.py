"""Celery tasks. They take ids only, load the job row, run the job's handler and complete the
receipt. Delivery is at-least-once (acks_late); a job is claimed by a conditional update so a
redelivered task does no second effect. The sweeper re-queues jobs stuck past the timeout and
fails them after MAX_ATTEMPTS, so no receipt stays pending forever."""
from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q

from memory.models import Job, Receipt
from memory.timeutil import now
from memory.wire.errors import WireError

log = logging.getLogger("memory.tasks")
MAX_ATTEMPTS = 3

# kind -> handler(job) returning (refs, space_revision or None). Raising WireError fails the
# receipt with that (content-free) code and message. Registered by the ops modules.
JOB_HANDLERS: dict[str, Callable[[Job], list[dict]]] = {}


def job_handler(kind: str):
    def register(fn):
        JOB_HANDLERS[kind] = fn
        return fn

    return register


def _claim(receipt_id: str) -> Job | None:
    """Move a queued job (or one whose runner vanished, as judged by the sweeper) to running."""
    updated = Job.objects.filter(receipt_id=receipt_id, state=Job.QUEUED).update(
        state=Job.RUNNING, attempts=F("attempts") + 1, started_at=now()
    )
    if not updated:
        return None
    return Job.objects.select_related("receipt").get(receipt_id=receipt_id)


def complete(job: Job, status: str, refs: list[dict] | None = None, failure: dict | None = None) -> None:
    at = now()
    Receipt.objects.filter(pk=job.receipt_id, status=Receipt.PENDING).update(
        status=status, refs=refs if refs is not None else job.receipt.refs, failure=failure, completed_at=at
    )
    Job.objects.filter(pk=job.pk).update(state=Job.DONE if status == Receipt.COMMITTED else Job.FAILED, finished_at=at)


@shared_task(name="memory.tasks.run_job", acks_late=True, reject_on_worker_lost=True)
def run_job(receipt_id: str) -> None:
    job = _claim(receipt_id)
    if job is None:
        return  # already done, running elsewhere, or unknown: a redelivery does nothing
    handler = JOB_HANDLERS.get(job.kind)
    try:
        if handler is None:
            raise WireError("internal_error", "No handler for this job kind.")
        refs = handler(job)
    except WireError as err:
        with transaction.atomic():
            complete(job, Receipt.FAILED, failure={"code": err.code, "message": err.message})
        return
    except Exception:
        log.exception("job %s (%s) failed", receipt_id, job.kind)
        with transaction.atomic():
            complete(job, Receipt.FAILED, failure={"code": "internal_error", "message": "The job failed."})
        return
    with transaction.atomic():
        complete(job, Receipt.COMMITTED, refs=refs)


@shared_task(name="memory.tasks.sweep_jobs")
def sweep_jobs() -> dict:
    """Re-queue jobs stuck running past the timeout (their worker died) or never delivered
    (queued past the timeout: the broker was down); fail those out of attempts."""
    cutoff = now() - timedelta(seconds=settings.SPOKE_MEMORY_JOB_TIMEOUT_S)
    stuck = Job.objects.filter(
        Q(state=Job.RUNNING, started_at__lt=cutoff) | Q(state=Job.QUEUED, enqueued_at__lt=cutoff)
    ).select_related("receipt")
    requeued = failed = 0
    for job in stuck:
        if job.attempts >= MAX_ATTEMPTS:
            with transaction.atomic():
                complete(job, Receipt.FAILED, failure={"code": "internal_error", "message": "The job did not finish in time."})
            failed += 1
            continue
        if Job.objects.filter(pk=job.pk, state=job.state).update(state=Job.QUEUED, enqueued_at=now()):
            requeued += 1
            try:
                run_job.delay(job.receipt_id)
            except Exception:
                log.warning("broker unavailable; job %s stays queued", job.receipt_id)
    return {"requeued": requeued, "failed": failed}
