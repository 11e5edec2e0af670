"""The lock order of mutations holds on every attempt (docs/architecture.md "Why mutations
serialize per space"): a mutation's last attempt, which takes the space row lock before its
body, takes the rows its request names first, as a writer does; a grant does not hold its
grantee's row against the commit of the grantee's own writes; and a retryable failure that is
left on the last attempt answers `503 unavailable` with `Retry-After`, changing nothing, never
`500 internal_error`.

Each race is forced with real PostgreSQL connections in threads: a mutation is held at the
start of its commit (`mutation._commit`, wrapped) while another takes its locks, and the test
waits on PostgreSQL's own view of who waits for a lock (`pg_stat_activity`), never on time."""

from __future__ import annotations

import json
import logging
import threading
import time

import psycopg
import pytest
from django.db import connection, connections
from django.test import Client

from memory.models import IdempotencyKey, Receipt, Record, Space, Subject
from memory.ops.base import call
from memory.services import mutation
from memory.services.operators import issue_root_grant
from memory.wire.errors import WireError
from tests.conftest import make_persona, make_space, requires_postgres

HANG = 120  # seconds: not a timed assertion, only turns a hang into a failure
C1 = {"scope": "context", "context_id": "c1"}


def _world():
    make_space("s1")
    admin = make_persona("writer")
    issue_root_grant(Space.objects.get(pk="s1"), admin.principal)
    call(admin.principal, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
    return admin


def _create(text: str, **extra) -> tuple[str, dict]:
    return (
        "memory.records.create",
        {
            "space_id": "s1",
            "subject_id": "u1",
            "kind": "fact",
            "content": {"text": text},
            "placement": C1,
            **extra,
        },
    )


def _pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _waits_for_a_lock(pid: int) -> bool:
    from tests.conftest import backend_waits_for_a_lock

    return backend_waits_for_a_lock(pid)


def _until(done, what: str) -> None:
    """Poll PostgreSQL's state until `done()`; HANG only turns a hang into a failure."""
    give_up = time.monotonic() + HANG
    while not done():
        assert time.monotonic() < give_up, f"never: {what}"
        time.sleep(0.01)


class Held:
    """One mutation held at the start of its commit (after its body ran and took its locks):
    `reached` is set there, with its backend's pid, and it goes on when `go` is set."""

    def __init__(self, text: str, patience: str | None = None) -> None:
        self.text, self.patience = text, patience
        self.reached, self.go = threading.Event(), threading.Event()
        self.pid = 0

    def matches(self, scope, req) -> bool:
        return req.get("content", {}).get("text") == self.text or req.get("idempotency_key") == (
            self.text
        )


def _hold(monkeypatch, *held: Held) -> None:
    real = mutation._commit

    def commit(scope, req, outcome):
        for h in held:
            if h.matches(scope, req) and not h.reached.is_set():
                if h.patience is not None:
                    # this transaction waits long before it checks for a deadlock, so the other
                    # side of a cycle is the one PostgreSQL rolls back (the victim is whoever
                    # checks first)
                    with connection.cursor() as cursor:
                        cursor.execute(f"SET LOCAL deadlock_timeout = '{h.patience}'")
                h.pid = _pid()
                h.reached.set()
                assert h.go.wait(HANG)
        return real(scope, req, outcome)

    monkeypatch.setattr(mutation, "_commit", commit)


def _post(token: str, op: str, body: dict, answers: dict, name: str) -> threading.Thread:
    def run():
        try:
            response = Client(raise_request_exception=False).post(
                f"/v1/ops/{op}",
                data=json.dumps(body),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {token}",
            )
            answers[name] = response
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _join(*threads: threading.Thread) -> None:
    for t in threads:
        t.join(HANG)
    assert not any(t.is_alive() for t in threads), "a request hung"


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_a_last_attempt_and_a_writer_in_its_commit_tail_do_not_deadlock(monkeypatch):
    """The diagnosed interleaving (issue 30's mixed load answered 500 from it): a writer of
    subject u1 has run its body; a last attempt of another write about u1 (exclusive: it holds
    the space row from the start) has run its body too; the writer's commit tail bumps u1 and
    waits for the space row; then the last attempt's tail reaches for u1. Taking the space
    before u1 closed a cycle, PostgreSQL rolled the last attempt back and it answered 500. The
    last attempt takes u1 before the space, as writers do: the writer waits for it instead, and
    both writes commit, each with its own space revision."""
    admin = _world()
    space_before = Space.objects.get(pk="s1").revision
    subject_before = Subject.objects.get(subject_id="u1").revision
    writer, last = Held("writer", patience="60s"), Held("last")
    _hold(monkeypatch, writer, last)
    answers: dict = {}
    w = _post(admin.token, *_create("writer"), answers, "writer")
    assert writer.reached.wait(HANG)
    monkeypatch.setattr(mutation, "ATTEMPTS", 1)  # the next mutation's first attempt is its last
    e = _post(admin.token, *_create("last"), answers, "last")
    assert last.reached.wait(HANG)  # its body ran under the space lock
    writer.go.set()
    _until(lambda: _waits_for_a_lock(writer.pid), "the writer's tail waited for a lock")
    last.go.set()
    _join(w, e)
    assert answers["last"].status_code == 200, answers["last"].content
    assert answers["writer"].status_code == 200, answers["writer"].content
    revisions = {n: answers[n].json()["receipt"]["space_revision"] for n in ("last", "writer")}
    assert revisions == {"last": space_before + 1, "writer": space_before + 2}
    assert Space.objects.get(pk="s1").revision == space_before + 2
    assert Subject.objects.get(subject_id="u1").revision == subject_before + 2
    assert Record.objects.filter(text__in=["writer", "last"]).count() == 2


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_a_grant_and_a_write_by_its_grantee_commit_without_a_deadlock(monkeypatch, caplog):
    """A grant locks its grantee's principal row (so concurrent grants to one principal keep
    the grant bound) and then waits for the space row at its commit tail; a write by that
    principal holds the space row from its tail to its COMMIT, where PostgreSQL checks the
    receipt's foreign key to the principal (a key-share lock on its row). A grant that locked
    the row FOR UPDATE closed a cycle there (the mixed load's grants to its writers deadlocked
    dozens of times a minute, each stalling the space for the deadlock timeout); a no-key lock
    orders the grants and lets the write commit. Neither is rolled back and run again."""
    admin = _world()
    caplog.set_level(logging.INFO, logger="memory.mutation")
    granting = Held("g-1", patience="60s")
    writer = Held("w-1")
    writer.go.set()  # not held: only its pid is noted
    _hold(monkeypatch, granting, writer)
    grant = {
        "space_id": "s1",
        "grantee_principal_id": admin.principal.principal_id,
        "capabilities": ["recall"],
        "subject_ids": ["u1"],
        "idempotency_key": "g-1",
    }
    answers: dict = {}
    g = _post(admin.token, "memory.grants.grant", grant, answers, "grant")
    assert granting.reached.wait(HANG)  # the grantee's row is locked
    w = _post(admin.token, *_create("w", idempotency_key="w-1"), answers, "write")
    assert writer.reached.wait(HANG)
    # the write's tail holds the space row until its COMMIT, which needs the principal's row
    # (on the fixed order it just commits)
    _until(lambda: "write" in answers or _waits_for_a_lock(writer.pid), "the write went on")
    granting.go.set()
    _join(g, w)
    assert answers["grant"].status_code == 200, answers["grant"].content
    assert answers["write"].status_code == 200, answers["write"].content
    retried = [r for r in caplog.records if "retried" in r.getMessage()]
    assert retried == [], [r.getMessage() for r in retried]


@requires_postgres
@pytest.mark.single_node(
    reason="stages a deadlock between two backends of one server; on Citus the row locks are"
    " the workers' and the distributed deadlock detector, not PostgreSQL's, picks the victim"
)
@pytest.mark.django_db(transaction=True)
def test_a_deadlock_left_on_the_last_attempt_answers_unavailable_and_changes_nothing(
    monkeypatch,
):
    """A cycle the lock order cannot prevent (here an outside transaction holds the writer's
    principal row FOR UPDATE and waits for the space row the last attempt holds): PostgreSQL
    rolls the last attempt back at its COMMIT. It answers `503 unavailable` with
    `Retry-After`, not `500 internal_error`; no record, no receipt, no revision moved, and the
    idempotency key stays free, so the retry the answer asks for executes once."""
    admin = _world()
    space_before = Space.objects.get(pk="s1").revision
    subject_before = Subject.objects.get(subject_id="u1").revision
    last = Held("k-last")
    _hold(monkeypatch, last)
    monkeypatch.setattr(mutation, "ATTEMPTS", 1)
    answers: dict = {}
    op, body = _create("refused", idempotency_key="k-last")
    e = _post(admin.token, op, body, answers, "last")
    assert last.reached.wait(HANG)  # holds the space (and u1) rows
    dsn = connection.settings_dict
    outside = psycopg.connect(
        host=dsn["HOST"] or None,
        port=dsn["PORT"] or None,
        user=dsn["USER"],
        password=dsn["PASSWORD"] or None,
        dbname=dsn["NAME"],
        autocommit=False,
    )
    try:
        outside.execute("SET deadlock_timeout = '60s'")  # the last attempt is the one to check
        outside.execute(
            "SELECT 1 FROM memory_principal WHERE principal_id = %s FOR UPDATE",
            [admin.principal.principal_id],
        )
        outside_pid = outside.execute("SELECT pg_backend_pid()").fetchone()[0]
        waiter = threading.Thread(
            target=lambda: outside.execute(
                "SELECT 1 FROM memory_space WHERE space_id = 's1' FOR UPDATE"
            )
        )
        waiter.start()
        _until(lambda: _waits_for_a_lock(outside_pid), "the outside transaction waited")
        last.go.set()  # its COMMIT checks the receipt's key to the principal: a cycle
        _join(e)
        waiter.join(HANG)
        assert not waiter.is_alive()
    finally:
        outside.rollback()
        outside.close()
    answer = answers["last"]
    assert answer.status_code == 503, answer.content
    assert answer.json()["error"]["code"] == "unavailable"
    assert "outcome" not in answer.json()["error"].get("details", {})  # it surely did not commit
    assert int(answer["Retry-After"]) >= 1
    assert not Record.objects.filter(text="refused").exists()
    assert not Receipt.objects.filter(op="memory.records.create").exists()
    assert not IdempotencyKey.objects.filter(key="k-last").exists()
    assert Space.objects.get(pk="s1").revision == space_before
    assert Subject.objects.get(subject_id="u1").revision == subject_before
    monkeypatch.undo()  # the retry the answer asks for, with its key: it executes once
    retry = Client().post(
        f"/v1/ops/{op}",
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {admin.token}",
    )
    assert retry.status_code == 200, retry.content
    assert Record.objects.filter(text="refused").count() == 1
    assert Space.objects.get(pk="s1").revision == space_before + 1


@requires_postgres
@pytest.mark.django_db(transaction=True)  # no test transaction: no savepoints in the count
def test_a_create_with_the_embedding_extra_queues_its_vector_in_the_commit_tail(settings):
    """The write path at its floor (issue 30 item 3): on PostgreSQL a keyed records.create is
    four statements with the embedding extra on: the key look-up, coverage, the record with its
    revision row and its term rows, and the commit tail, which also queues the record for its
    vector (the backlog row is in the same statement as the receipt, so it commits with it).
    A refused create queues nothing."""
    from django.db import connection as conn
    from django.test.utils import CaptureQueriesContext

    from memory.models import PendingEmbedding
    from tests.conftest import embedding_writer

    admin = _world()
    with embedding_writer(settings, "hybrid/6"):
        call(admin.principal, *_create("warm"))  # caches, first token use
        with CaptureQueriesContext(conn) as queries:
            answer = call(admin.principal, *_create("counted", idempotency_key="k-count"))
        sent = [q["sql"] for q in queries if q["sql"].split()[0] not in ("BEGIN", "COMMIT")]
        assert len(sent) == 4, "\n".join(q[:60] for q in sent)
        assert "memory_recordterm" in sent[-2] and "memory_recordrevision" in sent[-2]
        assert "memory_pendingembedding" in sent[-1] and "memory_receipt" in sent[-1]
        record = Record.objects.get(text="counted")
        assert answer["receipt"]["refs"][0]["id"] == record.record_id
        queued = PendingEmbedding.objects.filter(record_id=record.pk)
        assert list(queued.values_list("revision", flat=True)) == [1]
        call(admin.principal, "memory.spaces.freeze", {"space_id": "s1"})
        with pytest.raises(WireError) as refused:
            call(admin.principal, *_create("frozen"))
        assert refused.value.code == "SPACE_FROZEN"
    assert not Record.objects.filter(text="frozen").exists()
    assert PendingEmbedding.objects.count() == 2  # "warm" and "counted"


@requires_postgres
@pytest.mark.django_db(transaction=True)  # no test transaction: no savepoints in the count
def test_a_delete_reads_its_record_once():
    """records.delete is exclusive: `_rows_first` locks the record (with its subject) before the
    space, and the body's access_record(lock=True) takes that row instead of reading it again.
    What it takes is what a second read would find: the subject's state as locked (a fence
    committed before the delete still refuses it)."""
    from django.db import connection as conn
    from django.test.utils import CaptureQueriesContext

    admin = _world()
    made = [
        call(admin.principal, *_create(text))["receipt"]["refs"][0]["id"]
        for text in ("first", "second")
    ]

    def delete(record_id: str) -> list[str]:
        body = {"space_id": "s1", "record_id": record_id, "expected_revision": 1}
        with CaptureQueriesContext(conn) as queries:
            call(admin.principal, "memory.records.delete", body)
        return [q["sql"] for q in queries]

    sent = delete(made[0])
    reads = [q for q in sent if q.startswith("SELECT") and 'FROM "memory_record"' in q]
    assert len(reads) == 1, "\n".join(q[:90] for q in reads)
    assert "FOR UPDATE" in reads[0]
    assert Record.objects.get(record_id=made[0]).deleted_at is not None

    fence = {"space_id": "s1", "subject_id": "u1", "action": "fence"}
    call(admin.principal, "memory.subjects.fence", fence)
    with pytest.raises(WireError) as refused:
        delete(made[1])
    assert refused.value.code == "SUBJECT_FENCED"
    assert Record.objects.get(record_id=made[1]).deleted_at is None
