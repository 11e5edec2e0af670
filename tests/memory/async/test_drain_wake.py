"""Content writes wake the embedding drain with one broker message per burst per process
(`memory.tasks.wake_drain`), not one per write, and a real worker still embeds every write of
the burst (issue 30)."""

from __future__ import annotations

import threading

import pytest
from celery.signals import before_task_publish

from memory.models import PendingEmbedding, Record, RecordEmbedding
from memory.tasks import Coalesced, wake_drain
from tests.conftest import embedding_writer
from tests.memory.hybrid.conftest import needs_semantic

from .conftest import wait_for


def test_a_burst_sends_once_at_its_start_and_once_at_its_end(settings):
    settings.SPOKE_MEMORY_DRAIN_WAKE_MS = 60_000  # the window closes when the test says so
    sent: list[int] = []
    wake = Coalesced(lambda: sent.append(1), "a test")
    for _ in range(10):
        wake()
    assert len(sent) == 1  # the first call of the burst, at once
    wake.flush()
    assert len(sent) == 2  # the window closed with calls in it: one more send
    wake.flush()  # the window that send opened closes with no call in it: nothing
    assert len(sent) == 2
    wake()
    assert len(sent) == 3  # a new burst starts at once
    wake.flush()
    assert len(sent) == 3


def test_every_call_is_followed_by_a_send_that_starts_after_it(settings):
    """Calls from many threads while windows close under them: each call is covered by a send
    that began after the call returned (the drain it wakes then sees the call's COMMIT)."""
    settings.SPOKE_MEMORY_DRAIN_WAKE_MS = 1
    lock = threading.Lock()
    sends: list[int] = []  # the sequence number current when each send started
    seq = [0]

    def send():
        with lock:
            sends.append(seq[0])

    wake = Coalesced(send, "a test")
    called: list[int] = []

    def caller():
        for _ in range(200):
            with lock:
                seq[0] += 1
                mine = seq[0]
            wake()
            called.append(mine)

    threads = [threading.Thread(target=caller) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wake.flush()
    last_call = max(called)
    assert sends and max(sends) >= last_call  # a send started after the last call


def test_with_no_window_every_call_sends(settings):
    settings.SPOKE_MEMORY_DRAIN_WAKE_MS = 0
    sent: list[int] = []
    wake = Coalesced(lambda: sent.append(1), "a test")
    for _ in range(3):
        wake()
    assert len(sent) == 3


def test_a_failed_send_at_the_window_end_is_logged_not_raised(settings, caplog):
    settings.SPOKE_MEMORY_DRAIN_WAKE_MS = 60_000
    calls: list[int] = []

    def send():
        calls.append(1)
        if len(calls) > 1:
            raise ConnectionError("broker down")

    wake = Coalesced(send, "a test")
    wake()
    wake()
    wake.flush()
    assert len(calls) == 2
    assert "broker unavailable; a test waits for the next sweep" in caplog.text


@needs_semantic
@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_embeds_every_write_of_a_burst_woken_by_two_messages(
    api, admin, settings, start_worker
):
    settings.SPOKE_MEMORY_DRAIN_WAKE_MS = 60_000  # one window for the whole burst
    published: list[str] = []

    def count(sender=None, **_):
        published.append(sender)

    before_task_publish.connect(count, weak=False)
    try:
        with embedding_writer(settings, "hybrid/6"):
            worker = start_worker(SPOKE_MEMORY_ENGINE="hybrid/6")
            session = api.connect(admin)
            ensured = api(admin, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
            assert ensured.status == 200
            n = 20
            for i in range(n):
                answer = api.note(admin, f"burst note number {i} about the garden", session)
                assert answer.status == 200, answer.body
            drains = [s for s in published if s == "memory.tasks.drain_derived"]
            assert len(drains) == 1  # the burst's first write woke the drain; the rest waited
            wake_drain.flush()  # the window ends: one more message, after every COMMIT above
            drains = [s for s in published if s == "memory.tasks.drain_derived"]
            assert len(drains) == 2
            wait_for(
                lambda: (
                    RecordEmbedding.objects.count() == n and not PendingEmbedding.objects.exists()
                ),
                timeout=300,
                what="the worker to embed every record of the burst",
            )
            assert set(RecordEmbedding.objects.values_list("record_id", flat=True)) == set(
                Record.objects.values_list("pk", flat=True)
            )
            worker.stop()
    finally:
        before_task_publish.disconnect(count)
        wake_drain.flush()
