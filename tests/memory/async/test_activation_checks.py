"""Import activation's foreign keys (issue 30): on PostgreSQL the bulk load skips the per-row
foreign-key triggers and checks the keys it wrote once per batch (memory.services.transfer_load,
`checked_once`). Nothing weaker than the triggers: a row naming a row that does not exist fails
the activation whole and leaves the space as it was, whichever path checked it (the set-wise
check, the triggers at COMMIT when the connection may not skip them, SQLite's own check at
COMMIT). These tests let the job's transaction really commit (transactional test database):
deferred triggers fire only at the outermost COMMIT."""

import uuid

import pytest
from django.db import connection

from memory.models import Import, Record, RecordRevision, RecordTerm, Space
from memory.services import term_store
from memory.services import transfer_load as load
from tests.conftest import requires_postgres
from tests.memory.ops.test_transfer import export, fresh_target, stage_all

from .conftest import make_record, subject_row
from .test_transfer_scale import snapshot

pytestmark = pytest.mark.django_db(transaction=True)

BOGUS = 2**62  # no row has this id


@pytest.fixture
def sess(api, admin):
    return api.connect(admin)


@pytest.fixture
def source(space, settings):
    settings.SPOKE_MEMORY_LIMITS = {**settings.SPOKE_MEMORY_LIMITS, "export_chunk_bytes": 2048}
    u1, u2 = subject_row("s1", "u1"), subject_row("s1", "u2")
    for i in range(9):
        make_record(
            u1 if i % 2 else u2, f"green tea number {i} in the morning", revisions=1 + i % 2
        )


@pytest.fixture
def staged(api, admin, sess, source, run_job_now, monkeypatch):
    """A verified import of s1 into s2, which already holds a record (with its term rows)."""
    monkeypatch.setattr(load, "BATCH", 4)
    bundle, chunks = export(api, admin, sess, run_job_now)
    fresh_target(api, admin)
    old = make_record(subject_row("s2", "old"), "kept until an activation commits")
    load.derived.content_written([old])
    import_id, final = stage_all(api, admin, sess, bundle, chunks)
    assert run_job_now(final["receipt_id"]).status == "committed"
    return import_id, old


def corrupting(monkeypatch, model, column: str, at: int = 1, value=BOGUS):
    """insert_rows, but the `at`-th call for `model` writes its first row with `column` naming a
    row that does not exist (a bug in a bulk writer): `value`, BOGUS by default."""
    real, calls = load.insert_rows, {"n": 0}

    def insert(target, names, rows):
        if target is model:
            calls["n"] += 1
            if calls["n"] == at:
                rows = list(rows)
                i = list(names).index(column)
                rows[0] = (*rows[0][:i], value, *rows[0][i + 1 :])
        return real(target, names, rows)

    monkeypatch.setattr(load, "insert_rows", insert)
    return calls


def activate(api, admin, sess, run_job_now, import_id):
    answer = api(admin, "memory.imports.activate", {"space_id": "s2", "import_id": import_id}, sess)
    return run_job_now(answer.receipt["receipt_id"])


@pytest.mark.parametrize(
    ("model", "column", "value"),
    [
        (RecordTerm, "record_id", BOGUS),
        (RecordRevision, "record_id", BOGUS),
        # a record of the batch, named in another (existing) space: the set-wise check reads a
        # composite key's space column apart from the rest of the key (the composite keys are
        # PostgreSQL's, migration 0022; SQLite's key is the record id alone)
        pytest.param(RecordRevision, "space_id", "s1", marks=requires_postgres),
        # SQLite writes records with bulk_create (no insert_rows for them).
        pytest.param(Record, "subject_id", BOGUS, marks=requires_postgres),
    ],
)
def test_a_dangling_reference_fails_the_activation_whole(
    api, admin, sess, staged, run_job_now, monkeypatch, model, column, value
):
    import_id, old = staged
    before = snapshot("s2")
    # the second batch: the first went in
    calls = corrupting(monkeypatch, model, column, at=2, value=value)

    receipt = activate(api, admin, sess, run_job_now, import_id)
    assert calls["n"] >= 2
    assert receipt.status == "failed" and receipt.failure["code"] == "internal_error"
    assert snapshot("s2") == before  # nothing of the load, nothing of the old memory lost
    assert Record.objects.filter(space_id="s2", record_id=old.record_id).exists()
    assert not RecordTerm.objects.filter(record_id=BOGUS).exists()
    assert Import.objects.get(pk=import_id).state == "verified"
    assert Space.objects.get(pk="s2").activation_pending is False  # writes go in again

    monkeypatch.undo()
    receipt = activate(api, admin, sess, run_job_now, import_id)
    assert receipt.status == "committed", receipt.failure
    assert Record.objects.filter(space_id="s2").count() == 9
    assert not Record.objects.filter(space_id="s2", record_id=old.record_id).exists()


@requires_postgres
def test_the_superuser_connection_checks_set_wise():
    assert load.may_bypass_triggers()


@pytest.fixture
def without_the_privilege():
    """The job's connection as a role that may not set session_replication_role (an ordinary
    application role): every table's rights, no superuser."""
    role = f"spoke_plain_{uuid.uuid4().hex[:10]}"
    with connection.cursor() as cur:
        cur.execute(f"CREATE ROLE {role} NOLOGIN")
        cur.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {role}")
        cur.execute(f"GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {role}")
        cur.execute(f"GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO {role}")
        cur.execute(f"SET ROLE {role}")
    try:
        yield
    finally:
        with connection.cursor() as cur:
            cur.execute("RESET ROLE")
            cur.execute(f"DROP OWNED BY {role}")
            cur.execute(f"DROP ROLE {role}")


@pytest.mark.single_node(
    reason="runs as a role made on the coordinator only; Citus reaches the workers as that role"
)
@requires_postgres
def test_without_the_privilege_the_triggers_check_every_row(
    api, admin, sess, staged, run_job_now, monkeypatch, without_the_privilege
):
    import_id, _old = staged
    assert not load.may_bypass_triggers()
    before = snapshot("s2")
    corrupting(monkeypatch, RecordTerm, "record_id", at=2)
    receipt = activate(api, admin, sess, run_job_now, import_id)
    assert receipt.status == "failed" and receipt.failure["code"] == "internal_error"
    assert snapshot("s2") == before
    assert Import.objects.get(pk=import_id).state == "verified"

    monkeypatch.undo()
    receipt = activate(api, admin, sess, run_job_now, import_id)
    assert receipt.status == "committed", receipt.failure
    assert Record.objects.filter(space_id="s2").count() == 9


def test_a_fault_inside_a_streaming_copy_leaves_the_space_and_the_session_as_they_were(
    api, admin, sess, staged, run_job_now, monkeypatch
):
    import_id, old = staged
    before = snapshot("s2")
    real, calls = term_store.term_values, {"n": 0}

    def failing(text, created_at):
        calls["n"] += 1
        if calls["n"] == 6:  # the second batch's term rows, mid-COPY (foreign-key role bypassed)
            raise RuntimeError("the worker ran out of memory")
        return real(text, created_at)

    monkeypatch.setattr(term_store, "term_values", failing)
    receipt = activate(api, admin, sess, run_job_now, import_id)
    assert calls["n"] == 6
    assert receipt.status == "failed" and receipt.failure["code"] == "internal_error"
    assert snapshot("s2") == before
    assert Import.objects.get(pk=import_id).state == "verified"
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:  # the bypass ended with the job's transaction
            cur.execute("SHOW session_replication_role")
            assert cur.fetchone()[0] == "origin"

    monkeypatch.undo()
    assert activate(api, admin, sess, run_job_now, import_id).status == "committed"
    assert not Record.objects.filter(space_id="s2", record_id=old.record_id).exists()
