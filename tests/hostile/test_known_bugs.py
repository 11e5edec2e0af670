"""Regressions for the bugs the hostile suite (schemathesis) found at the edge, each reproduced
through the real HTTP edge and asserting what the SPEC wants: NaN/Infinity, integers past
I-JSON's range, lone surrogates, calendar-invalid times, and wrong methods on every endpoint."""
import json

import pytest

from tests.hostile.conftest import census

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("when", ["2030-02-30T00:00:00Z", "0000-01-01T00:00:00Z", "0001-01-01T00:00:00+05:00"])
def test_calendar_invalid_expires_at_is_422(api, admin, persona_factory, when):
    grantee = persona_factory("grantee")
    before = census()
    answer = api(admin, "memory.grants.grant", {
        "space_id": "s1", "grantee_principal_id": grantee.id, "capabilities": ["recall"], "expires_at": when,
    })
    assert (answer.status, answer.code) == (422, "INVALID_INPUT")
    assert answer.error["details"]["field"] == "expires_at"
    assert census() == before


def test_integer_beyond_ijson_range_is_400(api, admin):
    before = census()
    raw = json.dumps({"space_id": "s1", "subject_id": "u9", "extensions": {"x": {"n": 2**60}}})
    answer = api.raw("/v1/ops/memory.subjects.ensure", raw, token=admin.token)
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert answer.error["details"]["reason"] == "schema"
    assert census() == before


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
    answer = api.raw(path, b"{}", method=method) if method != "delete" else api.raw(path, method=method)
    assert (answer.status, answer.code) == (405, "method_not_allowed")


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "a\\udc00b"])
def test_lone_surrogate_escape_is_400(api, admin, escape):
    before = census()
    raw = '{"space_id": "s1", "subject_id": "u9", "extensions": {"x": {"s": "%s"}}}' % escape
    answer = api.raw("/v1/ops/memory.subjects.ensure", raw, token=admin.token)
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert census() == before
