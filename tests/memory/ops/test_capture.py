"""memory.capture (docs/protocol.md#ops, #authorization, #content, #cognition-validation): candidates in item order, a fixed capture scope,
advisory classification, coverage, state gates, content rules; every error writes nothing."""

import json

import pytest
from django.conf import settings
from django.test import override_settings

from memory.models import Candidate, IdempotencyKey, Subject
from memory.wire.validation import catalog, schema_errors
from tests.memory.ops.capture_world import C1, C2, SHARED, cognition_entry, state, world_fixture  # noqa: F401
from tests.memory.ops.state_gates import STATE_GATES

pytestmark = pytest.mark.django_db


def test_capture_makes_one_pending_candidate_per_item_in_item_order(world, admin, space):
    before = Subject.objects.get(subject_id="u1").revision
    answer = world.capture(
        texts=[
            "Ada prefers tea over coffee.",
            {"content": {"text": "Ada will visit Lisbon next week."}, "kind_hint": "plan"},
            "ok",
        ],
        scope_extra={"source_context_id": "chat-7"},
        extensions={"acme": {"batch": 1}},
    )
    assert answer.status == 200, answer.body
    refs = answer.receipt["refs"]
    assert [r["type"] for r in refs] == ["candidate"] * 3 and all(r["revision"] == 1 for r in refs)
    ids = [r["id"] for r in refs]
    assert all(i.startswith("cnd_") for i in ids) and ids == sorted(ids)
    first, second, third = (world.candidate(i) for i in ids)
    assert first["capture_scope"] == {"placement": C1, "source_context_id": "chat-7"}
    assert first["proposed"] == {"content": {"text": "Ada prefers tea over coffee."}}
    assert second["proposed"] == {
        "kind": "plan",
        "content": {"text": "Ada will visit Lisbon next week."},
    }
    assert first["state"] == "pending" and first["captured_by_principal_id"] == admin.id
    assert (
        first["subject_id"] == "u1"
        and first["revision"] == 1
        and first["extensions"] == {"acme": {"batch": 1}}
    )
    assert "consumed_at" not in first and "outcome" not in first
    assert first["classification"]["label"] == "preference"
    assert second["classification"]["label"] == "plan"
    assert third["classification"]["label"] == "noise"
    assert first["classification"]["policy_version"] == settings.SPOKE_MEMORY_ENGINE
    assert Subject.objects.get(subject_id="u1").revision == before + 1
    listed = world.api(
        admin, "memory.candidates.list", {"space_id": "s1", "subject_id": "u1"}
    ).body["candidates"]
    assert [c["candidate_id"] for c in listed] == ids


def test_classification_uses_the_configured_policy_version(world):
    other = "hybrid/6" if settings.SPOKE_MEMORY_ENGINE == "engine/2" else "engine/2"
    with override_settings(SPOKE_MEMORY_ENGINE=other):
        [cid] = world.candidate_ids(texts=["Ada moved to Porto last year."])
    assert Candidate.objects.get(candidate_id=cid).classification["policy_version"] == other


def test_non_empty_cognition_is_a_classification_signal(world):
    [with_cog, empty] = world.candidate_ids(
        texts=[
            {"content": {"text": "tea", "cognition": [cognition_entry()]}},
            {"content": {"text": "tea", "cognition": []}},
        ]
    )
    assert world.candidate(with_cog)["classification"]["label"] == "cognition"
    assert "cognition_present" in world.candidate(with_cog)["classification"]["signals"]
    assert "cognition_present" not in world.candidate(empty)["classification"]["signals"]


def test_empty_and_absent_cognition_round_trip_distinctly(world):
    [absent, empty] = world.candidate_ids(
        texts=[{"content": {"text": "a b"}}, {"content": {"text": "a b", "cognition": []}}]
    )
    assert "cognition" not in world.candidate(absent)["proposed"]["content"]
    assert world.candidate(empty)["proposed"]["content"]["cognition"] == []


def test_capture_receipt_carries_no_content(world):
    secret = "the-secret-captured-sentence-4711"
    answer = world.capture(texts=[secret], idempotency_key="cap-1")
    assert secret not in json.dumps(answer.receipt)
    assert set(answer.receipt) >= {"receipt_id", "op", "status", "payload_digest", "refs"}


def test_capture_replay_with_same_key_executes_once(world):
    first = world.capture(texts=["one thing"], idempotency_key="k")
    again = world.capture(texts=["one thing"], idempotency_key="k")
    assert first.receipt == again.receipt
    assert Candidate.objects.count() == 1


@pytest.mark.parametrize(
    "body_change, status, code",
    [
        ({"items": []}, 400, "invalid_input"),
        ({"items": [{"content": {"text": "x"}}] * 33}, 400, "invalid_input"),
        ({"capture_scope": {"placement": {"scope": "context"}}}, 400, "invalid_input"),
        (
            {"capture_scope": {"placement": {"scope": "shared", "context_id": "c1"}}},
            400,
            "invalid_input",
        ),
        ({"items": [{"content": {"text": "x", "extra": 1}}]}, 400, "invalid_input"),
        ({"items": [{"content": {"text": "x"}, "kind_hint": "Not A Kind"}]}, 400, "invalid_input"),
        ({"subject_id": "never-ensured"}, 404, "NOT_FOUND"),
        ({"space_id": "no-such-space"}, 404, "NOT_FOUND"),
    ],
)
def test_malformed_capture_answers_the_spec_error_and_writes_nothing(
    world, admin, body_change, status, code
):
    body = {
        "space_id": "s1",
        "subject_id": "u1",
        "capture_scope": {"placement": C1},
        "items": [{"content": {"text": "fine"}}],
        "idempotency_key": "bad-1",
        **body_change,
    }
    before = state()
    answer = world.api(admin, "memory.capture", body)
    assert (answer.status, answer.code) == (status, code), answer.body
    assert state() == before
    assert not IdempotencyKey.objects.filter(key="bad-1").exists()


def test_invalid_cognition_record_is_422_with_index_and_writes_nothing(world):
    before = state()
    answer = world.capture(
        texts=[
            {"content": {"text": "ok"}},
            {
                "content": {
                    "text": "bad",
                    "cognition": [cognition_entry(), cognition_entry(view="valid_time")],
                }
            },
        ],
        idempotency_key="cog-bad",
    )
    assert (answer.status, answer.code) == (422, "INVALID_INPUT")
    details = answer.error["details"]
    assert (
        details["reason"] == "invalid_cognition_record" and details["field"] == "content.cognition"
    )
    assert details["index"] == 1 and details["item_index"] == 1
    assert state() == before and not IdempotencyKey.objects.exists()


def test_cognition_check_comes_before_the_byte_check(world):
    big_bad = {"text": "x" * 70_000, "cognition": [{"view": "recorded_at"}]}
    answer = world.capture(texts=[{"content": big_bad}])
    assert answer.error["details"]["reason"] == "invalid_cognition_record"


def test_content_over_the_budget_is_413_with_limit_and_size(world):
    before = state()
    # the request stays under max_request_bytes; the content is over max_content_bytes
    answer = world.capture(texts=["x" * 65_600])
    assert (answer.status, answer.code) == (413, "CONTENT_TOO_LARGE")
    assert answer.error["details"]["limit"] == 65_536 and answer.error["details"]["size"] > 65_536
    assert "xxxx" not in answer.error["message"]
    assert state() == before


def test_present_empty_cognition_counts_toward_the_budget(world):
    # {"text": T} is exactly at the limit; adding "cognition": [] pushes it over.
    text = "x" * (65_536 - len('{"text":""}'))
    assert world.capture(texts=[{"content": {"text": text}}]).status == 200
    over = world.capture(texts=[{"content": {"text": text, "cognition": []}}])
    assert over.code == "CONTENT_TOO_LARGE"


@pytest.mark.parametrize(
    "grant, placement, code",
    [
        ({"capabilities": ["records_read"]}, C1, "PERMISSION_DENIED"),
        ({"capabilities": ["capture"], "subject_ids": ["u2"]}, C1, "NOT_FOUND"),
        ({"capabilities": ["capture"], "context_ids": ["c2"]}, C1, "PERMISSION_DENIED"),
        ({"capabilities": ["capture"]}, SHARED, "PERMISSION_DENIED"),
        ({"capabilities": ["capture"], "subject_ids": ["u1"], "context_ids": ["c1"]}, C1, None),
        ({"capabilities": ["capture"], "shared_access": True, "context_ids": ["c2"]}, SHARED, None),
        ({"capabilities": ["capture"], "context_ids": ["c2"]}, C2, None),
    ],
)
def test_capture_coverage(world, grant_to, grant, placement, code):
    who, _ = grant_to(**grant)
    before = state()
    answer = world.capture(who, placement=placement)
    if code is None:
        assert answer.status == 200, answer.body
        assert (
            world.candidate(answer.receipt["refs"][0]["id"])["captured_by_principal_id"] == who.id
        )
    else:
        assert answer.code == code
        if code == "PERMISSION_DENIED":
            assert answer.error["details"]["capability"] == "capture"
        assert state() == before


def test_outsider_sees_no_space(world, outsider):
    assert world.capture(outsider).code == "NOT_FOUND"


@pytest.mark.parametrize(
    "setup, code",
    STATE_GATES,
)
def test_capture_state_gates(world, admin, setup, code):
    assert world.api(admin, setup["op"], {"space_id": "s1", **setup["body"]}).status == 200
    before = state()
    answer = world.capture(idempotency_key="gated")
    assert (answer.status, answer.code) == (409, code)
    assert state() == before and not IdempotencyKey.objects.filter(key="gated").exists()


def test_fenced_context_still_takes_captures_elsewhere(world, admin):
    world.api(
        admin,
        "memory.subjects.fence",
        {"space_id": "s1", "subject_id": "u1", "action": "fence", "context_id": "c1"},
    )
    assert world.capture(placement=C2).status == 200
    assert world.capture(placement=SHARED).status == 200
    assert world.capture(placement=C1, subject="u2").status == 200  # fences are per subject


def test_gates_come_after_permission(world, admin, grant_to):
    who, _ = grant_to(capabilities=["records_read"])
    world.api(admin, "memory.spaces.freeze", {"space_id": "s1"})
    assert world.capture(who).code == "PERMISSION_DENIED"


# ---- the capture, candidate and record ops' answers against their schemas -----------------------
# The eleven capture/candidate/record ops against their published response schemas, and the
# outsider case for each: a caller without a grant in the space sees no space and changes nothing.


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
