"""A write during a pending import activation (issue 26, item 12). `memory.imports.activate`
answers `pending` and a worker later replaces the space's memory with the import: a write that
committed in between was silently replaced (after a worker restart the window is minutes). Now
the space refuses mutations from the activation's acceptance until the activation ends, as a
frozen space does (`409 SPACE_FROZEN`, `details.reason: "import_activating"`,
docs/transfer.md), and a write whose gates were passed before the activation was accepted
decides again at its commit. Imports abandoned in `staging` are discarded by a beat sweep."""

from __future__ import annotations

import importlib
import threading
from datetime import timedelta

import pytest
from django.db import connection

from memory.models import Import, ImportChunk, Receipt, Record, Space
from memory.services.operators import issue_root_grant
from memory.timeutil import now
from tests.conftest import requires_postgres
from tests.memory.ops import test_transfer as _transfer

_async = importlib.import_module("tests.memory.async.conftest")  # `async` is a keyword
start_worker = _async.start_worker  # a fixture


@pytest.fixture
def sess(api, admin):
    return api.connect(admin)


def create(api, admin, sess, space_id: str, subject_id: str, text: str):
    return api(
        admin,
        "memory.records.create",
        {
            "space_id": space_id,
            "subject_id": subject_id,
            "kind": "note",
            "content": {"text": text},
            "placement": {"scope": "shared"},
        },
        sess,
    )


def verified_import(api, admin, sess) -> str:
    """s1 holds u1's records; its export is staged and verified into s2, which holds its own
    subject `local`."""
    u1 = _async.subject_row("s1", "u1")
    for i in range(3):
        _async.make_record(u1, f"exported note {i}")
    bundle, chunks = _transfer.export(api, admin, sess, _async.run_pending)
    target = _async.new_space("s2")
    issue_root_grant(target, admin.principal)
    ensured = api(admin, "memory.subjects.ensure", {"space_id": "s2", "subject_id": "local"}, sess)
    assert ensured.status == 200, ensured.body
    import_id, final = _transfer.stage_all(api, admin, sess, bundle, chunks)
    assert _async.run_pending(final["receipt_id"]).status == "committed"
    return import_id


def activate(api, admin, sess, import_id: str) -> str:
    answer = api(admin, "memory.imports.activate", {"space_id": "s2", "import_id": import_id}, sess)
    assert (answer.status, answer.receipt["status"]) == (200, "pending"), answer.body
    return answer.receipt["receipt_id"]


def assert_refused_as_activating(answer) -> None:
    assert (answer.status, answer.code) == (409, "SPACE_FROZEN"), answer.body
    assert answer.error["details"]["reason"] == "import_activating"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_write_while_the_activation_waits_for_a_worker_is_refused_not_lost(
    api, admin, sess, start_worker
):
    import_id = verified_import(api, admin, sess)
    receipt_id = activate(api, admin, sess, import_id)  # no worker yet: a restart's window
    before = Record.objects.filter(space_id="s2").count()
    assert_refused_as_activating(create(api, admin, sess, "s2", "local", "written meanwhile"))
    assert_refused_as_activating(
        api(admin, "memory.subjects.ensure", {"space_id": "s2", "subject_id": "new"}, sess)
    )
    assert Record.objects.filter(space_id="s2").count() == before  # nothing written
    listed = api(admin, "memory.records.list", {"space_id": "s2"}, sess)
    assert listed.status == 200  # reads go on
    spaces = api(admin, "memory.spaces.list", {}, sess)
    assert spaces.status == 200
    s2 = next(s for s in spaces.body["spaces"] if s["space_id"] == "s2")
    assert s2["state"] == "active"  # not an admin's freeze: unfreeze has nothing to lift
    assert create(api, admin, sess, "s1", "u1", "another space").status == 200  # s1 unaffected

    start_worker()
    _async.wait_for(
        lambda: Receipt.objects.get(pk=receipt_id).status != "pending", what="the activation"
    )
    assert Receipt.objects.get(pk=receipt_id).status == "committed"
    after = create(api, admin, sess, "s2", "u1", "after the activation")
    assert (after.status, after.receipt["status"]) == (200, "committed"), after.body
    assert Record.objects.filter(space_id="s2", text="after the activation").exists()


def test_a_failed_activation_lets_writes_in_again(api, admin, sess):
    import_id = verified_import(api, admin, sess)
    receipt_id = activate(api, admin, sess, import_id)
    assert_refused_as_activating(create(api, admin, sess, "s2", "local", "meanwhile"))
    ImportChunk.objects.filter(imp_id=import_id).update(objects_json="[")  # the job will fail
    assert _async.run_pending(receipt_id).status == "failed"
    # A staged chunk that no longer matches its digest is a bad bundle: the import is rejected
    # (docs/transfer.md, "Only the whole bundle is loaded"); the space takes writes again.
    assert Import.objects.get(pk=import_id).state == "rejected"
    assert create(api, admin, sess, "s2", "local", "after the failure").status == 200


def test_an_admin_freeze_outlives_the_activation(api, admin, sess):
    import_id = verified_import(api, admin, sess)
    frozen = api(admin, "memory.spaces.freeze", {"space_id": "s2", "reason": "audit"}, sess)
    assert frozen.status == 200, frozen.body
    receipt_id = activate(api, admin, sess, import_id)  # imports.* are accepted when frozen
    assert _async.run_pending(receipt_id).status == "committed"
    answer = create(api, admin, sess, "s2", "u1", "still frozen")
    assert (answer.status, answer.code) == (409, "SPACE_FROZEN")
    assert "reason" not in answer.error.get("details", {})
    assert api(admin, "memory.spaces.unfreeze", {"space_id": "s2"}, sess).status == 200
    assert create(api, admin, sess, "s2", "u1", "unfrozen").status == 200


@requires_postgres  # SQLite: every write transaction is BEGIN IMMEDIATE, none interleave
@pytest.mark.django_db(transaction=True)
def test_a_write_whose_gates_passed_before_the_activation_decides_again_at_commit(
    api, admin, monkeypatch
):
    """The write has passed its gates and holds its own objects when the activation is accepted
    and commits; its commit must see the activation and refuse, not slip in before the job."""
    from memory.services import record_store

    sess = api.connect(admin)
    import_id = verified_import(api, admin, sess)
    gated, release = threading.Event(), threading.Event()
    original = record_store.create_records
    calls = []

    def paused(*args, **kwargs):
        out = original(*args, **kwargs)
        calls.append(1)
        if len(calls) == 1:
            gated.set()
            assert release.wait(60)
        return out

    monkeypatch.setattr(record_store, "create_records", paused)
    answers = []

    def write():
        try:
            answers.append(create(api, admin, sess, "s2", "local", "raced"))
        finally:
            connection.close()

    writer = threading.Thread(target=write)
    writer.start()
    assert gated.wait(60)
    activate(api, admin, sess, import_id)  # commits while the write waits to commit
    release.set()
    writer.join(60)
    assert not writer.is_alive()
    assert_refused_as_activating(answers[0])
    assert not Record.objects.filter(space_id="s2", text="raced").exists()


def test_an_import_abandoned_in_staging_is_swept(api, admin, sess, settings):
    from memory.services.transfer_jobs import sweep_imports

    u1 = _async.subject_row("s1", "u1")
    _async.make_record(u1, "a note " + "x" * 3000)
    settings.SPOKE_MEMORY_LIMITS = {**settings.SPOKE_MEMORY_LIMITS, "export_chunk_bytes": 2048}
    bundle, chunks = _transfer.export(api, admin, sess, _async.run_pending)
    assert len(chunks) > 1
    target = _async.new_space("s2")
    issue_root_grant(target, admin.principal)
    first = api(
        admin,
        "memory.imports.stage",
        {"space_id": "s2", "bundle": bundle, "chunk": chunks[0]},
        sess,
    )
    assert first.status == 200, first.body
    abandoned = first.receipt["refs"][0]["id"]
    fresh = api(
        admin,
        "memory.imports.stage",
        {"space_id": "s2", "bundle": bundle, "chunk": chunks[0]},
        sess,
    ).receipt["refs"][0]["id"]
    ttl = settings.SPOKE_MEMORY_IMPORT_STAGING_TTL_S
    Import.objects.filter(pk=abandoned).update(updated_at=now() - timedelta(seconds=ttl + 1))
    assert sweep_imports() == {"discarded": 1}
    imp = Import.objects.get(pk=abandoned)
    assert imp.state == "discarded" and imp.failure["code"] == "IMPORT_STATE_CONFLICT"
    assert not ImportChunk.objects.filter(imp_id=abandoned).exists()
    assert Import.objects.get(pk=fresh).state == "staging"  # recent: kept
    later = api(
        admin,
        "memory.imports.stage",
        {"space_id": "s2", "import_id": abandoned, "chunk": chunks[1]},
        sess,
    )
    assert later.code == "IMPORT_STATE_CONFLICT"
    assert later.error["details"]["state"] == "discarded"
    assert Space.objects.get(pk="s2").revision >= 1
