"""Pending work on real Celery worker processes (docs/protocol.md#receipts; issue: async work): the receipt and
the job are written together, the task is enqueued after commit, a worker completes it; a worker
killed mid-export leaves no half-visible bundle and the sweeper gets the receipt to an end.
Also the sweeper's rules, run in-process."""

import json
import time
from datetime import timedelta

import pytest
from django.conf import settings as django_settings

from memory.models import Export, ExportChunk, Job, JobHeartbeat, Receipt, Reflection
from memory.tasks import MAX_ATTEMPTS, sweep_jobs
from memory.timeutil import now
from memory.wire.canonical import digest
from tests.conftest import requires_postgres

from .conftest import job_state, make_record, receipt_status, subject_row, wait_for

transactional = pytest.mark.django_db(transaction=True)


def _records(n: int, size: int = 400) -> None:
    u1 = subject_row("s1", "u1")
    for i in range(n):
        make_record(
            u1,
            f"note {i} " + "y" * size,
            kind=["preference", "fact", "plan", "event"][i % 4],
            context_id=None if i % 3 else "c1",
        )


@pytest.mark.worker
@transactional
def test_a_real_worker_completes_reflections_and_exports(api, admin, start_worker):
    _records(5)
    start_worker()
    session = api.connect(admin)
    gen = api(
        admin, "memory.reflections.generate", {"space_id": "s1", "subject_id": "u1"}, session
    ).receipt
    exp = api(admin, "memory.exports.create", {"space_id": "s1"}, session).receipt
    assert gen["status"] == exp["status"] == "pending"
    for receipt in (gen, exp):
        wait_for(lambda r=receipt: receipt_status(r["receipt_id"]) != "pending", what="the worker")
    got = api(admin, "memory.receipts.get", {"receipt_id": gen["receipt_id"]}, session).receipt
    assert got["status"] == "committed" and got["refs"][0]["type"] == "reflection"
    assert Reflection.objects.filter(reflection_id=got["refs"][0]["id"]).exists()
    chunk = api(
        admin,
        "memory.exports.get",
        {"space_id": "s1", "export_id": exp["refs"][0]["id"], "ordinal": 0},
        session,
    )
    assert chunk.status == 200 and chunk.body["bundle"]["object_counts"]["record"] == 5
    assert api(admin, "memory.spaces.list", {}, session).body["spaces"][0]["pending_receipts"] == 0


@pytest.mark.worker
@transactional
def test_a_worker_killed_mid_export_leaves_nothing_half_visible(api, admin, start_worker, tmp_path):
    _records(300)
    slow = start_worker(SPOKE_MEMORY_EXPORT_CHUNK_BYTES="4096", SPOKE_TEST_EXPORT_PAUSE_S="0.2")
    session = api.connect(admin)
    receipt_id = api(admin, "memory.exports.create", {"space_id": "s1"}, session).receipt[
        "receipt_id"
    ]
    wait_for(lambda: job_state(receipt_id) == "running", what="the export to start")
    slow.kill()
    assert receipt_status(receipt_id) == "pending"
    assert Export.objects.get().state == "pending" and not ExportChunk.objects.exists()
    # A second worker with beat: its sweeper (short timeout) re-queues the orphaned job.
    start_worker(
        SPOKE_MEMORY_EXPORT_CHUNK_BYTES="4096",
        SPOKE_MEMORY_JOB_TIMEOUT_S="2",
        SPOKE_MEMORY_SWEEP_INTERVAL_S="1",
        CELERY_EXTRA="beat",
    )
    wait_for(
        lambda: receipt_status(receipt_id) != "pending",
        timeout=180,
        what="the sweeper and second worker",
    )
    receipt = Receipt.objects.get(pk=receipt_id)
    assert receipt.status in ("committed", "failed")
    export = Export.objects.get()
    if receipt.status == "committed":
        assert export.state == "ready"
        chunks = list(ExportChunk.objects.filter(export=export).order_by("ordinal"))
        assert len(chunks) == export.bundle["chunk_count"] > 1
        assert [c.digest for c in chunks] == export.bundle["chunk_digests"]
        assert export.bundle["object_counts"]["record"] == 300
        assert Job.objects.get(pk=receipt_id).attempts >= 2
    else:
        assert export.state == "failed" and not ExportChunk.objects.filter(export=export).exists()


@requires_postgres  # SQLite: the job's write transaction locks the database against the heartbeat
@pytest.mark.worker
@transactional
def test_a_job_longer_than_three_timeouts_finishes_on_its_first_attempt(api, admin, start_worker):
    """The heartbeat keeps a long job alive in the sweeper's eyes: with a 2 s timeout, a sweep
    every second, an idle second worker and an export of well over 6 s, the job is never
    re-queued, run twice nor failed."""
    _records(300)
    slow = {
        "SPOKE_MEMORY_EXPORT_CHUNK_BYTES": "4096",
        "SPOKE_TEST_EXPORT_PAUSE_S": "0.2",
        "SPOKE_MEMORY_JOB_TIMEOUT_S": "2",
        "SPOKE_MEMORY_SWEEP_INTERVAL_S": "1",
    }
    start_worker(**slow, CELERY_EXTRA="beat")
    start_worker(**slow)  # an idle second worker would take any re-queued delivery at once
    session = api.connect(admin)
    receipt_id = api(admin, "memory.exports.create", {"space_id": "s1"}, session).receipt[
        "receipt_id"
    ]
    wait_for(lambda: job_state(receipt_id) == "running", what="the export to start")
    beats = set()
    while receipt_status(receipt_id) == "pending":
        beats.update(
            JobHeartbeat.objects.filter(receipt_id=receipt_id).values_list("beat_at", flat=True)
        )
        time.sleep(0.3)
    job = Job.objects.get(pk=receipt_id)
    assert receipt_status(receipt_id) == "committed" and job.attempts == 1
    assert job.finished_at - job.started_at > timedelta(
        seconds=3 * 2
    )  # it really outlived the timeout
    assert len(beats) >= 3  # and was stamped while it ran
    # Removed at the end: the worker stops its heartbeat right after the job's commit.
    wait_for(
        lambda: not JobHeartbeat.objects.filter(receipt_id=receipt_id).exists(),
        what="the heartbeat row to be removed",
    )
    assert Export.objects.get().bundle["object_counts"]["record"] == 300


@pytest.mark.django_db
def test_sweeper_leaves_a_long_job_with_a_fresh_heartbeat_alone(pending_export, monkeypatch):
    sent = []
    monkeypatch.setattr("memory.tasks.run_job.delay", lambda rid, *space: sent.append(rid))
    long_ago = now() - timedelta(seconds=django_settings.SPOKE_MEMORY_JOB_TIMEOUT_S * 10)
    Job.objects.filter(pk=pending_export).update(state=Job.RUNNING, started_at=long_ago, attempts=1)
    JobHeartbeat.objects.create(space_id="s1", receipt_id=pending_export, beat_at=now())
    assert sweep_jobs() == {"requeued": 0, "failed": 0} and sent == []
    JobHeartbeat.objects.filter(receipt_id=pending_export).update(
        beat_at=long_ago
    )  # the worker went silent
    assert sweep_jobs() == {"requeued": 1, "failed": 0} and sent == [pending_export]


@transactional
def test_export_job_at_top_level_takes_a_repeatable_read_snapshot(api, admin):
    """Run as a worker runs it (outermost transaction), in-process."""
    from memory.tasks import run_job

    _records(3)
    session = api.connect(admin)
    receipt_id = api(admin, "memory.exports.create", {"space_id": "s1"}, session).receipt[
        "receipt_id"
    ]
    run_job(receipt_id)
    export = Export.objects.get()
    assert receipt_status(receipt_id) == "committed" and export.state == "ready"
    chunk = ExportChunk.objects.get(export=export, ordinal=0)
    assert chunk.digest == digest(json.loads(chunk.objects_json))


# --- the sweeper's rules, in-process -------------------------------------------------------------


@pytest.fixture
def pending_export(api, admin):
    _records(3)
    session = api.connect(admin)
    return api(admin, "memory.exports.create", {"space_id": "s1"}, session).receipt["receipt_id"]


@pytest.mark.django_db
def test_sweeper_requeues_a_job_whose_worker_vanished(pending_export, settings, monkeypatch):
    sent = []
    monkeypatch.setattr("memory.tasks.run_job.delay", lambda rid, *space: sent.append(rid))
    Job.objects.filter(pk=pending_export).update(
        state=Job.RUNNING, started_at=now() - timedelta(seconds=600), attempts=1
    )
    assert sweep_jobs() == {"requeued": 1, "failed": 0}
    assert sent == [pending_export] and job_state(pending_export) == Job.QUEUED
    assert sweep_jobs() == {"requeued": 0, "failed": 0}  # fresh again: not past the timeout


@pytest.mark.django_db
def test_sweeper_fails_a_job_out_of_attempts_and_marks_the_export_failed(pending_export):
    Job.objects.filter(pk=pending_export).update(
        state=Job.RUNNING,
        started_at=now() - timedelta(seconds=django_settings.SPOKE_MEMORY_JOB_TIMEOUT_S + 5),
        attempts=MAX_ATTEMPTS,
    )
    assert sweep_jobs() == {"requeued": 0, "failed": 1}
    receipt = Receipt.objects.get(pk=pending_export)
    assert receipt.status == "failed" and receipt.failure["code"] == "internal_error"
    assert Export.objects.get().state == "failed" and job_state(pending_export) == Job.FAILED


@pytest.mark.django_db
def test_a_run_that_lost_the_race_rolls_back(pending_export):
    """The receipt was failed by the sweeper while a slow run went on: that run's work is undone."""
    from memory.tasks import _claim, execute

    job = _claim(pending_export)
    Receipt.objects.filter(pk=pending_export).update(status="failed")
    execute(job)
    assert not ExportChunk.objects.exists() and Export.objects.get().state == "pending"


@pytest.mark.django_db
def test_a_redelivered_task_does_nothing(pending_export):
    from memory.tasks import run_job

    run_job(pending_export)
    first = Export.objects.get().bundle
    run_job(pending_export)
    assert (
        Export.objects.get().bundle == first and ExportChunk.objects.count() == first["chunk_count"]
    )
