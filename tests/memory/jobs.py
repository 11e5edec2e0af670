"""Factories for the async families (reflections, transfer): records, candidates and profile
documents written directly with the ORM (Record + RecordRevision rows), and helpers to run a
pending receipt's job in-process or on a real Celery worker. Used by tests/memory/ops/ (the
reflections and transfer families), tests/memory/async/ (the machinery under them: workers,
erasure, activation) and by name elsewhere (tests/reviews/jobs.py)."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from memory.ids import new_id
from memory.models import (
    Candidate,
    Job,
    ProfileDocument,
    Receipt,
    Record,
    RecordRevision,
    Space,
    Subject,
)
from memory.tasks import _claim, execute
from memory.timeutil import now

ROOT = Path(__file__).resolve().parents[2]
_seq = itertools.count()


def subject_row(space_id: str = "s1", subject_id: str = "u1") -> Subject:
    at = now()
    return Subject.objects.get_or_create(
        space_id=space_id, subject_id=subject_id, defaults={"created_at": at, "updated_at": at}
    )[0]


def make_record(
    subject: Subject,
    text: str = "a note",
    kind: str = "note",
    context_id: str | None = "c1",
    cognition: list | None = None,
    revisions: int = 1,
    record_id: str | None = None,
) -> Record:
    """A record with `revisions` history rows; content of revision n is `text` (+ ' rN' for n>1)."""
    at = now()
    content: dict = {"text": text}
    if cognition is not None:
        content["cognition"] = cognition
    record = Record.objects.create(
        space_id=subject.space_id,
        subject=subject,
        record_id=record_id or new_id("record"),
        kind=kind,
        content=content,
        text=text,
        placement_scope="context" if context_id else "shared",
        placement_context_id=context_id,
        prov_source="authored",
        prov_author_principal_id="prn_test",
        prov_created_at=at,
        revision=1,
        created_at=at,
        updated_at=at,
    )
    RecordRevision.objects.create(
        record=record,
        revision=1,
        kind=kind,
        content=dict(content),
        placement_scope=record.placement_scope,
        placement_context_id=context_id,
        created_at=at,
    )
    for n in range(2, revisions + 1):
        update_record(record, f"{text} r{n}")
    return record


def update_record(record: Record, text: str) -> Record:
    at = now()
    record.revision += 1
    record.content = {**record.content, "text": text}
    record.text, record.updated_at = text, at
    record.save()
    RecordRevision.objects.create(
        record=record,
        revision=record.revision,
        kind=record.kind,
        content=dict(record.content),
        placement_scope=record.placement_scope,
        placement_context_id=record.placement_context_id,
        created_at=at,
    )
    return record


def delete_record(record: Record) -> Record:
    at = now()
    record.revision += 1
    record.content, record.text = {"text": ""}, ""
    record.deleted_at, record.deleted_by_principal_id, record.updated_at = at, "prn_test", at
    record.save()
    RecordRevision.objects.filter(record=record).update(content={"text": ""})
    return record


def make_candidate(
    subject: Subject, text: str = "captured", context_id: str | None = "c1"
) -> Candidate:
    return Candidate.objects.create(
        space_id=subject.space_id,
        subject=subject,
        candidate_id=new_id("candidate"),
        scope_placement_scope="context" if context_id else "shared",
        scope_context_id=context_id,
        proposed={"content": {"text": text}},
        classification={
            "label": "fact",
            "confidence": 0.5,
            "signals": [],
            "policy_version": "engine/2",
        },
        captured_by_principal_id="prn_test",
        captured_at=now(),
    )


def make_profile(
    subject: Subject, kind: str = "preferences", text: str = "likes tea"
) -> ProfileDocument:
    at = now()
    return ProfileDocument.objects.create(
        space_id=subject.space_id,
        subject=subject,
        kind=kind,
        content={"text": text},
        author_principal_id="prn_test",
        created_at=at,
        updated_at=at,
    )


def run_pending(receipt_id: str) -> Receipt:
    """Run a pending receipt's job in this process, as a worker would (claim, then execute)."""
    job = _claim(receipt_id)
    assert job is not None, "no queued job for this receipt"
    execute(job)
    return Receipt.objects.get(pk=receipt_id)


@pytest.fixture
def run_job_now():
    return run_pending


@pytest.fixture
def s1_subject(space):
    return subject_row("s1", "u1")


def new_space(space_id: str) -> Space:
    at = now()
    return Space.objects.create(
        space_id=space_id, display_name=space_id, created_at=at, updated_at=at
    )


# --- real workers -------------------------------------------------------------------------------


def worker_env(**extra: str) -> dict:
    """Environment of a worker subprocess: this worktree's code, the TEST database pytest-django
    created (test_<name> on PostgreSQL, the TEST NAME file on SQLite), the same broker."""
    env = dict(os.environ)
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        user = db.get("USER") or "postgres"
        password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
        env["DATABASE_URL"] = (
            f"postgres://{user}{password}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"
        )
    else:
        env["DATABASE_URL"] = f"sqlite:///{db['NAME']}"
    env["CELERY_BROKER_URL"] = settings.CELERY_BROKER_URL
    env["PYTHONPATH"] = str(ROOT)
    # Servers started from here serve static files from the source folders, as the suite does
    # (no collectstatic manifest); tests/test_first_run.py runs the hashed production path.
    env.setdefault("SPOKE_MEMORY_STATIC_HASHED", "0")
    env["DJANGO_SETTINGS_MODULE"] = "tests.memory.async.worker_settings"
    env.update(extra)
    return env


class Worker:
    def __init__(self, **env: str) -> None:
        n = next(_seq)
        loglevel = env.pop("CELERY_LOGLEVEL", "WARNING")
        args = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "spokememory",
            "worker",
            # CELERY_POOL=prefork: as `make run` starts it (one child runs the tasks)
            f"--pool={env.pop('CELERY_POOL', 'solo')}",
            "--concurrency=1",
            f"--loglevel={loglevel}",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
            "-n",
            f"test{n}@%h",
        ]
        if env.pop("CELERY_EXTRA", None) == "beat":
            args += [
                "-B",
                "-s",
                str(Path(tempfile.gettempdir()) / f"spoke-celerybeat-test-{os.getpid()}-{n}"),
            ]
        # CELERY_OUTPUT: a file for the worker's stdout and stderr (its log lines)
        output = env.pop("CELERY_OUTPUT", None)
        sink = open(output, "w") if output else None  # noqa: SIM115 - the child holds its own
        self.proc = subprocess.Popen(  # noqa: S603 (our own interpreter and fixed arguments)
            args,
            cwd=str(ROOT),
            env=worker_env(**env),
            start_new_session=True,
            stdout=sink or subprocess.DEVNULL,
            stderr=subprocess.STDOUT if sink else subprocess.PIPE,
        )
        if sink is not None:
            sink.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def start_worker():
    workers: list[Worker] = []

    def start(**env: str) -> Worker:
        w = Worker(**env)
        workers.append(w)
        return w

    yield start
    for w in workers:
        w.stop()


def wait_for(predicate, timeout: float = 120.0, what: str = "condition"):
    """Wait for a state change made by another process (not a timed assertion: the deadline is
    only there so a broken worker fails the test instead of hanging it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def a_session_waits_for_a_lock() -> bool:
    """PostgreSQL: whether a session of this test database waits for a lock now (a thread's
    transaction has reached the lock another holds): what race tests wait for, never time."""
    from tests.conftest import any_lock_wait

    return any_lock_wait()


def receipt_status(receipt_id: str) -> str:
    return Receipt.objects.get(pk=receipt_id).status


def job_state(receipt_id: str) -> str:
    return Job.objects.get(pk=receipt_id).state
