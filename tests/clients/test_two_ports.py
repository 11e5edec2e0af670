"""One suite, two ports: every scenario runs against the provider's in-process MemoryPort and
against MemoryClient over a live server, so the two cannot drift (issue 18, item 4)."""

from __future__ import annotations

import pytest

from memory.services.operators import issue_root_grant
from tests.conftest import make_space

from .conftest import Refused

pytestmark = pytest.mark.django_db(transaction=True)

SHARED = {"scope": "shared"}


def ensure(port, who, subject_id="u1", space_id="s1"):
    return port(who, "memory.subjects.ensure", space_id=space_id, subject_id=subject_id)


def create(port, who, text, **extra):
    body = {
        "space_id": "s1",
        "subject_id": "u1",
        "kind": "fact",
        "content": {"text": text},
        "placement": SHARED,
        **extra,
    }
    return port(who, "memory.records.create", **body)["receipt"]


def test_capture_review_recall(port, admin):
    ensure(port, admin)
    captured = port(
        admin,
        "memory.capture",
        space_id="s1",
        subject_id="u1",
        capture_scope={"placement": SHARED},
        items=[{"content": {"text": "prefers green tea in the morning"}}],
    )["receipt"]
    assert captured["status"] == "committed"
    candidate_id = captured["refs"][0]["id"]
    pending = port(admin, "memory.candidates.list", space_id="s1", subject_id="u1")
    assert [c["candidate_id"] for c in pending["candidates"]] == [candidate_id]
    reviewed = port(
        admin,
        "memory.candidates.review",
        space_id="s1",
        candidate_id=candidate_id,
        decision={"action": "promote", "kind": "preference"},
    )["receipt"]
    record_id = reviewed["refs"][1]["id"]
    recall = port(
        admin, "memory.recall", space_id="s1", subject_id="u1", query={"text": "green tea"}
    )
    results = recall["recall"]["results"]
    assert [r["record"]["record_id"] for r in results] == [record_id]
    assert results[0]["record"]["provenance"]["source"] == "capture"
    assert results[0]["rank"] == 1
    with pytest.raises(Refused) as again:
        port(
            admin,
            "memory.candidates.review",
            space_id="s1",
            candidate_id=candidate_id,
            decision={"action": "drop"},
        )
    assert again.value.code == "CANDIDATE_CONSUMED"


def test_cas_conflict(port, admin):
    ensure(port, admin)
    record_id = create(port, admin, "lives in Lisbon")["refs"][0]["id"]
    port(
        admin,
        "memory.records.update",
        space_id="s1",
        record_id=record_id,
        expected_revision=1,
        content={"text": "lives in Porto"},
    )
    with pytest.raises(Refused) as conflict:
        port(
            admin,
            "memory.records.update",
            space_id="s1",
            record_id=record_id,
            expected_revision=1,
            content={"text": "lives in Faro"},
        )
    assert conflict.value.code == "REVISION_CONFLICT"
    assert conflict.value.details["current_revision"] == 2
    record = port(admin, "memory.records.get", space_id="s1", record_id=record_id)["record"]
    assert (record["revision"], record["content"]) == (2, {"text": "lives in Porto"})


def test_idempotent_replay(port, admin):
    ensure(port, admin)
    first = create(port, admin, "likes jazz", idempotency_key="k-1")
    replay = create(port, admin, "likes jazz", idempotency_key="k-1")
    assert replay == first
    with pytest.raises(Refused) as reused:
        create(port, admin, "likes rock", idempotency_key="k-1")
    assert reused.value.code == "IDEMPOTENCY_KEY_REUSED"
    listed = port(admin, "memory.records.list", space_id="s1", subject_id="u1")
    assert listed["total_authorized"] == 1
    found = port(
        admin,
        "memory.receipts.get",
        space_id="s1",
        op="memory.records.create",
        idempotency_key="k-1",
    )
    assert found["receipt"]["receipt_id"] == first["receipt_id"]


def test_cursor_walk(port, admin):
    ensure(port, admin)
    made = [create(port, admin, f"note {n}")["refs"][0]["id"] for n in range(7)]
    seen, cursor, pages = [], None, 0
    while True:
        request = {"space_id": "s1", "page_size": 3, **({"cursor": cursor} if cursor else {})}
        page = port(admin, "memory.records.list", **request)
        assert page["total_authorized"] == 7
        seen += [r["record_id"] for r in page["records"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3 and sorted(seen) == sorted(made) and len(set(seen)) == 7
    if port.name == "http":  # the client's iterator follows the same cursors
        walked = [
            r["record_id"] for r in port.client(admin).records.iter(space_id="s1", page_size=3)
        ]
        assert walked == seen
    create(port, admin, "one more")  # the space's revision moves: the old cursor is stale
    with pytest.raises(Refused) as stale:
        port(
            admin,
            "memory.records.list",
            space_id="s1",
            page_size=3,
            cursor=first_cursor(port, admin),
        )
    assert stale.value.code == "CURSOR_INVALID"


def first_cursor(port, admin) -> str:
    cursor = port(admin, "memory.records.list", space_id="s1", page_size=3)["next_cursor"]
    create(port, admin, "moves the revision")
    return cursor


@pytest.mark.worker
def test_reflection_pending_then_committed_by_a_real_worker(port, admin, start_worker):
    ensure(port, admin)
    for text in ("prefers green tea", "lives in Lisbon", "plans a trip to Porto"):
        create(port, admin, text)
    start_worker()
    receipt = port(admin, "memory.reflections.generate", space_id="s1", subject_id="u1")["receipt"]
    assert receipt["status"] == "pending"
    done = port.wait(admin, receipt["receipt_id"])
    assert done["status"] == "committed", done.get("failure")
    reflection_id = done["refs"][0]["id"]
    listed = port(admin, "memory.reflections.list", space_id="s1", subject_id="u1")
    assert [r["reflection_id"] for r in listed["reflections"]] == [reflection_id]


def export_all(port, admin, space_id):
    receipt = port(admin, "memory.exports.create", space_id=space_id)["receipt"]
    assert receipt["status"] == "pending"
    done = port.wait(admin, receipt["receipt_id"])
    assert done["status"] == "committed", done.get("failure")
    export_id = done["refs"][0]["id"]
    first = port(admin, "memory.exports.get", space_id=space_id, export_id=export_id, ordinal=0)
    bundle = first["bundle"]
    chunks = [first["chunk"]] + [
        port(admin, "memory.exports.get", space_id=space_id, export_id=export_id, ordinal=n)[
            "chunk"
        ]
        for n in range(1, bundle["chunk_count"])
    ]
    return bundle, chunks


@pytest.mark.worker
def test_export_import_round_trip(port, admin, start_worker):
    ensure(port, admin)
    for n in range(4):
        create(port, admin, f"fact {n}")
    start_worker()
    bundle, chunks = export_all(port, admin, "s1")
    issue_root_grant(make_space("s2"), admin.principal)
    staged = port(admin, "memory.imports.stage", space_id="s2", bundle=bundle, chunk=chunks[0])
    import_id = staged["receipt"]["refs"][0]["id"]
    for chunk in chunks[1:]:
        staged = port(
            admin, "memory.imports.stage", space_id="s2", import_id=import_id, chunk=chunk
        )
    assert staged["receipt"]["status"] == "pending"
    assert port.wait(admin, staged["receipt"]["receipt_id"])["status"] == "committed"
    with pytest.raises(Refused) as early:  # staging is closed once the last chunk is in
        port(admin, "memory.imports.stage", space_id="s2", import_id=import_id, chunk=chunks[0])
    assert early.value.code in ("IMPORT_STATE_CONFLICT", "IMPORT_ORDER_VIOLATION")
    activated = port(admin, "memory.imports.activate", space_id="s2", import_id=import_id)
    assert port.wait(admin, activated["receipt"]["receipt_id"])["status"] == "committed"
    again, again_chunks = export_all(port, admin, "s2")
    assert again["object_counts"] == bundle["object_counts"]
    assert again["chunk_digests"] == bundle["chunk_digests"]
    assert again["object_counts"]["record"] == 4
