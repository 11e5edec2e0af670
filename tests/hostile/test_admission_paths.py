"""One admission path (memory/admission.py): every hostile body of the hostile suite, sent through
the HTTP edge and through the in-process `call()` the console and the management command use,
gets the same answer (same code, message and details), and neither path writes anything.

Before admission was one module, the storability gate (U+0000, lone surrogates, numbers past
I-JSON's range) ran only in the HTTP view: through `call()` a NUL in content committed a record."""

from __future__ import annotations

import json

import pytest

from memory.ops.base import call
from memory.wire.errors import WireError
from tests.conftest import ALL_FLAGS
from tests.hostile.conftest import census

pytestmark = pytest.mark.django_db

CORE = ["spoke-memory"]
CREATE = {"space_id": "s1", "subject_id": "u1", "kind": "fact", "placement": {"scope": "shared"}}
RECALL = {"space_id": "s1", "subject_id": "u1", "query": {"text": "t"}}


def create(content: dict, **extra) -> dict:
    return {**CREATE, "content": content, **extra}


def nested(levels: int) -> list:
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


DEEP, DEEPER = nested(32), nested(400)  # limits.max_json_depth, and far past its envelope

# (case id, op, body, negotiated flags). The raw spellings that json.dumps cannot produce
# (1e20, a trailing .0) are covered through the value Python parses them to.
HOSTILE: list[tuple[str, str, dict, list[str]]] = [
    ("nul-in-text", "memory.records.create", create({"text": "a\x00b"}), ALL_FLAGS),
    ("nul-in-member-name", "memory.records.create", create({"text": "t", "structured": {"k\x00": 1}}), ALL_FLAGS),
    ("nul-in-query", "memory.recall", {**RECALL, "query": {"text": "\x00"}}, ALL_FLAGS),
    ("lone-surrogate", "memory.records.create", create({"text": "a\ud800b"}), ALL_FLAGS),
    ("lone-surrogate-in-key", "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u2", "extensions": {"\udfff": 1}}, ALL_FLAGS),
    ("integer-past-ijson", "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u9", "extensions": {"x": {"n": 2**60}}}, ALL_FLAGS),
    ("float-1e20", "memory.records.create", create({"text": "t", "structured": {"n": 1e20}}), ALL_FLAGS),
    ("float-max", "memory.records.create", create({"text": "t", "structured": {"n": -1.7976931348623157e308}}), ALL_FLAGS),
    ("float-2-53", "memory.records.create", create({"text": "t", "structured": {"n": 9007199254740992.0}}), ALL_FLAGS),
    ("unknown-member", "memory.records.create", create({"text": "t"}, colour="red"), ALL_FLAGS),
    ("missing-required", "memory.records.create", {"space_id": "s1", "subject_id": "u1"}, ALL_FLAGS),
    ("wrong-type", "memory.records.get", {"space_id": "s1", "record_id": 7}, ALL_FLAGS),
    ("bad-cognition-grammar", "memory.recall", {**RECALL, "cognition_filter": {"require": [{"dimension": "mood", "op": "eq", "value": "x"}]}}, ALL_FLAGS),
    ("cognition-without-flag", "memory.recall", {**RECALL, "cognition_filter": {"require": [{"dimension": "type", "op": "eq", "value": "goal"}]}}, CORE),
    ("sub-flag-op-not-negotiated", "memory.reflections.list", {"space_id": "s1", "subject_id": "u1"}, CORE),
    ("capability-before-storability-order", "memory.reflections.list", {"space_id": "s1", "subject_id": "u\x00"}, CORE),
    ("calendar-invalid-time", "memory.grants.grant", {"space_id": "s1", "grantee_principal_id": "prn_x", "capabilities": ["recall"], "expires_at": "2030-02-30T00:00:00Z"}, ALL_FLAGS),
    ("oversized-content", "memory.records.create", None, ALL_FLAGS),
    ("structured-past-max-json-depth", "memory.records.create", create({"text": "t", "structured": {"n": DEEP}}), ALL_FLAGS),
    ("body-past-the-depth-envelope", "memory.records.get", {"space_id": "s1", "record_id": "r", "x": DEEPER}, ALL_FLAGS),
    ("kinds-past-max-list-items", "memory.records.list", {"space_id": "s1", "kinds": ["fact"] * 257}, ALL_FLAGS),
]  # fmt: skip


def _body(body: dict | None, settings) -> dict:
    if body is not None:
        return body
    return create({"text": "x" * (settings.SPOKE_MEMORY_LIMITS["max_content_bytes"] + 1)})


def through_http(api, admin, op: str, body: dict, flags: list[str]) -> dict:
    session = api.connect(admin, flags)
    answer = api.raw(f"/v1/ops/{op}", json.dumps(body), token=admin.token, session=session)
    assert answer.status >= 400, f"HTTP accepted a hostile body: {answer.body}"
    return {"status": answer.status, **answer.error}


def through_call(admin, op: str, body: dict, flags: list[str]) -> dict:
    with pytest.raises(WireError) as caught:
        call(admin.principal, op, body, negotiated=tuple(flags))
    return {"status": caught.value.status, **caught.value.envelope()["error"]}


@pytest.mark.parametrize(("case", "op", "body", "flags"), HOSTILE, ids=[c[0] for c in HOSTILE])
def test_hostile_body_answers_the_same_through_both_paths(
    api, admin, ensure_subject, settings, case, op, body, flags
):
    ensure_subject("u1")
    body = _body(body, settings)
    before = census()
    via_http = through_http(api, admin, op, body, flags)
    sessions_opened = census()  # connecting wrote a session row; nothing else may change
    via_call = through_call(admin, op, body, flags)
    assert via_call == via_http
    after = census()
    assert after == sessions_opened
    changed = {label for label in before if before[label] != sessions_opened[label]}
    assert changed <= {"memory.WireSession"}


def test_nul_through_call_commits_nothing(admin, ensure_subject):
    """The bug itself: a NUL in content through the console's path is refused before the handler."""
    ensure_subject("u1")
    before = census()
    with pytest.raises(WireError) as caught:
        call(admin.principal, "memory.records.create", create({"text": "a\x00b"}))
    assert caught.value.code == "invalid_input"
    assert caught.value.details["errors"] == [
        {"path": "/content/text", "message": "must not contain the NUL character (U+0000)"}
    ]
    assert census() == before


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_numbers_are_refused_in_process(admin, ensure_subject, number):
    """JSON cannot spell NaN or Infinity (the edge refuses them as malformed); a Python caller
    can, and admission refuses them as unstorable instead of letting a handler see them."""
    ensure_subject("u1")
    before = census()
    with pytest.raises(WireError) as caught:
        call(
            admin.principal,
            "memory.records.create",
            create({"text": "t", "structured": {"n": number}}),
        )
    assert caught.value.details["errors"] == [
        {"path": "/content/structured/n", "message": "must be a finite number"}
    ]
    assert census() == before
