"""Issue 26 item 5: nested JSON that a write accepted once broke every export of its space for
good. Every path that stores a client's JSON (record and candidate content, review overrides,
profile content, extensions maps, import chunks, session extensions) refuses a value nested
deeper than `limits.max_json_depth` at the edge (400 `invalid_input`, `reason: "schema"`, the
path where it went too deep), stores nothing, and accepts one exactly at the limit; what is
accepted exports and imports again. The transfer codec copes with any depth already stored."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from memory.models import Record
from tests.hostile.conftest import census
from tests.memory.ops.capture_world import C1, world_fixture  # noqa: F401
from tests.reviews.jobs import run_pending

pytestmark = pytest.mark.django_db


def depth() -> int:
    return settings.SPOKE_MEMORY_LIMITS["max_json_depth"]


def nest(levels: int) -> dict:
    """A JSON object nesting exactly `levels` containers (an object holding lists)."""
    value: object = 1
    for _ in range(levels - 1):
        value = [value]
    return {"n": value}


@pytest.fixture
def call(world):
    session = world.api.connect(world.admin)

    def call_(op: str, body: dict):
        return world.api(world.admin, op, body, session=session)

    return call_


def _candidate(call) -> str:
    answer = call(
        "memory.capture",
        {
            "space_id": "s1",
            "subject_id": "u1",
            "capture_scope": {"placement": C1},
            "items": [{"content": {"text": "c"}}],
        },
    )
    assert answer.status == 200, answer.body
    return answer.receipt["refs"][0]["id"]


def _requests(call, world, value: dict) -> list[tuple[str, dict]]:
    """Each path that stores client JSON, with `value` where the JSON goes."""
    record_id = world.record_id()
    content = {"text": "t", "structured": value}
    return [
        (
            "memory.records.create",
            {
                "space_id": "s1",
                "subject_id": "u1",
                "kind": "fact",
                "content": content,
                "placement": C1,
            },
        ),
        (
            "memory.records.update",
            {"space_id": "s1", "record_id": record_id, "expected_revision": 1, "content": content},
        ),
        (
            "memory.capture",
            {
                "space_id": "s1",
                "subject_id": "u1",
                "capture_scope": {"placement": C1},
                "items": [{"content": content}],
            },
        ),
        (
            "memory.candidates.review",
            {
                "space_id": "s1",
                "candidate_id": _candidate(call),
                "decision": {"action": "promote", "content_override": content},
            },
        ),
        (
            "memory.profile.update",
            {"space_id": "s1", "subject_id": "u1", "kind": "preferences", "content": content},
        ),
        (
            "memory.subjects.ensure",
            {"space_id": "s1", "subject_id": "u-deep", "extensions": {"acme": value}},
        ),
        (
            "memory.records.create",
            {
                "space_id": "s1",
                "subject_id": "u1",
                "kind": "fact",
                "content": {"text": "t"},
                "placement": C1,
                "extensions": {"acme": value},
            },
        ),
    ]


def test_describe_publishes_max_json_depth(call):
    limits = call("memory.describe", {}).body["provider"]["limits"]
    assert limits["max_json_depth"] == depth() == 32


def test_json_one_level_past_the_limit_is_refused_on_every_path_and_stores_nothing(world, call):
    # The extensions map holds the value one level down, so it is past the limit by one too.
    for op, body in _requests(call, world, nest(depth())):
        before = census()
        answer = call(op, body)
        assert (answer.status, answer.code) == (400, "invalid_input"), (op, answer.body)
        assert answer.error["details"]["reason"] == "schema"
        (error,) = answer.error["details"]["errors"]
        assert "max_json_depth" in error["message"]
        assert census() == before, op


def test_json_at_the_limit_is_stored_on_every_path(world, call):
    for op, body in _requests(call, world, nest(depth() - 1)):
        answer = call(op, body)
        assert answer.status == 200, (op, answer.body)


def _export(call) -> tuple[dict, list[dict]]:
    receipt = call("memory.exports.create", {"space_id": "s1"}).receipt
    done = run_pending(receipt["receipt_id"])
    assert done.status == "committed", done.failure
    export_id = [r for r in done.refs if r["type"] == "export"][0]["id"]
    chunks, ordinal, bundle = [], 0, {}
    while True:
        got = call(
            "memory.exports.get", {"space_id": "s1", "export_id": export_id, "ordinal": ordinal}
        )
        assert got.status == 200, got.body
        bundle = got.body["bundle"]
        chunks.append(got.body["chunk"])
        ordinal += 1
        if ordinal == bundle["chunk_count"]:
            return bundle, chunks


def test_what_is_accepted_at_the_limit_exports_and_imports_again(world, call, space):
    for op, body in _requests(call, world, nest(depth() - 1)):
        assert call(op, body).status == 200, op
    bundle, chunks = _export(call)
    import_id = None
    for ordinal, chunk in enumerate(chunks):
        body = {"space_id": "s1", "chunk": chunk}
        body.update({"bundle": bundle} if ordinal == 0 else {"import_id": import_id})
        answer = call("memory.imports.stage", body)
        assert answer.status == 200, answer.body
        import_id = import_id or answer.receipt["refs"][0]["id"]
    done = run_pending(answer.receipt["receipt_id"])
    assert done.status == "committed", done.failure


def test_an_import_chunk_past_the_limit_is_refused_not_a_500(world, call):
    world.record_id()
    bundle, chunks = _export(call)
    chunk = chunks[0]
    objects = [dict(o) for o in chunk["objects"]]
    index = next(i for i, o in enumerate(objects) if o["type"] == "record")
    data = dict(objects[index]["data"])
    data["content"] = {"text": "t", "structured": nest(400)}
    objects[index] = {**objects[index], "data": data}
    before = census()
    answer = call(
        "memory.imports.stage",
        {"space_id": "s1", "bundle": bundle, "chunk": {**chunk, "objects": objects}},
    )
    assert (answer.status, answer.code) == (400, "invalid_input"), answer.body
    assert census() == before


def test_an_export_of_json_stored_before_the_limit_still_succeeds(world, call):
    """Rows written before the bound (400 nested lists) export; the codec is iterative."""
    record_id = world.record_id()
    Record.objects.filter(record_id=record_id).update(
        content={"text": "old", "structured": nest(400)}
    )
    bundle, chunks = _export(call)
    records = [o["data"] for c in chunks for o in c["objects"] if o["type"] == "record"]
    (record,) = [r for r in records if r["record_id"] == record_id]
    assert record["content"]["structured"] == json.loads(json.dumps(nest(400)))


def test_a_sessions_extensions_are_bounded_too(world):
    value = {"acme": nest(depth())}
    before = census()
    answer = world.api.raw(
        "/v1/connect",
        json.dumps({"capabilities": ["spoke-memory"], "extensions": value}),
        token=world.admin.token,
    )
    assert (answer.status, answer.code) == (400, "invalid_input"), answer.body
    assert census() == before
    answer = world.api.raw(
        "/v1/connect",
        json.dumps({"capabilities": ["spoke-memory"], "extensions": {"acme": nest(depth() - 1)}}),
        token=world.admin.token,
    )
    assert answer.status == 200, answer.body
