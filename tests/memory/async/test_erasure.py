"""Erasure reaches every copy (docs/protocol.md#content; issue 13, item 1) and exports are re-authorized and
kept for a bounded time (docs/protocol.md#ops): reflections whose basis holds a deleted record lose their
content, stored exports holding it are withdrawn, staged imports holding it are discarded, an
export job whose snapshot predates a delete does not publish, and a scan of every table of every
model finds the erased text nowhere."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
from django.apps import apps
from django.db import connection

from memory.models import Export, ExportChunk, Import, Receipt, Record, RecordEmbedding, Reflection
from memory.services import transfer_jobs
from memory.services.transfer_jobs import sweep_exports
from memory.timeutil import now
from tests.conftest import requires_postgres
from tests.memory.jobs import a_session_waits_for_a_lock
from tests.memory.ops.test_transfer import fresh_target, stage_all

from .conftest import (
    make_candidate,
    make_record,
    receipt_status,
    run_pending,
    subject_row,
    wait_for,
)

pytestmark = pytest.mark.django_db

SECRET = "SSN-123-45-678x"
WORD = "zqxquokkaword"  # one token: a lexical index or term statistics would keep it as is


@pytest.fixture
def sess(api, admin):
    return api.connect(admin)


def create(api, who, session, text: str, context_id: str | None = "c1", subject_id="u1") -> dict:
    placement = (
        {"scope": "context", "context_id": context_id} if context_id else {"scope": "shared"}
    )
    answer = api(
        who,
        "memory.records.create",
        {
            "space_id": "s1",
            "subject_id": subject_id,
            "kind": "fact",
            "content": {"text": text},
            "placement": placement,
        },
        session,
    )
    assert answer.status == 200, answer.body
    return answer.receipt["refs"][0]


def delete(api, who, session, ref: dict) -> None:
    answer = api(
        who,
        "memory.records.delete",
        {"space_id": "s1", "record_id": ref["id"], "expected_revision": ref["revision"]},
        session,
    )
    assert answer.status == 200, answer.body


def pending(api, who, session, op: str, body: dict) -> str:
    answer = api(who, op, {"space_id": "s1", **body}, session)
    assert answer.status == 200 and answer.receipt["status"] == "pending", answer.body
    return answer.receipt["receipt_id"]


def committed(receipt_id: str) -> str:
    receipt = run_pending(receipt_id)
    assert receipt.status == "committed", receipt.failure
    return receipt.refs[0]["id"]


def get_chunk(api, who, session, export_id: str, ordinal: int = 0, space_id: str = "s1"):
    return api(
        who,
        "memory.exports.get",
        {"space_id": space_id, "export_id": export_id, "ordinal": ordinal},
        session,
    )


def export_text(api, who, session, export_id: str) -> str:
    first = get_chunk(api, who, session, export_id)
    assert first.status == 200, first.body
    chunks = [first.body["chunk"]] + [
        get_chunk(api, who, session, export_id, n).body["chunk"]
        for n in range(1, first.body["bundle"]["chunk_count"])
    ]
    return json.dumps(chunks)


def ensure(api, admin, session, subject_id: str = "u1") -> None:
    answer = api(
        admin, "memory.subjects.ensure", {"space_id": "s1", "subject_id": subject_id}, session
    )
    assert answer.status == 200, answer.body


# --- the scan ----------------------------------------------------------------------------------


def _cell_text(value) -> str:
    if isinstance(value, memoryview):
        value = value.tobytes()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


def tables() -> list[str]:
    """Every table of every model of every installed app (auto-created ones included), so a
    table added later by anyone is scanned without touching this test."""
    names = {
        m._meta.db_table
        for m in apps.get_models(include_auto_created=True)
        if m._meta.managed and not m._meta.proxy
    }
    return sorted(names & set(connection.introspection.table_names()))


def rows_holding(*needles: str) -> list[tuple[str, str]]:
    """(table, column) of every cell of every row of every table that holds one of the needles
    (case-insensitive), whatever the column's type: text, JSON, binary, anything else."""
    found = []
    lowered = [n.lower() for n in needles]
    with connection.cursor() as cur:
        for table in tables():
            cur.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")  # noqa: S608
            columns = [c[0] for c in cur.description]
            for row in cur.fetchall():
                for column, value in zip(columns, row, strict=True):
                    text = _cell_text(value).lower()
                    if any(n in text for n in lowered):
                        found.append((table, column))
    return found


def test_the_scan_reads_every_table_and_every_kind_of_column(space):
    """The scan itself: it finds a needle in a text column, a JSON column and a binary column,
    and it covers every table of every model."""
    u1 = subject_row()
    record = make_record(u1, f"plain {WORD}")
    Reflection.objects.create(
        space=space,
        subject=u1,
        reflection_id="rfl_scan",
        content={"text": "x", "structured": {"deep": [WORD.upper()]}},
        basis={"record_refs": []},
        generated_at=now(),
        generated_by_principal_id="prn_test",
    )
    RecordEmbedding.objects.create(
        record=record, revision=1, model_id="m", dim=1, vector=WORD.encode()
    )
    where = set(rows_holding(WORD))
    assert {
        ("memory_record", "text"),
        ("memory_reflection", "content"),
        ("memory_recordembedding", "vector"),
    } <= where
    model_tables = {m._meta.db_table for m in apps.get_models(include_auto_created=True)}
    assert set(tables()) == model_tables & set(connection.introspection.table_names())
    assert {"memory_exportchunk", "memory_importchunk", "memory_receipt"} <= set(tables())


# --- the issue's reproduction -------------------------------------------------------------------


def test_issue_13_delete_reaches_reflections_and_exports(api, admin, sess):
    """3 records holding an SSN, a reflection, an export; delete each: the reflection is listed
    with content {"text": ""} and stale, the export answers NOT_FOUND, no row holds the SSN."""
    ensure(api, admin, sess)
    refs = [create(api, admin, sess, f"{SECRET} note {i}") for i in range(3)]
    reflection_id = committed(
        pending(api, admin, sess, "memory.reflections.generate", {"subject_id": "u1"})
    )
    export_id = committed(pending(api, admin, sess, "memory.exports.create", {}))
    assert SECRET in export_text(api, admin, sess, export_id)
    listed = api(admin, "memory.reflections.list", {"space_id": "s1", "subject_id": "u1"}, sess)
    assert SECRET in json.dumps(listed.body)

    for ref in refs:
        delete(api, admin, sess, ref)

    listed = api(admin, "memory.reflections.list", {"space_id": "s1", "subject_id": "u1"}, sess)
    [reflection] = listed.body["reflections"]
    assert reflection["reflection_id"] == reflection_id
    assert reflection["content"] == {"text": ""} and reflection["stale"] is True
    gone = get_chunk(api, admin, sess, export_id)
    assert gone.status == 404 and gone.code == "NOT_FOUND"
    assert Export.objects.get(pk=export_id).state == "withdrawn"
    assert not ExportChunk.objects.filter(export_id=export_id).exists()
    assert rows_holding(SECRET) == []


def test_erasure_is_targeted(api, admin, sess):
    """Only reflections whose basis holds the record and exports whose snapshot holds it."""
    ensure(api, admin, sess)
    ensure(api, admin, sess, "u2")
    doomed = create(api, admin, sess, f"{SECRET} doomed")
    for i in range(2):
        create(api, admin, sess, f"kept u1 {i}")
    for i in range(3):
        create(api, admin, sess, f"kept u2 {i}", subject_id="u2")
    holding = committed(
        pending(api, admin, sess, "memory.reflections.generate", {"subject_id": "u1"})
    )
    other = committed(
        pending(api, admin, sess, "memory.reflections.generate", {"subject_id": "u2"})
    )
    whole = committed(pending(api, admin, sess, "memory.exports.create", {}))
    of_u2 = committed(pending(api, admin, sess, "memory.exports.create", {"subject_ids": ["u2"]}))
    delete(api, admin, sess, doomed)
    assert Reflection.objects.get(reflection_id=holding).content == {"text": ""}
    assert "kept u2" in json.dumps(Reflection.objects.get(reflection_id=other).content)
    assert get_chunk(api, admin, sess, whole).code == "NOT_FOUND"
    assert "kept u2" in export_text(api, admin, sess, of_u2)


def test_a_refused_delete_withdraws_nothing(api, admin, sess):
    ensure(api, admin, sess)
    refs = [create(api, admin, sess, f"{SECRET} {i}") for i in range(3)]
    reflection_id = committed(
        pending(api, admin, sess, "memory.reflections.generate", {"subject_id": "u1"})
    )
    export_id = committed(pending(api, admin, sess, "memory.exports.create", {}))
    stale = api(
        admin,
        "memory.records.delete",
        {"space_id": "s1", "record_id": refs[0]["id"], "expected_revision": 9},
        sess,
    )
    assert stale.code == "REVISION_CONFLICT"
    assert SECRET in json.dumps(Reflection.objects.get(reflection_id=reflection_id).content)
    assert SECRET in export_text(api, admin, sess, export_id)


def test_a_pending_export_built_after_the_delete_reads_the_tombstone(api, admin, sess):
    ensure(api, admin, sess)
    ref = create(api, admin, sess, f"{SECRET} pending")
    receipt_id = pending(api, admin, sess, "memory.exports.create", {})
    delete(api, admin, sess, ref)
    export_id = committed(receipt_id)
    text = export_text(api, admin, sess, export_id)
    assert SECRET not in text and '"tombstone"' in text


# --- the extended scan --------------------------------------------------------------------------


def test_erasure_scan_over_every_table(api, admin, sess, settings):
    """A space with history, a reviewed candidate, reflections, exports (committed, and pending
    across the delete), imports staged (one still staging, one verified) into another space,
    embeddings: after the delete no cell of any row of any table holds the text."""
    settings.SPOKE_MEMORY_LIMITS = {**settings.SPOKE_MEMORY_LIMITS, "export_chunk_bytes": 1024}
    ensure(api, admin, sess)
    subject = subject_row()
    cognition = [
        {
            "view": "recorded_at",
            "type": "belief",
            "proposition": f"{SECRET} {WORD}",
            "attribution": {"holder": "u1", "source": "self_report"},
            "basis": {"kind": "stated"},
            "times": {"recorded_at": "2026-01-01T00:00:00Z"},
        }
    ]
    candidate = make_candidate(subject, text=f"{SECRET} {WORD} captured")
    review = api(
        admin,
        "memory.candidates.review",
        {
            "space_id": "s1",
            "candidate_id": candidate.candidate_id,
            "decision": {
                "action": "promote",
                "content_override": {
                    "text": f"{SECRET} {WORD}",
                    "structured": {"ssn": SECRET},
                    "cognition": cognition,
                },
            },
        },
        sess,
    )
    assert review.status == 200, review.body
    record_ref = review.receipt["refs"][1]
    updated = api(
        admin,
        "memory.records.update",
        {
            "space_id": "s1",
            "record_id": record_ref["id"],
            "expected_revision": 1,
            "content": {"text": f"{SECRET} {WORD} v2", "cognition": cognition},
        },
        sess,
    )
    assert updated.status == 200, updated.body
    for i in range(3):
        create(api, admin, sess, f"other note {i} " + "p" * 300)
    record = Record.objects.get(record_id=record_ref["id"])
    for revision in (1, 2):
        RecordEmbedding.objects.create(
            record=record, revision=revision, model_id="m", dim=1, vector=b"\x00\x00\x80\x3f"
        )
    committed(pending(api, admin, sess, "memory.reflections.generate", {"subject_id": "u1"}))
    committed(
        pending(
            api,
            admin,
            sess,
            "memory.reflections.generate",
            {"subject_id": "u1", "selection": {"mode": "contexts", "context_ids": ["c1"]}},
        )
    )
    export_id = committed(pending(api, admin, sess, "memory.exports.create", {}))
    first = get_chunk(api, admin, sess, export_id).body
    bundle = first["bundle"]
    chunks = [first["chunk"]] + [
        get_chunk(api, admin, sess, export_id, n).body["chunk"]
        for n in range(1, bundle["chunk_count"])
    ]
    assert len(chunks) > 2 and SECRET in json.dumps(chunks)
    fresh_target(api, admin, "s2")
    fresh_target(api, admin, "s3")
    verified_id, final = stage_all(api, admin, sess, bundle, chunks, "s2")
    assert run_pending(final["receipt_id"]).status == "committed"
    assert Import.objects.get(pk=verified_id).state == "verified"
    # Staging: only the chunks that hold the record (its first one, at least) are in.
    holding = next(n for n, c in enumerate(chunks) if record_ref["id"] in json.dumps(c))
    staging_id, _ = stage_all(api, admin, sess, bundle, chunks[: holding + 1], "s3")
    assert Import.objects.get(pk=staging_id).state == "staging"
    later_export = pending(api, admin, sess, "memory.exports.create", {})
    assert rows_holding(SECRET, WORD)  # the text is everywhere before the delete

    delete(api, admin, sess, {"id": record_ref["id"], "revision": 2})
    committed(later_export)

    assert rows_holding(SECRET, WORD) == []
    assert {i.state for i in Import.objects.filter(pk__in=[verified_id, staging_id])} == {
        "discarded"
    }
    activate = api(
        admin, "memory.imports.activate", {"space_id": "s2", "import_id": verified_id}, sess
    )
    assert activate.code == "IMPORT_STATE_CONFLICT"
    assert all(r.content == {"text": ""} for r in Reflection.objects.filter(space_id="s1"))
    assert get_chunk(api, admin, sess, export_id).code == "NOT_FOUND"
    assert not RecordEmbedding.objects.filter(record=record).exists()


# --- an export job whose snapshot predates the delete ------------------------------------------


@requires_postgres  # SQLite: every write transaction is BEGIN IMMEDIATE, none interleave
@pytest.mark.django_db(transaction=True)
def test_an_export_whose_snapshot_predates_a_delete_does_not_publish(api, admin, monkeypatch):
    """The job reads its repeatable-read snapshot (the record's text), the delete commits, then
    the job tries to publish: it must not. It runs again on a fresh snapshot, which holds the
    tombstone."""
    sess = api.connect(admin)
    ensure(api, admin, sess)
    ref = create(api, admin, sess, f"{SECRET} raced")
    for i in range(2):
        create(api, admin, sess, f"neighbour {i}")
    receipt_id = pending(api, admin, sess, "memory.exports.create", {})
    snapshot_taken, deleted = threading.Event(), threading.Event()
    original = transfer_jobs.export_objects
    seen: list[str] = []

    def paused(export, cov):
        for n, obj in enumerate(original(export, cov)):
            seen.append(json.dumps(obj))
            if n == 0 and not snapshot_taken.is_set():
                snapshot_taken.set()
                assert deleted.wait(60)
            yield obj

    monkeypatch.setattr(transfer_jobs, "export_objects", paused)
    monkeypatch.setattr("memory.tasks.run_job.delay", lambda rid, *space: None)  # run again below

    def first_run():
        try:
            from memory.tasks import _claim, execute

            execute(_claim(receipt_id))
        finally:
            connection.close()

    runner = threading.Thread(target=first_run)
    runner.start()
    assert snapshot_taken.wait(60)
    delete(api, admin, sess, ref)
    deleted.set()
    runner.join(60)
    assert not runner.is_alive()
    assert SECRET in "".join(seen)  # the first run did read the text from its snapshot
    assert receipt_status(receipt_id) == "pending"  # ... and did not publish it
    assert Export.objects.get().state == "pending" and not ExportChunk.objects.exists()
    export_id = committed(receipt_id)  # the second run: a fresh snapshot
    text = export_text(api, admin, sess, export_id)
    assert SECRET not in text and '"tombstone"' in text
    assert rows_holding(SECRET) == []


@requires_postgres  # SQLite: every write transaction is BEGIN IMMEDIATE, none interleave
@pytest.mark.django_db(transaction=True)
def test_a_reflection_synthesized_while_the_record_is_deleted_is_erased(api, admin, monkeypatch):
    """The reflection job has read the pinned revisions (the text) when the delete commits; the
    job then writes: it must store the reflection erased. (Before, the job also locked the
    subject from its start while a delete locks the space, then the subject: a delete meeting a
    running job deadlocked.)"""
    from memory.ops import reflections
    from memory.tasks import _claim, execute

    sess = api.connect(admin)
    ensure(api, admin, sess)
    refs = [create(api, admin, sess, f"{SECRET} raced {i}") for i in range(3)]
    receipt_id = pending(api, admin, sess, "memory.reflections.generate", {"subject_id": "u1"})
    read, release = threading.Event(), threading.Event()
    original = reflections.pinned_records
    seen: list[str] = []

    def paused(space_id, record_refs):
        out = original(space_id, record_refs)
        seen.append(json.dumps(out))
        read.set()
        assert release.wait(60)
        return out

    monkeypatch.setattr(reflections, "pinned_records", paused)

    def run():
        try:
            execute(_claim(receipt_id))
        finally:
            connection.close()

    job = threading.Thread(target=run)
    job.start()
    assert read.wait(60)
    delete(api, admin, sess, refs[0])  # commits while the job holds what it read
    release.set()
    job.join(60)
    assert not job.is_alive()
    assert f"{SECRET} raced 0" in "".join(seen)  # the job did read the text
    assert receipt_status(receipt_id) == "committed"
    [reflection] = Reflection.objects.all()
    assert reflection.content == {"text": ""}
    listed = api(admin, "memory.reflections.list", {"space_id": "s1", "subject_id": "u1"}, sess)
    assert listed.body["reflections"][0]["stale"] is True
    assert rows_holding(f"{SECRET} raced 0") == []


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_a_reflection_job_and_a_delete_in_flight_do_not_deadlock(api, admin, monkeypatch):
    """A delete holding the space lock while the job is about to write: the job waits for it
    (and then stores its reflection erased); neither fails."""
    from memory.services import erasure
    from memory.tasks import _claim, execute

    sess = api.connect(admin)
    ensure(api, admin, sess)
    refs = [create(api, admin, sess, f"{SECRET} flight {i}") for i in range(3)]
    receipt_id = pending(api, admin, sess, "memory.reflections.generate", {"subject_id": "u1"})
    in_delete, release_delete = threading.Event(), threading.Event()
    original_erase = erasure.erase_reflections

    def slow_erase(record):
        out = original_erase(record)
        in_delete.set()
        assert release_delete.wait(60)
        return out

    monkeypatch.setattr(erasure, "erase_reflections", slow_erase)
    answers = []

    def run_delete():
        try:
            answers.append(
                api(
                    admin,
                    "memory.records.delete",
                    {"space_id": "s1", "record_id": refs[0]["id"], "expected_revision": 1},
                    sess,
                )
            )
        finally:
            connection.close()

    def run_job():
        try:
            execute(_claim(receipt_id))
        finally:
            connection.close()

    deleting = threading.Thread(target=run_delete)
    deleting.start()
    assert in_delete.wait(60)  # the delete holds the space lock, its reflections step done
    job = threading.Thread(target=run_job)
    job.start()

    wait_for(a_session_waits_for_a_lock, what="the job to wait for the delete")
    release_delete.set()
    deleting.join(60)
    job.join(60)
    assert not deleting.is_alive() and not job.is_alive()
    assert answers and answers[0].status == 200, answers and answers[0].body
    assert receipt_status(receipt_id) == "committed"
    [reflection] = Reflection.objects.all()
    assert reflection.content == {"text": ""}
    assert rows_holding(f"{SECRET} flight 0") == []


def test_an_export_that_keeps_conflicting_fails_after_its_attempts(api, admin, sess, monkeypatch):
    """RunAgain is bounded: the third conflicting run fails the receipt and the export."""
    from memory.tasks import MAX_ATTEMPTS, RunAgain

    ensure(api, admin, sess)
    create(api, admin, sess, "anything")
    receipt_id = pending(api, admin, sess, "memory.exports.create", {})

    def conflicting(export, cov):
        raise RunAgain("conflict")
        yield  # pragma: no cover

    monkeypatch.setattr(transfer_jobs, "export_objects", conflicting)
    monkeypatch.setattr("memory.tasks.run_job.delay", lambda rid, *space: None)
    for _ in range(MAX_ATTEMPTS - 1):
        assert run_pending(receipt_id).status == "pending"
    receipt = run_pending(receipt_id)
    assert receipt.status == "failed" and receipt.failure["code"] == "internal_error"
    assert Export.objects.get().state == "failed"


# --- re-authorization ---------------------------------------------------------------------------


def test_exports_get_reauthorizes_against_the_coverage_it_was_made_with(api, admin, sess, grant_to):
    ensure(api, admin, sess)
    create(api, admin, sess, "in c1", context_id="c1")
    create(api, admin, sess, "in c2", context_id="c2")
    who, grant_id = grant_to(capabilities=["export"], context_ids=["c1", "c2"])
    session = api.connect(who)
    export_id = committed(pending(api, who, session, "memory.exports.create", {}))
    assert get_chunk(api, who, session, export_id).status == 200
    # Another principal, even a space admin, never reads it.
    assert get_chunk(api, admin, sess, export_id).code == "NOT_FOUND"
    # The same coverage split over two grants still includes it.
    _, c1 = grant_to(who, capabilities=["export"], context_ids=["c1"])
    _, c2 = grant_to(who, capabilities=["export"], context_ids=["c2"])
    revoke = api(admin, "memory.grants.revoke", {"space_id": "s1", "grant_id": grant_id}, sess)
    assert revoke.status == 200
    assert get_chunk(api, who, session, export_id).status == 200
    # Narrowed: c2 is no longer covered -> NOT_FOUND, as if it did not exist.
    api(admin, "memory.grants.revoke", {"space_id": "s1", "grant_id": c2}, sess)
    narrowed = get_chunk(api, who, session, export_id)
    assert narrowed.status == 404 and narrowed.code == "NOT_FOUND"
    # Widened again: readable again (it is still stored).
    grant_to(who, capabilities=["export"])
    assert get_chunk(api, who, session, export_id).status == 200
    # What is stored is the coverage the job built the export with.
    assert Export.objects.get(pk=export_id).coverage == [
        {"context_ids": ["c1", "c2"], "shared": False, "subject_ids": None}
    ]


def test_an_export_made_before_coverage_was_stored_is_not_readable(api, admin, sess):
    ensure(api, admin, sess)
    create(api, admin, sess, "x")
    export_id = committed(pending(api, admin, sess, "memory.exports.create", {}))
    Export.objects.filter(pk=export_id).update(coverage=None)
    assert get_chunk(api, admin, sess, export_id).code == "NOT_FOUND"


# --- retention ----------------------------------------------------------------------------------


def test_describe_publishes_the_export_retention(api, admin, settings):
    settings.SPOKE_MEMORY_LIMITS = {**settings.SPOKE_MEMORY_LIMITS, "export_retention_s": 120}
    limits = api(admin, "memory.describe", {}).body["provider"]["limits"]
    assert limits["export_retention_s"] == 120


def test_an_expired_export_is_not_found_before_the_sweep_and_withdrawn_by_it(
    api, admin, sess, settings
):
    settings.SPOKE_MEMORY_LIMITS = {**settings.SPOKE_MEMORY_LIMITS, "export_retention_s": 600}
    ensure(api, admin, sess)
    create(api, admin, sess, "kept a while")
    old = committed(pending(api, admin, sess, "memory.exports.create", {}))
    fresh = committed(pending(api, admin, sess, "memory.exports.create", {}))
    Export.objects.filter(pk=old).update(committed_at=now() - timedelta(seconds=601))
    assert get_chunk(api, admin, sess, old).code == "NOT_FOUND"
    assert Export.objects.get(pk=old).state == "ready"  # not swept yet
    assert sweep_exports() == {"withdrawn": 1}
    assert Export.objects.get(pk=old).state == "withdrawn"
    assert not ExportChunk.objects.filter(export_id=old).exists()
    assert get_chunk(api, admin, sess, fresh).status == 200
    assert sweep_exports() == {"withdrawn": 0}
    # Pending exports have no retention clock yet.
    waiting = pending(api, admin, sess, "memory.exports.create", {})
    assert sweep_exports() == {"withdrawn": 0} and receipt_status(waiting) == "pending"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_beat_withdraws_expired_exports_on_a_real_worker(api, admin, start_worker):
    sess = api.connect(admin)
    ensure(api, admin, sess)
    create(api, admin, sess, "swept")
    start_worker(
        SPOKE_MEMORY_EXPORT_SWEEP_INTERVAL_S="1",
        SPOKE_MEMORY_EXPORT_RETENTION_S="3600",
        CELERY_EXTRA="beat",
    )
    receipts = [pending(api, admin, sess, "memory.exports.create", {}) for _ in range(2)]
    for r in receipts:
        wait_for(lambda r=r: receipt_status(r) != "pending", what="the worker")
    old, fresh = (Receipt.objects.get(pk=r).refs[0]["id"] for r in receipts)
    Export.objects.filter(pk=old).update(committed_at=now() - timedelta(hours=2))
    wait_for(
        lambda: Export.objects.get(pk=old).state == "withdrawn", what="the beat's export sweep"
    )
    assert not ExportChunk.objects.filter(export_id=old).exists()
    assert Export.objects.get(pk=fresh).state == "ready"
    assert get_chunk(api, admin, sess, fresh).status == 200
    assert get_chunk(api, admin, sess, old).code == "NOT_FOUND"
