"""Import activation loads only a whole bundle (docs/protocol.md#ops): it does not rely on verification having
seen the staged chunks, it checks them again as it reads them. A verified import whose staged
chunks no longer number the bundle's `chunk_count` (rows lost or deleted between verification
and activation), or whose objects no longer add up to the bundle's `object_counts`, fails its
activation with INVALID_INPUT — the code a bad bundle is rejected with — leaves the target space
exactly as it was, and is `rejected` (its staged data is not the verified bundle any more: stage
it again). These tests let the job's transaction really commit (transactional test database)."""

import json

import pytest

from memory.engine import transfer as policy
from memory.models import Import, ImportChunk, Record, Space
from memory.services import transfer_load as load
from memory.wire.canonical import canonical, digest
from tests.memory.ops.test_transfer import export, fresh_target, stage_all

from .conftest import make_record, subject_row
from .test_activation_checks import activate
from .test_transfer_scale import snapshot

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sess(api, admin):
    return api.connect(admin)


@pytest.fixture
def staged(api, admin, sess, space, settings, run_job_now, monkeypatch):
    """A verified import (several chunks) of s1 into s2, which already holds a record."""
    settings.SPOKE_MEMORY_LIMITS = {**settings.SPOKE_MEMORY_LIMITS, "export_chunk_bytes": 2048}
    monkeypatch.setattr(load, "BATCH", 4)
    u1, u2 = subject_row("s1", "u1"), subject_row("s1", "u2")
    for i in range(9):
        make_record(u1 if i % 2 else u2, f"green tea number {i} in the morning")
    bundle, chunks = export(api, admin, sess, run_job_now)
    assert bundle["chunk_count"] >= 3
    fresh_target(api, admin)
    old = make_record(subject_row("s2", "old"), "kept until an activation commits")
    load.derived.content_written([old])
    import_id, final = stage_all(api, admin, sess, bundle, chunks)
    assert run_job_now(final["receipt_id"]).status == "committed"
    assert Import.objects.get(pk=import_id).state == "verified"
    return import_id, old, bundle


def refused(api, admin, sess, run_job_now, import_id, before, old):
    """The activation failed as a bad bundle and changed nothing of the space."""
    receipt = activate(api, admin, sess, run_job_now, import_id)
    assert receipt.status == "failed"
    assert receipt.failure["code"] == "INVALID_INPUT", receipt.failure
    assert snapshot("s2") == before
    assert list(Record.objects.filter(space_id="s2").values_list("record_id", flat=True)) == [
        old.record_id
    ]
    space = Space.objects.get(pk="s2")
    assert space.activation_pending is False  # the space takes writes again
    imp = Import.objects.get(pk=import_id)
    assert imp.state == "rejected"
    assert imp.failure["code"] == "INVALID_INPUT"
    # Never content in a failure: the message names chunks and counts only.
    assert "green tea" not in json.dumps(imp.failure) + json.dumps(receipt.failure)
    return receipt, imp


@pytest.mark.parametrize("lost", ["last", "middle", "first", "all"])
def test_an_import_missing_staged_chunks_is_not_activated(
    api, admin, sess, staged, run_job_now, lost
):
    import_id, old, bundle = staged
    before = snapshot("s2")
    n = bundle["chunk_count"]
    ordinals = {"last": [n - 1], "middle": [n // 2], "first": [0], "all": list(range(n))}[lost]
    deleted, _ = ImportChunk.objects.filter(imp_id=import_id, ordinal__in=ordinals).delete()
    assert deleted == len(ordinals)

    _receipt, imp = refused(api, admin, sess, run_job_now, import_id, before, old)
    assert "chunks are staged" in imp.failure["message"]

    # A rejected import cannot be activated again; it can be discarded.
    again = api(admin, "memory.imports.activate", {"space_id": "s2", "import_id": import_id}, sess)
    assert again.code == "IMPORT_STATE_CONFLICT"
    assert again.error["details"]["state"] == "rejected"
    gone = api(admin, "memory.imports.discard", {"space_id": "s2", "import_id": import_id}, sess)
    assert gone.receipt["status"] == "committed"


def test_a_gap_in_the_staged_ordinals_is_found_while_streaming(
    api, admin, sess, staged, run_job_now
):
    """As many staged rows as chunk_count, but one is not of the bundle (an ordinal past it) and
    one of the bundle is missing: the count alone would pass; the ordinals do not."""
    import_id, old, bundle = staged
    before = snapshot("s2")
    n = bundle["chunk_count"]
    middle = ImportChunk.objects.get(imp_id=import_id, ordinal=n // 2)
    middle.delete()
    ImportChunk.objects.create(
        space_id="s2", imp_id=import_id, ordinal=n, objects_json="[]", digest=digest([])
    )

    _receipt, imp = refused(api, admin, sess, run_job_now, import_id, before, old)
    assert imp.failure["message"] == f"Chunk {n // 2} of {n} is not staged."


def test_objects_that_do_not_add_up_to_the_bundles_counts_are_not_activated(
    api, admin, sess, staged, run_job_now
):
    """A staged chunk that lost an object, its digests and the bundle's rewritten to match (so
    only the counts tell): the loaded objects are counted against `object_counts`."""
    import_id, old, _bundle = staged
    before = snapshot("s2")
    imp = Import.objects.get(pk=import_id)
    chunk = ImportChunk.objects.filter(imp_id=import_id).order_by("-ordinal").first()
    assert chunk is not None
    objs = json.loads(chunk.objects_json)
    assert any(o["type"] == "record" for o in objs)
    at = max(i for i, o in enumerate(objs) if o["type"] == "record")
    del objs[at]
    chunk.objects_json, chunk.digest = canonical(objs).decode("utf-8"), digest(objs)
    chunk.save(update_fields=["objects_json", "digest"])
    b = imp.bundle
    b["chunk_digests"][chunk.ordinal] = chunk.digest
    b["bundle_digest"] = policy.bundle_digest(
        b["export_id"], b["space_id"], b["format_version"], b["chunk_digests"], b["object_counts"]
    )
    Import.objects.filter(pk=import_id).update(bundle=b)

    _receipt, imp = refused(api, admin, sess, run_job_now, import_id, before, old)
    assert "object_counts" in imp.failure["message"]


def test_a_whole_import_still_activates(api, admin, sess, staged, run_job_now):
    import_id, old, bundle = staged
    receipt = activate(api, admin, sess, run_job_now, import_id)
    assert receipt.status == "committed", receipt.failure
    assert Record.objects.filter(space_id="s2").count() == bundle["object_counts"]["record"] == 9
    assert not Record.objects.filter(space_id="s2", record_id=old.record_id).exists()
    assert Import.objects.get(pk=import_id).state == "activated"
