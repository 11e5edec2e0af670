"""Writers of one space run concurrently (docs/architecture.md "Why mutations serialize per
space"): the space revision still moves by exactly one per committed mutation, idempotency and
CAS stay race-free, gates re-checked at commit stay exact. The races need PostgreSQL (SQLite has
one writer); the query counts run on both."""

import json
import threading
import time

import pytest
from django.db import connection, connections
from django.test import Client
from django.test.utils import CaptureQueriesContext

from memory.models import IdempotencyKey, Receipt, Record, Space, Subject
from memory.ops.base import call
from memory.services.operators import issue_root_grant
from memory.wire.errors import WireError
from tests.conftest import make_persona, make_space, requires_postgres

C1 = {"scope": "context", "context_id": "c1"}


def _world(name="writer"):
    make_space("s1")
    admin = make_persona(name)
    issue_root_grant(Space.objects.get(pk="s1"), admin.principal)
    call(admin.principal, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
    return admin


def _create_body(text, **extra):
    return {
        "space_id": "s1",
        "subject_id": "u1",
        "kind": "fact",
        "content": {"text": text},
        "placement": C1,
        **extra,
    }


def _statements(queries) -> list[str]:
    """The statements sent, less transaction control (BEGIN/COMMIT: logged on SQLite only)."""
    return [q["sql"] for q in queries if q["sql"].split()[0] not in ("BEGIN", "COMMIT")]


def _race(token, calls):
    """POST every (op, body) at once from its own thread; answers in call order."""
    results: list = [None] * len(calls)
    barrier = threading.Barrier(len(calls))

    def worker(i, op, body):
        try:
            barrier.wait()
            response = Client().post(
                f"/v1/ops/{op}",
                data=json.dumps(body),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {token}",
            )
            results[i] = (response.status_code, response.json())
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i, *c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_creates_each_take_one_space_revision():
    admin = _world()
    before = Space.objects.get(pk="s1").revision
    subject_before = Subject.objects.get(subject_id="u1").revision
    n = 16
    results = _race(
        admin.token, [("memory.records.create", _create_body(f"note {i}")) for i in range(n)]
    )
    assert all(status == 200 for status, _ in results), results
    revisions = sorted(b["receipt"]["space_revision"] for _, b in results)
    assert revisions == list(range(before + 1, before + n + 1))  # distinct, gap-free
    assert Space.objects.get(pk="s1").revision == before + n
    assert Subject.objects.get(subject_id="u1").revision == subject_before + n
    assert Record.objects.count() == n


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_twenty_creates_with_one_key_have_one_effect():
    admin = _world()
    body = _create_body("once", idempotency_key="k-create")
    results = _race(admin.token, [("memory.records.create", body)] * 20)
    assert {status for status, _ in results} == {200}
    assert len({b["receipt"]["receipt_id"] for _, b in results}) == 1
    assert Record.objects.count() == 1
    assert Receipt.objects.filter(op="memory.records.create").count() == 1
    assert IdempotencyKey.objects.filter(key="k-create").count() == 1


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_same_key_updates_replay_instead_of_reporting_a_conflict():
    """Racers whose body fails because the winner already changed the record (CAS) answer with
    the winner's receipt: the key decides, not the order the racers reached the record."""
    admin = _world()
    created = call(admin.principal, "memory.records.create", _create_body("v1"))
    rid = created["receipt"]["refs"][0]["id"]
    body = {
        "space_id": "s1",
        "record_id": rid,
        "expected_revision": 1,
        "content": {"text": "v2"},
        "idempotency_key": "k-update",
    }
    results = _race(admin.token, [("memory.records.update", body)] * 12)
    assert {status for status, _ in results} == {200}, results
    assert len({b["receipt"]["receipt_id"] for _, b in results}) == 1
    assert Record.objects.get(record_id=rid).revision == 2


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_a_freeze_racing_writers_is_exact():
    """Every write either committed before the freeze (a lower space revision) or answered
    SPACE_FROZEN and left nothing; the revisions stay gap-free."""
    admin = _world()
    before = Space.objects.get(pk="s1").revision
    calls = [("memory.records.create", _create_body(f"n{i}")) for i in range(12)]
    calls.insert(6, ("memory.spaces.freeze", {"space_id": "s1"}))
    results = _race(admin.token, calls)
    freeze_status, freeze = results[6]
    assert freeze_status == 200
    frozen_at = freeze["receipt"]["space_revision"]
    writes = results[:6] + results[7:]
    committed = [b for s, b in writes if s == 200]
    refused = [b for s, b in writes if s != 200]
    assert all(b["error"]["code"] == "SPACE_FROZEN" for b in refused)
    assert all(b["receipt"]["space_revision"] < frozen_at for b in committed)
    assert Record.objects.count() == len(committed)
    assert Space.objects.get(pk="s1").revision == before + len(committed) + 1 == frozen_at


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_a_revocation_racing_writers_is_exact():
    """A write that relied on a grant commits before the grant's revocation, or is refused."""
    admin = _world("owner")
    writer = make_persona("app")
    issued = call(
        admin.principal,
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": writer.id,
            "capabilities": ["records_write", "records_read"],
        },
    )
    grant_id = issued["receipt"]["refs"][0]["id"]
    results: list = [None, None]

    def revoke():
        results[1] = _race(
            admin.token, [("memory.grants.revoke", {"space_id": "s1", "grant_id": grant_id})]
        )[0]

    revoker = threading.Thread(target=revoke)
    revoker.start()
    results[0] = _race(
        writer.token, [("memory.records.create", _create_body(f"w{i}")) for i in range(10)]
    )
    revoker.join()
    revoke_status, revoked = results[1]
    assert revoke_status == 200
    revoked_at = revoked["receipt"]["space_revision"]
    committed = [b for s, b in results[0] if s == 200]
    assert all(b["receipt"]["space_revision"] < revoked_at for b in committed)
    assert all(s in (200, 404) for s, _ in results[0])
    assert Record.objects.count() == len(committed)


@pytest.mark.django_db(transaction=True)  # no test transaction: no savepoints in the count
def test_records_create_takes_at_most_eight_queries():
    admin = _world()
    call(admin.principal, "memory.records.create", _create_body("warm"))  # caches, first token use
    body = _create_body("counted", idempotency_key="k-count")
    with CaptureQueriesContext(connection) as queries:
        answer = call(admin.principal, "memory.records.create", body)
    assert answer["receipt"]["status"] == "committed"
    # PostgreSQL sends the subject bump, space bump, receipt and key as one statement
    # (mutation._tail); the record's engine/2 term rows are one bulk INSERT
    # (memory/services/term_store.py)
    limit = 6 if connection.vendor == "postgresql" else 9
    assert len(_statements(queries)) <= limit, "\n".join(q[:60] for q in _statements(queries))
    with CaptureQueriesContext(connection) as queries:
        again = call(admin.principal, "memory.records.create", body)
    assert again == answer and len(_statements(queries)) == 1  # one look-up replays


@pytest.mark.django_db(transaction=True)
def test_single_item_capture_costs_what_a_create_does():
    admin = _world()
    body = {
        "space_id": "s1",
        "subject_id": "u1",
        "capture_scope": {"placement": C1},
        "items": [{"content": {"text": "one item"}}],
    }
    call(admin.principal, "memory.capture", body)
    with CaptureQueriesContext(connection) as queries:
        call(admin.principal, "memory.capture", {**body, "idempotency_key": "k-capture"})
    assert len(_statements(queries)) <= 7, "\n".join(q[:60] for q in _statements(queries))


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_racing_ensures_of_a_new_subject_without_keys_all_succeed():
    """No key to settle it: the losers hit the subject's unique constraint, run again and find
    the winner's subject (an existing subject: a committed no-op each)."""
    admin = _world()
    body = {"space_id": "s1", "subject_id": "u-new"}
    results = _race(admin.token, [("memory.subjects.ensure", body)] * 10)
    assert {status for status, _ in results} == {200}, results
    assert Subject.objects.filter(subject_id="u-new").count() == 1
    revisions = [b["receipt"]["space_revision"] for _, b in results]
    assert len(set(revisions)) == len(revisions)


@pytest.mark.django_db
def test_the_commit_tail_writes_what_the_orm_reads_back():
    """On PostgreSQL the space bump, receipt and key are one hand-written statement
    (mutation._tail): every field of the rows it writes reads back as the answer said."""
    admin = _world()
    answer = call(admin.principal, "memory.records.create", _create_body("x", idempotency_key="k1"))
    receipt = Receipt.objects.get(pk=answer["receipt"]["receipt_id"])
    assert receipt.to_wire() == answer["receipt"]
    assert receipt.principal_id == admin.principal.principal_id
    assert (receipt.failure, receipt.extensions, receipt.status) == (None, {}, "committed")
    assert receipt.completed_at == receipt.created_at
    assert receipt.space_revision == Space.objects.get(pk="s1").revision
    key = IdempotencyKey.objects.get(key="k1")
    assert (key.space_id, key.principal_id, key.op, key.receipt_id, key.created_at) == (
        "s1",
        admin.principal.principal_id,
        "memory.records.create",
        receipt.receipt_id,
        receipt.created_at,
    )
    assert key.payload_digest == receipt.payload_digest


@pytest.mark.django_db
def test_coverage_with_a_subject_builds_the_orms_subject():
    from memory.access import coverage_for
    from memory.timeutil import now

    admin = _world()
    Subject.objects.filter(subject_id="u1").update(fenced_context_ids=["c9"], kind="user")
    cov = coverage_for("s1", admin.principal, now(), share=True, subject_id="u1")
    loaded = cov.loaded_subject[1]
    orm = Subject.objects.get(subject_id="u1")
    fields = [f.attname for f in Subject._meta.concrete_fields]
    assert [getattr(loaded, f) for f in fields] == [getattr(orm, f) for f in fields]
    absent = coverage_for("s1", admin.principal, now(), subject_id="nobody")
    assert absent.loaded_subject == ("nobody", None)


HANG = 120  # seconds: not a timed assertion, only turns a hang into a failure

GATE_MOVES = {
    "subject fenced": (
        "memory.subjects.fence",
        {"space_id": "s1", "subject_id": "u1", "action": "fence"},
        "SUBJECT_FENCED",
    ),
    "context fenced": (
        "memory.subjects.fence",
        {"space_id": "s1", "subject_id": "u1", "action": "fence", "context_id": "c1"},
        "CONTEXT_FENCED",
    ),
    "space frozen": ("memory.spaces.freeze", {"space_id": "s1"}, "SPACE_FROZEN"),
}


def _backend_waits_for_a_lock(pid: int) -> bool:
    from tests.conftest import backend_waits_for_a_lock

    return backend_waits_for_a_lock(pid)


@requires_postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("in_flight", [False, True], ids=["committed", "in flight"])
@pytest.mark.parametrize("move", list(GATE_MOVES))
def test_a_gate_moved_between_a_writes_body_and_its_commit_refuses_the_write(
    monkeypatch, move, in_flight
):
    """The commit tail (on PostgreSQL one statement: subject bump, space bump, receipt, key)
    re-checks the subject's state and fences and the space's state. A fence or freeze that
    committed after the write's gates read them ("committed"), or that commits while the write's
    tail waits for its row lock ("in flight"), makes the body run again and answer the gate's
    refusal: no record, no receipt, no revision moved for the write."""
    from memory.services import mutation

    admin = _world()
    op, body, code = GATE_MOVES[move]
    real_commit = mutation._commit
    write_ready, write_go, mover_ready, mover_go = (threading.Event() for _ in range(4))
    write_pid: list[int] = []

    def paused_commit(scope, req, outcome):
        if scope.ctx.op == "memory.records.create" and not write_ready.is_set():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                write_pid.append(cursor.fetchone()[0])
            write_ready.set()  # the body has run its gates and written; the tail is next
            assert write_go.wait(HANG)
        elif scope.ctx.op == op and in_flight:
            mover_ready.set()  # the mover holds its subject or space row lock until it commits
            assert mover_go.wait(HANG)
        return real_commit(scope, req, outcome)

    monkeypatch.setattr(mutation, "_commit", paused_commit)
    answers: dict = {}

    def run(name, op_name, request):
        try:
            answers[name] = call(admin.principal, op_name, request)
        except WireError as err:
            answers[name] = err
        finally:
            connection.close()

    writer = threading.Thread(
        target=run, args=("write", "memory.records.create", _create_body("late"))
    )
    writer.start()
    assert write_ready.wait(HANG)
    before = Space.objects.get(pk="s1").revision
    mover = threading.Thread(target=run, args=("move", op, body))
    mover.start()
    if in_flight:
        assert mover_ready.wait(HANG)
        write_go.set()
        # the write's tail waits for the mover's row lock (or the writer ended: asserted below)
        waited = time.monotonic() + HANG
        while writer.is_alive() and not _backend_waits_for_a_lock(write_pid[0]):
            assert time.monotonic() < waited, "the write's tail never waited for the mover"
            time.sleep(0.01)
        mover_go.set()
        mover.join(HANG)
    else:
        mover.join(HANG)
        write_go.set()
    writer.join(HANG)
    assert not writer.is_alive() and not mover.is_alive(), "a thread hung"
    assert "receipt" in answers["move"], answers
    refused = answers["write"]
    assert isinstance(refused, WireError) and refused.code == code, refused
    assert not Record.objects.filter(text="late").exists()
    assert not Receipt.objects.filter(op="memory.records.create").exists()
    assert Space.objects.get(pk="s1").revision == before + 1  # the mover's bump alone
