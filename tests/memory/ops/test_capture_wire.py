"""The eleven capture/candidate/record ops against their published response schemas, and the
outsider case for each: a caller without a grant in the space sees no space and changes nothing."""

import pytest

from memory.wire.validation import catalog, schema_errors
from tests.memory.ops.capture_world import C1, SHARED, cognition_entry, state, world_fixture  # noqa: F401

pytestmark = pytest.mark.django_db


def conforms(op: str, answer) -> dict:
    assert answer.status == 200, answer.body
    assert schema_errors(catalog().ops[op].response_validator, answer.body) == []
    return answer.body


def test_every_answer_matches_its_response_schema(world, api, admin):
    session = api.connect(admin)
    [cid, other] = world.candidate_ids(
        texts=[
            {
                "content": {"text": "Ada likes tea", "cognition": [cognition_entry()]},
                "kind_hint": "preference",
            },
            "Ada moved",
        ],
        scope_extra={"source_context_id": "chat"},
    )
    conforms(
        "memory.candidates.get",
        api(admin, "memory.candidates.get", {"space_id": "s1", "candidate_id": cid}),
    )
    conforms(
        "memory.candidates.list",
        api(admin, "memory.candidates.list", {"space_id": "s1", "page_size": 1}),
    )
    rid = conforms("memory.candidates.review", world.review(None, cid, {"action": "promote"}))[
        "receipt"
    ]["refs"][1]["id"]
    conforms(
        "memory.candidates.dismiss",
        api(
            admin,
            "memory.candidates.dismiss",
            {"space_id": "s1", "candidate_id": other, "reason": "r"},
        ),
    )
    consumed = conforms(
        "memory.candidates.get",
        api(admin, "memory.candidates.get", {"space_id": "s1", "candidate_id": cid}),
    )
    assert consumed["candidate"]["outcome"]["record_ids"] == [rid]
    conforms("memory.records.create", world.create(placement=SHARED))
    conforms(
        "memory.records.update",
        api(
            admin,
            "memory.records.update",
            {"space_id": "s1", "record_id": rid, "expected_revision": 1, "kind": "fact"},
        ),
    )
    conforms(
        "memory.records.promote",
        api(
            admin,
            "memory.records.promote",
            {"space_id": "s1", "record_id": rid, "expected_revision": 2, "placement": SHARED},
        ),
    )
    conforms(
        "memory.records.get", api(admin, "memory.records.get", {"space_id": "s1", "record_id": rid})
    )
    conforms(
        "memory.records.delete",
        api(
            admin,
            "memory.records.delete",
            {"space_id": "s1", "record_id": rid, "expected_revision": 3, "reason": "x"},
        ),
    )
    conforms(
        "memory.records.get", api(admin, "memory.records.get", {"space_id": "s1", "record_id": rid})
    )
    listed = conforms(
        "memory.records.list",
        api(
            admin,
            "memory.records.list",
            {
                "space_id": "s1",
                "include_tombstoned": True,
                "page_size": 1,
                "cognition_filter": {
                    "require": [{"dimension": "basis.kind", "op": "eq", "value": "stated"}]
                },
            },
            session=session,
        ),
    )
    assert listed["total_authorized"] == 0  # the tombstone's content has no cognition left
    conforms(
        "memory.records.list",
        api(admin, "memory.records.list", {"space_id": "s1", "include_tombstoned": True}),
    )


@pytest.mark.parametrize(
    "op, body",
    [
        (
            "memory.capture",
            {
                "subject_id": "u1",
                "capture_scope": {"placement": C1},
                "items": [{"content": {"text": "x"}}],
            },
        ),
        ("memory.candidates.list", {}),
        ("memory.candidates.get", {"candidate_id": "CID"}),
        ("memory.candidates.dismiss", {"candidate_id": "CID"}),
        ("memory.candidates.review", {"candidate_id": "CID", "decision": {"action": "drop"}}),
        (
            "memory.records.create",
            {"subject_id": "u1", "kind": "fact", "content": {"text": "x"}, "placement": C1},
        ),
        ("memory.records.get", {"record_id": "RID"}),
        ("memory.records.update", {"record_id": "RID", "expected_revision": 1, "kind": "plan"}),
        ("memory.records.delete", {"record_id": "RID", "expected_revision": 1}),
        ("memory.records.list", {}),
        (
            "memory.records.promote",
            {"record_id": "RID", "expected_revision": 1, "placement": SHARED},
        ),
    ],
)
def test_outsider_sees_no_space_and_writes_nothing(world, api, outsider, op, body):
    [cid] = world.candidate_ids()
    rid = world.record_id()
    body = {
        k: {"CID": cid, "RID": rid}.get(v, v) if isinstance(v, str) else v for k, v in body.items()
    }
    before = state()
    answer = api(outsider, op, {"space_id": "s1", **body})
    assert (answer.status, answer.code, answer.error["details"]) == (
        404,
        "NOT_FOUND",
        {"resource": "space"},
    )
    assert state() == before


@pytest.mark.parametrize(
    "op, body",
    [
        ("memory.candidates.get", {"candidate_id": "cnd_01ABSENT"}),
        ("memory.candidates.dismiss", {"candidate_id": "cnd_01ABSENT"}),
        (
            "memory.candidates.review",
            {"candidate_id": "cnd_01ABSENT", "decision": {"action": "drop"}},
        ),
        ("memory.records.get", {"record_id": "rec_01ABSENT"}),
        (
            "memory.records.update",
            {"record_id": "rec_01ABSENT", "expected_revision": 1, "kind": "plan"},
        ),
        ("memory.records.delete", {"record_id": "rec_01ABSENT", "expected_revision": 1}),
        (
            "memory.records.promote",
            {"record_id": "rec_01ABSENT", "expected_revision": 1, "placement": SHARED},
        ),
    ],
)
def test_absent_objects_are_not_found(world, api, admin, op, body):
    before = state()
    answer = api(admin, op, {"space_id": "s1", **body})
    resource = "candidate" if "candidate_id" in body else "record"
    assert (answer.status, answer.code, answer.error["details"]) == (
        404,
        "NOT_FOUND",
        {"resource": resource},
    )
    assert state() == before
