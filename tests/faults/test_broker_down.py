"""Fault: the broker is down when a pending op is accepted (docs/protocol.md#receipts; docs/reliability.md).
The op still answers `pending`, its job row stays queued (the job table is the outbox), and once
the broker is back the sweeper sends the job again and the work completes. Runs the real
mutation framework (`memory.services.mutation.mutate`) and the real Celery publish path against an
unreachable broker (a closed loopback port); only the worker is in-process (eager) once the
broker is "back", so the test does not need a worker process."""

from datetime import timedelta

import pytest
from django.test import override_settings

from memory.models import Job, Receipt
from memory.ops.base import OpContext
from memory.services.mutation import Outcome, mutate
from memory.tasks import JOB_HANDLERS, JobHandler, sweep_jobs
from memory.timeutil import now
from spokememory.celery import app

pytestmark = pytest.mark.django_db

KIND = "faults.broker_down"


@pytest.fixture
def job_kind(monkeypatch):
    done = []

    def handler(job):
        done.append(job.receipt_id)
        return [{"type": "space", "id": "s1", "revision": 1}]

    monkeypatch.setitem(JOB_HANDLERS, KIND, JobHandler(handler))
    return done


@pytest.fixture
def broker_down():
    """Point the Celery app at a closed port, with no publish retries (fail fast)."""
    saved = {
        k: app.conf.get(k)
        for k in (
            "broker_url",
            "broker_write_url",
            "broker_read_url",
            "task_publish_retry",
            "broker_connection_timeout",
            "broker_transport_options",
            "task_always_eager",
        )
    }
    # The write and read URLs too: once the app is configured they hold the settings' broker
    # (publishing reads broker_write_url), so setting broker_url alone published to a live
    # broker on the suite's Redis leg.
    app.conf.update(
        broker_url="redis://127.0.0.1:1/0",
        broker_write_url="redis://127.0.0.1:1/0",
        broker_read_url="redis://127.0.0.1:1/0",
        task_publish_retry=False,
        broker_connection_timeout=1,
        broker_transport_options={},
        task_always_eager=False,
    )
    _drop_connections()
    try:
        yield
    finally:
        app.conf.update(saved)
        _drop_connections()


def _drop_connections() -> None:
    """Forget every pooled connection and producer, so the next publish dials the current
    broker_url (the producer pool caches its connection past `app.close()`)."""
    from kombu import pools

    app.close()
    app.amqp._producer_pool = None
    pools.reset()


def accept_pending(admin) -> dict:
    ctx = OpContext(principal=admin.principal, op="memory.spaces.unfreeze")

    def body(scope):
        scope.coverage("s1")
        return Outcome(refs=[], status=Receipt.PENDING, job_kind=KIND, job_params={})

    return mutate(ctx, {"space_id": "s1", "idempotency_key": "pending-1"}, body)


def test_pending_op_survives_a_dead_broker_and_completes_once_it_is_back(
    admin, job_kind, broker_down, django_capture_on_commit_callbacks, caplog, settings
):
    with django_capture_on_commit_callbacks(execute=True):
        answer = accept_pending(admin)
    receipt = answer["receipt"]
    assert receipt["status"] == "pending"
    job = Job.objects.get(receipt_id=receipt["receipt_id"])
    assert job.state == Job.QUEUED and job.attempts == 0
    assert job_kind == []  # nothing ran: the publish failed and was only logged

    # While the broker stays down, the sweeper keeps the job queued (nothing lost, nothing failed).
    Job.objects.filter(pk=job.pk).update(
        enqueued_at=now() - timedelta(seconds=settings.SPOKE_MEMORY_JOB_TIMEOUT_S + 1)
    )
    assert sweep_jobs() == {"requeued": 1, "failed": 0}
    job.refresh_from_db()
    assert job.state == Job.QUEUED and Receipt.objects.get(pk=job.receipt_id).status == "pending"

    # The broker is back (an in-process worker stands for it): the next sweep delivers the job.
    Job.objects.filter(pk=job.pk).update(
        enqueued_at=now() - timedelta(seconds=settings.SPOKE_MEMORY_JOB_TIMEOUT_S + 1)
    )
    with override_settings(CELERY_TASK_ALWAYS_EAGER=True):
        app.conf.task_always_eager = True
        assert sweep_jobs() == {"requeued": 1, "failed": 0}
    job.refresh_from_db()
    assert job.state == Job.DONE
    assert Receipt.objects.get(pk=job.receipt_id).status == "committed"
    assert job_kind == [job.receipt_id]  # exactly once

    # A late redelivery of the same message does nothing (the claim is conditional).
    from memory.tasks import run_job

    run_job(job.receipt_id)
    assert job_kind == [job.receipt_id]


def test_pending_replay_with_its_key_answers_the_same_pending_receipt(
    admin, job_kind, broker_down, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        first = accept_pending(admin)
        again = accept_pending(admin)
    assert again == first
    assert Job.objects.filter(receipt_id=first["receipt"]["receipt_id"]).count() == 1
