"""Regressions for the bugs the hostile suite (schemathesis) found at the edge, each reproduced
through the real HTTP edge and asserting what the protocol wants: NaN/Infinity, integers past
I-JSON's range, lone surrogates, calendar-invalid times, and wrong methods on every endpoint."""

import json

import pytest

from tests.hostile.conftest import census

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "when", ["2030-02-30T00:00:00Z", "0000-01-01T00:00:00Z", "0001-01-01T00:00:00+05:00"]
)
def test_calendar_invalid_expires_at_is_a_schema_error(api, admin, persona_factory, when):
    """docs/protocol.md#identifiers (issue 13): a time that denotes no instant in 0001..9999 UTC is refused at the
    edge, 400 invalid_input with reason "schema" (it was 422 before the protocol said so)."""
    grantee = persona_factory("grantee")
    before = census()
    answer = api(
        admin,
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": grantee.id,
            "capabilities": ["recall"],
            "expires_at": when,
        },
    )
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert answer.error["details"]["reason"] == "schema"
    assert [e["path"] for e in answer.error["details"]["errors"]] == ["/expires_at"]
    assert census() == before


def test_integer_beyond_ijson_range_is_400(api, admin):
    before = census()
    raw = json.dumps({"space_id": "s1", "subject_id": "u9", "extensions": {"x": {"n": 2**60}}})
    answer = api.raw("/v1/ops/memory.subjects.ensure", raw, token=admin.token)
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert answer.error["details"]["reason"] == "schema"
    assert census() == before


@pytest.mark.parametrize("number", ["1e20", "-1.7976931348623157e308", "9007199254740992.0"])
def test_number_beyond_ijson_range_in_any_spelling_is_400(api, admin, ensure_subject, number):
    """PostgreSQL's jsonb stored 1e20 as the numeric 100000000000000000000: read back, the record
    carried an integer past 2**53-1 and recall answered 500 (RFC 8785 refuses it). Found by
    tests/hostile/test_record_model.py; refused at the edge now, as the integer spelling is."""
    ensure_subject("u1")
    before = census()
    raw = (
        '{"space_id": "s1", "subject_id": "u1", "kind": "fact", "placement": {"scope": "shared"}, '
        '"content": {"text": "t", "structured": {"n": %s}}}' % number
    )
    answer = api.raw("/v1/ops/memory.records.create", raw, token=admin.token)
    assert (answer.status, answer.code) == (400, "invalid_input")
    why = {"path": "/content/structured/n", "message": "must be a number within ±(2**53-1)"}
    assert answer.error["details"] == {"reason": "schema", "errors": [why]}
    assert census() == before


def test_numbers_within_ijson_range_round_trip_and_recall(api, admin, ensure_subject):
    ensure_subject("u1")
    structured = {"edge": 9007199254740991.0, "small": 5e-324, "fraction": 0.1, "neg": -123456.75}
    body = {
        "space_id": "s1",
        "subject_id": "u1",
        "kind": "fact",
        "placement": {"scope": "shared"},
        "content": {"text": "t", "structured": structured},
    }
    made = api(admin, "memory.records.create", body)
    assert made.status == 200, made.body
    rid = made.receipt["refs"][0]["id"]
    got = api(admin, "memory.records.get", {"space_id": "s1", "record_id": rid})
    assert got.body["record"]["content"]["structured"] == structured
    query = {"space_id": "s1", "subject_id": "u1", "query": {"text": "t"}}
    recall = api(admin, "memory.recall", query)
    assert recall.status == 200, recall.body


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_json_number_constants_are_malformed(api, admin, token):
    before = census()
    raw = '{"space_id": "s1", "subject_id": "u9", "extensions": {"x": {"n": %s}}}' % token
    answer = api.raw("/v1/ops/memory.subjects.ensure", raw, token=admin.token)
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert answer.error["details"]["reason"] == "malformed_json"
    assert census() == before


@pytest.mark.parametrize("path", ["/v1/connect", "/v1/disconnect"])
def test_options_on_wire_endpoints_is_405_envelope(api, admin, path):
    answer = api.raw(path, method="options", token=admin.token)
    assert (answer.status, answer.code) == (405, "method_not_allowed")


@pytest.mark.parametrize("path", ["/v1/manifest", "/v1/openapi.json", "/healthz", "/readyz"])
@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_wrong_method_on_get_endpoints_is_405_envelope(api, path, method):
    answer = (
        api.raw(path, b"{}", method=method) if method != "delete" else api.raw(path, method=method)
    )
    assert (answer.status, answer.code) == (405, "method_not_allowed")


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "a\\udc00b"])
def test_lone_surrogate_escape_is_400(api, admin, escape):
    before = census()
    raw = '{"space_id": "s1", "subject_id": "u9", "extensions": {"x": {"s": "%s"}}}' % escape
    answer = api.raw("/v1/ops/memory.subjects.ensure", raw, token=admin.token)
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert census() == before
