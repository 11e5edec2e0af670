"""Fault: PostgreSQL goes away under a request (docs/decisions/database-unavailable.md).

The database really is unavailable in each case, no mock: the request's connection points at a
closed port (the server is down), or its backend is terminated with pg_terminate_backend from a
second connection while the request is blocked in the middle of its transaction (after it wrote
the record) or in its COMMIT. Every case answers `503 unavailable` with `Retry-After` and the
JSON envelope, writes nothing (or, in the COMMIT case, says the outcome is unknown), and a retry
with the same idempotency key executes exactly once."""

from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager

import psycopg
import pytest
from django.db import connection, connections

from memory.models import IdempotencyKey, Receipt, Record, RecordRevision, Space, Subject
from tests.conftest import requires_postgres

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]

MARKER = "pgfault-private-content"


def create_body(key: str = "k-1") -> dict:
    return {
        "space_id": "s1",
        "subject_id": "u1",
        "kind": "note",
        "content": {"text": f"{MARKER} {key}"},
        "placement": {"scope": "shared"},
        "idempotency_key": key,
    }


def census() -> dict:
    return {
        "receipts": Receipt.objects.count(),
        "keys": IdempotencyKey.objects.count(),
        "records": Record.objects.count(),
        "revisions": RecordRevision.objects.count(),
        "space_revision": Space.objects.get(space_id="s1").revision,
        "subject_revision": Subject.objects.get(space_id="s1", subject_id="u1").revision,
    }


def assert_clean_503(answer, outcome: str | None = None) -> None:
    assert answer.status == 503, answer.body
    assert answer.headers["Content-Type"].startswith("application/json")
    assert answer.headers["Retry-After"] == "1"
    assert set(answer.body) == {"error"}
    error = answer.body["error"]
    assert error["code"] == "unavailable" and error["extensions"] == {}
    assert error.get("details", {}).get("outcome") == outcome
    text = json.dumps(answer.body)
    assert MARKER not in text and "Traceback" not in text


def dsn() -> dict:
    s = connection.settings_dict
    return {
        "host": s["HOST"],
        "port": s["PORT"] or 5432,
        "user": s["USER"],
        "password": s["PASSWORD"] or None,
        "dbname": s["NAME"],
        "autocommit": True,
    }


@contextmanager
def side_connection(autocommit: bool = True):
    conn = psycopg.connect(**{**dsn(), "autocommit": autocommit})
    try:
        yield conn
    finally:
        conn.close()


def blocked_by(monitor, locker_pid: int, timeout: float = 30.0) -> tuple[int, str]:
    """The backend waiting on `locker_pid`'s lock, and the statement it waits in."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = monitor.execute(
            "SELECT pid, query FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
            [locker_pid],
        ).fetchone()
        if row:
            return row
        time.sleep(0.02)
    raise AssertionError("the request never blocked on the held lock")


def in_thread(fn):
    """Run fn in a thread with its own database connection (closed after); returns (thread, out)."""
    out: dict = {}

    def run() -> None:
        try:
            out["answer"] = fn()
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


@pytest.fixture
def wired(api, admin, ensure_subject):
    ensure_subject("u1")
    return admin


def test_server_down_answers_503_and_consumes_nothing(api, wired):
    before = census()
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT="1")  # nothing listens: connect refused
    try:
        down = api(wired, "memory.records.create", create_body())
        session = api.raw(
            "/v1/connect", json.dumps({"capabilities": ["spoke-memory"]}), token=wired.token
        )
    finally:
        connection.close()
        connection.settings_dict.update(saved)
    assert_clean_503(down)
    assert_clean_503(session)
    assert census() == before
    retry = api(wired, "memory.records.create", create_body())
    assert retry.status == 200, retry.body
    assert Receipt.objects.filter(idempotency_key="k-1").count() == 1
    assert census()["records"] == before["records"] + 1


def test_connection_lost_mid_transaction_rolls_back_its_writes(api, wired):
    """The request has locked the space and inserted the record and its revision row when its
    backend dies (it is waiting for the subject row a second connection holds)."""
    before = census()
    subject_pk = Subject.objects.get(space_id="s1", subject_id="u1").pk
    with side_connection(autocommit=False) as locker, side_connection() as monitor:
        locker.execute("SELECT 1 FROM memory_subject WHERE id = %s FOR NO KEY UPDATE", [subject_pk])
        thread, out = in_thread(lambda: api(wired, "memory.records.create", create_body()))
        pid, query = blocked_by(monitor, locker.info.backend_pid)
        # past the record insert: in the commit tail, whose first step bumps the subject
        assert query.startswith('WITH s0 AS (UPDATE "memory_subject"'), query
        monitor.execute("SELECT pg_terminate_backend(%s, 10000)", [pid])
        locker.rollback()
        thread.join(30)
    assert not thread.is_alive()
    assert_clean_503(out["answer"])
    assert census() == before  # no record, no revision row, no receipt, no key, no revision bump
    retry = api(wired, "memory.records.create", create_body())
    assert retry.status == 200, retry.body
    [record] = Record.objects.filter(space_id="s1")
    assert list(
        RecordRevision.objects.filter(record=record).values_list("revision", flat=True)
    ) == [1]
    assert retry.receipt["space_revision"] == before["space_revision"] + 1


HOLD_AT_COMMIT = """
CREATE FUNCTION pgfault_hold() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_advisory_xact_lock(70071); RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER pgfault_hold AFTER INSERT ON memory_receipt
DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pgfault_hold();
"""
DROP_HOLD = (
    "DROP TRIGGER IF EXISTS pgfault_hold ON memory_receipt; DROP FUNCTION IF EXISTS pgfault_hold();"
)


def test_connection_lost_during_commit_says_the_outcome_is_unknown(api, wired):
    """A deferred constraint trigger runs inside COMMIT; it waits for an advisory lock a second
    connection holds, so the request's backend dies while the provider waits on COMMIT."""
    before = census()
    with side_connection() as admin_conn, side_connection() as locker, side_connection() as monitor:
        admin_conn.execute(HOLD_AT_COMMIT)
        try:
            locker.execute("SELECT pg_advisory_lock(70071)")
            thread, out = in_thread(lambda: api(wired, "memory.records.create", create_body()))
            pid, query = blocked_by(monitor, locker.info.backend_pid)
            assert query.strip().upper() == "COMMIT", query
            monitor.execute("SELECT pg_terminate_backend(%s, 10000)", [pid])
            locker.execute("SELECT pg_advisory_unlock(70071)")
            thread.join(30)
        finally:
            admin_conn.execute(DROP_HOLD)
    assert not thread.is_alive()
    assert_clean_503(out["answer"], outcome="unknown")
    # Here the COMMIT did not complete, so nothing is stored and the retry executes once.
    assert census() == before
    retry = api(wired, "memory.records.create", create_body())
    assert retry.status == 200, retry.body
    again = api(wired, "memory.records.create", create_body())
    assert again.receipt["receipt_id"] == retry.receipt["receipt_id"]
    assert Receipt.objects.filter(idempotency_key="k-1").count() == 1
    assert Record.objects.filter(space_id="s1").count() == 1


def test_next_request_reconnects_after_the_backend_was_killed(api, wired):
    """Between requests: the persistent connection's backend is terminated; with
    CONN_HEALTH_CHECKS the next request (which runs close_old_connections first, as under a
    real server) notices, reconnects and succeeds."""
    from django.db import close_old_connections

    assert connection.settings_dict["CONN_HEALTH_CHECKS"] is True
    with side_connection() as monitor:
        pid = connection.cursor().connection.info.backend_pid
        monitor.execute("SELECT pg_terminate_backend(%s, 10000)", [pid])
    close_old_connections()  # the request_started hook the test client leaves out
    answer = api(wired, "memory.records.create", create_body())
    assert answer.status == 200, answer.body
    assert connection.cursor().connection.info.backend_pid != pid
