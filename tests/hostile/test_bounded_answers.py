"""Issue 13, items 2 and 4, through the HTTP edge: extensions maps bounded by
limits.max_extensions_bytes (docs/protocol.md#identifiers); a list page bounded by SPOKE_MEMORY_PAGE_BYTES as well
as by page_size (docs/decisions/index.md); subjects.ensure that never tells an uncovered caller whether
a subject exists (docs/protocol.md#authorization); a signed cursor of the wrong shape (docs/protocol.md#cursors); an empty
context_ids (docs/protocol.md#selection); page_size bounds (docs/protocol.md#cursors)."""

from __future__ import annotations

import json

import pytest
from django.core import signing

from memory.models import Candidate, Grant, Record, Subject
from memory.selectors.cursors import SALT
from memory.wire.canonical import canonical
from tests.hostile.conftest import census
from tests.memory.ops.capture_world import C1, world_fixture  # noqa: F401
from tests.reviews.jobs import run_pending

pytestmark = pytest.mark.django_db

LIMIT = 4096


def extensions_of(size: int) -> dict:
    """An extensions map whose RFC 8785 encoding is exactly `size` bytes."""
    ext = {"acme": {"blob": ""}}
    ext["acme"]["blob"] = "x" * (size - len(canonical(ext)))
    assert len(canonical(ext)) == size
    return ext


@pytest.fixture
def call(world):
    session = world.api.connect(world.admin)

    def call_(op: str, body: dict, who=None):
        if who is not None:  # another caller: no session (the default flags)
            return world.api(who, op, body)
        return world.api(world.admin, op, body, session=session)

    return call_


# --- item 2: extensions ----------------------------------------------------------------------
def test_describe_publishes_max_extensions_bytes(call):
    limits = call("memory.describe", {}).body["provider"]["limits"]
    assert limits["max_extensions_bytes"] == LIMIT


def _extension_requests(ext: dict, grantee: str) -> list[tuple[str, dict, str]]:
    base = {"space_id": "s1", "extensions": ext}
    return [
        ("memory.subjects.ensure", {**base, "subject_id": "u9"}, "extensions"),
        (
            "memory.records.create",
            {**base, "subject_id": "u1", "kind": "fact", "content": {"text": "t"}, "placement": C1},
            "extensions",
        ),
        (
            "memory.capture",
            {
                **base,
                "subject_id": "u1",
                "capture_scope": {"placement": C1},
                "items": [{"content": {"text": "t"}}] * 32,
            },
            "extensions",
        ),
        (
            "memory.grants.grant",
            {**base, "grantee_principal_id": grantee, "capabilities": ["recall"]},
            "extensions",
        ),
    ]


def test_an_extensions_map_over_the_limit_is_refused_and_stores_nothing(
    world, call, persona_factory
):
    grantee = persona_factory("g").id
    before = census()
    for op, body, field in _extension_requests(extensions_of(LIMIT + 1), grantee):
        answer = call(op, body)
        assert answer.status == 422, (op, answer.body)
        assert answer.code == "INVALID_INPUT"
        assert answer.error["details"] == {
            "reason": "extensions_too_large",
            "field": field,
            "limit": LIMIT,
            "size": LIMIT + 1,
        }
        assert "xxxx" not in json.dumps(answer.body)  # the map is never echoed
    assert census() == before
    for op, body, _ in _extension_requests(extensions_of(LIMIT), grantee):
        assert call(op, body).status == 200, op


def test_an_import_bundles_and_objects_extensions_are_bounded_too(world, call):
    world.record_id()
    receipt = call("memory.exports.create", {"space_id": "s1"}).receipt
    run_pending(receipt["receipt_id"])
    done = call("memory.receipts.get", {"receipt_id": receipt["receipt_id"]}).body["receipt"]
    export_id = done["refs"][-1]["id"]
    got = call("memory.exports.get", {"space_id": "s1", "export_id": export_id, "ordinal": 0})
    bundle, chunk = got.body["bundle"], got.body["chunk"]
    big = extensions_of(LIMIT + 1)
    index = next(i for i, o in enumerate(chunk["objects"]) if o["type"] == "record")
    objects = [dict(o) for o in chunk["objects"]]
    objects[index] = {**objects[index], "data": {**objects[index]["data"], "extensions": big}}
    for body, field in [
        ({"bundle": {**bundle, "extensions": big}, "chunk": chunk}, "bundle.extensions"),
        (
            {"bundle": bundle, "chunk": {**chunk, "objects": objects}},
            f"chunk.objects.{index}.data.extensions",
        ),
    ]:
        answer = call("memory.imports.stage", {"space_id": "s1", **body})
        assert (answer.status, answer.code) == (422, "INVALID_INPUT"), answer.body
        assert answer.error["details"]["reason"] == "extensions_too_large"
        assert answer.error["details"]["field"] == field


def test_a_captures_extensions_are_stored_once_per_candidate_within_bounds(world, call):
    ext = extensions_of(LIMIT)
    body = {
        "space_id": "s1",
        "subject_id": "u1",
        "capture_scope": {"placement": C1},
        "items": [{"content": {"text": f"item {i}"}} for i in range(32)],
        "extensions": ext,
    }
    assert call("memory.capture", body).status == 200
    stored = list(Candidate.objects.values_list("extensions", flat=True))
    assert len(stored) == 32 and all(e == ext for e in stored)
    assert sum(len(canonical(e)) for e in stored) <= 32 * LIMIT


# --- item 2: what one page may weigh ---------------------------------------------------------
def _pages(call, op: str, body: dict, key: str) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        answer = call(op, {**body, "page_size": 50, **({"cursor": cursor} if cursor else {})})
        assert answer.status == 200, answer.body
        weight = sum(len(json.dumps(i, ensure_ascii=False).encode()) for i in answer.body[key])
        pages.append((answer.body[key], weight))
        cursor = answer.body["next_cursor"]
        if cursor is None:
            return pages


def _check_paged(pages, expected_ids: list[str], id_key: str, ceiling: int) -> None:
    seen = [item[id_key] for items, _ in pages for item in items]
    assert seen == expected_ids  # every item exactly once, in order
    assert len(pages) > 1
    for items, weight in pages:
        assert len(items) == 1 or weight <= ceiling


def test_every_list_op_ends_a_page_early_at_the_byte_ceiling(world, call, settings):
    settings.SPOKE_MEMORY_PAGE_BYTES = 6000
    big = "y" * 2500
    records = [world.record_id(text=f"{big} {i}") for i in range(5)]
    page = _pages(call, "memory.records.list", {"space_id": "s1"}, "records")
    _check_paged(page, records[::-1], "record_id", 6000)
    assert all(len(items) <= 2 for items, _ in page)

    candidates = world.candidate_ids(texts=[f"{big} {i}" for i in range(5)])
    page = _pages(call, "memory.candidates.list", {"space_id": "s1"}, "candidates")
    _check_paged(page, candidates, "candidate_id", 6000)

    grants = []
    for _ in range(4):  # grants with fat extensions
        body = {
            "space_id": "s1",
            "grantee_principal_id": world.admin.id,
            "capabilities": ["recall"],
            "extensions": extensions_of(LIMIT),
        }
        grants.append(call("memory.grants.grant", body).receipt["refs"][0]["id"])
    root = Grant.objects.get(parent__isnull=True).grant_id
    page = _pages(call, "memory.grants.list", {"space_id": "s1", "view": "admin"}, "grants")
    _check_paged(page, [root, *grants], "grant_id", 6000)

    settings.SPOKE_MEMORY_PAGE_BYTES = 1  # every page holds exactly its first item
    reflections = []
    for key in ("r1", "r2", "r3"):
        body = {"space_id": "s1", "subject_id": "u1", "idempotency_key": key}
        receipt = call("memory.reflections.generate", body).receipt
        run_pending(receipt["receipt_id"])
        reflections.append(call("memory.receipts.get", {"receipt_id": receipt["receipt_id"]}))
    ids = [r.body["receipt"]["refs"][-1]["id"] for r in reflections]
    body = {"space_id": "s1", "subject_id": "u1"}
    page = _pages(call, "memory.reflections.list", body, "reflections")
    assert [[i["reflection_id"] for i in items] for items, _ in page] == [[i] for i in ids[::-1]]


# --- item 4: ensure, cursors, selections, page sizes ------------------------------------------
def test_ensure_without_subjects_write_is_permission_denied_whether_or_not_it_exists(
    world, call, grant_to
):
    who, _ = grant_to(capabilities=["subjects_write", "records_read"], subject_ids=["mine"])
    Subject.objects.get(subject_id="u1")  # exists; "ghost" does not
    answers = [
        call("memory.subjects.ensure", {"space_id": "s1", "subject_id": s}, who)
        for s in ("u1", "ghost")
    ]
    assert [(a.status, a.code) for a in answers] == [(403, "PERMISSION_DENIED")] * 2
    assert answers[0].error == answers[1].error
    assert not Subject.objects.filter(subject_id="ghost").exists()
    ok = call("memory.subjects.ensure", {"space_id": "s1", "subject_id": "mine"}, who)
    assert ok.status == 200


SHAPES = [
    None,
    "x",
    [],
    ["2026-01-01T00:00:00.000Z"],
    [1, 2],
    ["not a time", "rec_A"],
    ["9999-12-31T23:59:59-01:00", "rec_A"],
    ["2026-01-01T00:00:00.000Z", "rec_\x00"],
    ["2026-01-01T00:00:00.000Z", "rec_A", "extra"],
    {"at": "2026-01-01T00:00:00.000Z"},
]


def _reforged(cursor: str, position) -> str:
    data = signing.loads(cursor, salt=SALT)
    return signing.dumps({**data, "k": position}, salt=SALT)


@pytest.mark.parametrize("position", SHAPES)
def test_a_signed_cursor_of_the_wrong_shape_is_cursor_invalid(world, call, position):
    for i in range(3):
        world.record_id(text=f"r{i}")
    world.candidate_ids(texts=["a", "b", "c"])
    for op, body in [
        ("memory.records.list", {"space_id": "s1"}),
        ("memory.candidates.list", {"space_id": "s1"}),
        ("memory.grants.list", {"space_id": "s1", "view": "own"}),
    ]:
        first = call(op, {**body, "page_size": 1})
        if first.body["next_cursor"] is None:  # grants: one root grant only
            continue
        forged = _reforged(first.body["next_cursor"], position)
        answer = call(op, {**body, "page_size": 1, "cursor": forged})
        assert (answer.status, answer.code) == (409, "CURSOR_INVALID"), (op, answer.body)


def test_a_signed_reflections_cursor_of_the_wrong_shape_is_cursor_invalid(world, call):
    for i in range(3):
        world.record_id(text=f"r{i}")
    body = {"space_id": "s1", "subject_id": "u1"}
    for key in ("a", "b"):
        receipt = call("memory.reflections.generate", {**body, "idempotency_key": key}).receipt
        run_pending(receipt["receipt_id"])
    first = call("memory.reflections.list", {**body, "page_size": 1})
    assert first.body["next_cursor"] is not None
    for position in SHAPES:
        forged = _reforged(first.body["next_cursor"], position)
        answer = call("memory.reflections.list", {**body, "page_size": 1, "cursor": forged})
        assert (answer.status, answer.code) == (409, "CURSOR_INVALID"), position


@pytest.mark.parametrize("mode", ["contexts", "contexts_and_shared"])
def test_an_empty_context_ids_is_a_bad_selection_on_every_op_that_takes_one(world, call, mode):
    world.record_id()
    selection = {"mode": mode, "context_ids": []}
    read = {"space_id": "s1", "subject_id": "u1", "selection": selection}
    for op, body in [
        ("memory.records.list", {"space_id": "s1", "selection": selection}),
        ("memory.records.list", read),
        ("memory.recall", {**read, "query": {"text": "Ada"}}),
        ("memory.reflections.state", read),
        ("memory.reflections.generate", read),
    ]:
        answer = call(op, body)
        assert (answer.status, answer.code) == (422, "INVALID_INPUT"), (op, answer.body)
        assert answer.error["details"] == {"reason": "selection", "field": "selection.context_ids"}


@pytest.mark.parametrize("size", [0, -1, 201, 1.5, "10", True])
def test_page_size_outside_one_to_max_page_size_is_a_schema_error(world, call, size):
    for op, body in [
        ("memory.records.list", {"space_id": "s1"}),
        ("memory.candidates.list", {"space_id": "s1"}),
        ("memory.grants.list", {"space_id": "s1", "view": "own"}),
        ("memory.reflections.list", {"space_id": "s1", "subject_id": "u1"}),
    ]:
        answer = call(op, {**body, "page_size": size})
        assert (answer.status, answer.code) == (400, "invalid_input"), (op, size)
        assert answer.error["details"]["reason"] == "schema"
        ok = call(op, {**body, "page_size": 200})
        assert ok.status == 200


def test_records_list_is_newest_first_by_created_at_then_record_id(world, call):
    made = [world.record_id(text=f"r{i}") for i in range(4)]
    at = Record.objects.get(record_id=made[0]).created_at
    Record.objects.filter(record_id__in=made).update(created_at=at)  # one instant: ids decide
    listed = call("memory.records.list", {"space_id": "s1"}).body["records"]
    assert [r["record_id"] for r in listed] == sorted(made, reverse=True)
