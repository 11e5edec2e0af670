"""Bugs the hostile suite found in the foundation, each reproduced through the real HTTP edge and
asserting what the SPEC wants. They are strict xfails: the fix turns them into failures, and
whoever lands it drops the marker here and the matching exclusion in `known_bugs.py`."""
import json

import pytest

from tests.hostile.conftest import census

pytestmark = pytest.mark.django_db


@pytest.mark.xfail(
    strict=True,
    reason="memory/ops/grants.py parses expires_at with timeutil.parse unguarded: a calendar-invalid "
    "or out-of-range LooseTime (Feb 30, year 0, 0001-01-01T00:00+05:00) raises ValueError/OverflowError "
    "-> 500. Fix: catch both and raise invalid('time', 'expires_at', ...) (422 INVALID_INPUT).",
)
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


@pytest.mark.xfail(
    strict=True,
    reason="Integers outside the I-JSON range (|n| > 2**53-1, RFC 7493 §2.2) pass the schema (e.g. in "
    "extensions) and make rfc8785 raise IntegerDomainError in mutation.payload_digest -> 500. Fix in "
    "dispatch.views.read_body, beside the NUL check: refuse them with 400 invalid_input reason 'schema' "
    "and the member's path.",
)
def test_integer_beyond_ijson_range_is_400(api, admin):
    before = census()
    raw = json.dumps({"space_id": "s1", "subject_id": "u9", "extensions": {"x": {"n": 2**60}}})
    answer = api.raw("/v1/ops/memory.subjects.ensure", raw, token=admin.token)
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert answer.error["details"]["reason"] == "schema"
    assert census() == before


@pytest.mark.xfail(
    strict=True,
    reason="json.loads accepts NaN/Infinity/-Infinity, which are not JSON (RFC 8259); in a mutation "
    "rfc8785 then raises FloatDomainError -> 500. Fix in dispatch.views.read_body: "
    "json.loads(text, parse_constant=reject) -> 400 invalid_input malformed_json.",
)
@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_json_number_constants_are_malformed(api, admin, token):
    before = census()
    raw = '{"space_id": "s1", "subject_id": "u9", "extensions": {"x": {"n": %s}}}' % token
    answer = api.raw("/v1/ops/memory.subjects.ensure", raw, token=admin.token)
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert answer.error["details"]["reason"] == "malformed_json"
    assert census() == before


@pytest.mark.xfail(
    strict=True,
    reason="ConnectView/DisconnectView inherit DRF APIView.options, which returns a DRF Response the "
    "overridden finalize_response never renders -> 500 (AssertionError .accepted_renderer not set). "
    "Fix: WireView.http_method_names = ['post'] (or options = http_method_not_allowed).",
)
@pytest.mark.parametrize("path", ["/v1/connect", "/v1/disconnect"])
def test_options_on_wire_endpoints_is_405_envelope(api, admin, path):
    answer = api.raw(path, method="options", token=admin.token)
    assert (answer.status, answer.code) == (405, "method_not_allowed")


@pytest.mark.xfail(
    strict=True,
    reason="manifest/openapi/healthz/readyz are plain Django views: POST is refused by CSRF middleware "
    "(403 HTML) or by require_GET (405, empty body), not the JSON envelope (SPEC §1.1: every response "
    "body is a JSON object). Fix: csrf_exempt + a GET check that raises WireError('method_not_allowed').",
)
@pytest.mark.parametrize("path", ["/v1/manifest", "/v1/openapi.json", "/healthz", "/readyz"])
@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_wrong_method_on_get_endpoints_is_405_envelope(api, path, method):
    answer = api.raw(path, b"{}", method=method) if method != "delete" else api.raw(path, method=method)
    assert (answer.status, answer.code) == (405, "method_not_allowed")


@pytest.mark.xfail(
    strict=True,
    reason="A lone surrogate escape ('\\ud800') is valid JSON syntax but not a Unicode scalar value; "
    "json.loads keeps it and rfc8785 raises CanonicalizationError in mutation.payload_digest -> 500 "
    "(and UTF-8 storage would fail too). Fix in dispatch.views.read_body, beside the NUL check: refuse "
    "strings and member names holding U+D800-U+DFFF with 400 invalid_input reason 'schema'.",
)
@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "a\\udc00b"])
def test_lone_surrogate_escape_is_400(api, admin, escape):
    before = census()
    raw = '{"space_id": "s1", "subject_id": "u9", "extensions": {"x": {"s": "%s"}}}' % escape
    answer = api.raw("/v1/ops/memory.subjects.ensure", raw, token=admin.token)
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert census() == before
