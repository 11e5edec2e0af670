"""The dispatch gates of docs/protocol.md#dispatch, one test per gate, and their order."""

import json

import pytest
from django.test import override_settings

from memory.models import IdempotencyKey, Receipt, Subject

pytestmark = pytest.mark.django_db


def test_unknown_op_is_404_before_authentication(api):
    answer = api(None, "memory.nope", {})
    assert (answer.status, answer.code) == (404, "unknown_op")


def test_get_is_405_before_authentication(api):
    answer = api.raw("/v1/ops/memory.describe", method="get")
    assert (answer.status, answer.code) == (405, "method_not_allowed")


@pytest.mark.parametrize("header", [None, "Bearer", "Bearer smk_unknown", "Basic abc"])
def test_missing_or_unknown_token_is_401(api, header):
    response = api.client.post(
        "/v1/ops/memory.describe",
        data="{}",
        content_type="application/json",
        **({"HTTP_AUTHORIZATION": header} if header else {}),
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"
    assert response.headers["WWW-Authenticate"] == "Bearer"  # RFC 6750 §3, as /mcp/ answers


def test_405_names_the_allowed_method(api):
    response = api.client.get("/v1/ops/memory.describe")
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"


def test_any_accept_header_gets_the_json_envelope(api, admin):
    """Content negotiation is not a gate of docs/protocol.md#dispatch: an `Accept` the wire cannot honour still
    gets the answer, in JSON (DRF's default negotiation would answer 406)."""
    for accept in ("image/png", "text/html", "application/xml;q=1"):
        response = api.client.post(
            "/v1/ops/memory.describe",
            data="{}",
            content_type="application/json",
            HTTP_ACCEPT=accept,
            HTTP_AUTHORIZATION=f"Bearer {admin.token}",
        )
        assert response.status_code == 200, accept
        assert response.headers["Content-Type"] == "application/json"
        assert "provider_id" in json.dumps(response.json())


def test_revoked_token_is_401(api, admin):
    from memory.models import ApiToken

    ApiToken.objects.filter(principal=admin.principal).update(revoked_at="2020-01-01T00:00:00Z")
    assert api(admin, "memory.describe", {}).code == "unauthenticated"


def test_unknown_session_is_401_session_invalid(api, admin):
    answer = api(admin, "memory.describe", {}, session="ses_nope")
    assert (answer.status, answer.code) == (401, "session_invalid")


def test_session_of_another_principal_is_invalid(api, admin, outsider):
    session = api.connect(outsider)
    assert api(admin, "memory.describe", {}, session=session).code == "session_invalid"


def test_closed_session_is_invalid(api, admin):
    session = api.connect(admin)
    closed = api.raw("/v1/disconnect", b"{}", token=admin.token, session=session)
    assert closed.status == 200 and closed.body == {"closed": True, "session_id": session}
    assert api(admin, "memory.describe", {}, session=session).code == "session_invalid"


def test_expired_session_is_invalid(api, admin):
    from memory.models import WireSession

    session = api.connect(admin)
    WireSession.objects.filter(pk=session).update(expires_at="2020-01-01T00:00:00Z")
    assert api(admin, "memory.describe", {}, session=session).code == "session_invalid"


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b"\xff\xfe{}", b"", b'"text"'])
def test_malformed_body_is_400_malformed_json(api, admin, raw):
    answer = api.raw("/v1/ops/memory.describe", raw, token=admin.token)
    assert answer.status == 400
    assert answer.error["details"]["reason"] == "malformed_json"


def test_deeply_nested_json_is_refused_not_a_crash(api, admin):
    raw = ("[" * 100_000 + "]" * 100_000).encode()
    answer = api.raw("/v1/ops/memory.describe", raw, token=admin.token)
    assert answer.status in (400, 413)


def test_oversized_body_is_413(api, admin, settings):
    limit = settings.SPOKE_MEMORY_LIMITS["max_request_bytes"]
    raw = json.dumps({"space_id": "s1", "pad": "x" * (limit + 10)}).encode()
    answer = api.raw("/v1/ops/memory.spaces.freeze", raw, token=admin.token)
    assert (answer.status, answer.code) == (413, "payload_too_large")


def test_sub_flag_op_without_negotiation_is_capability_missing(api, admin):
    answer = api(admin, "memory.exports.create", {"space_id": "s1"})
    assert (answer.status, answer.code) == (403, "capability_missing")
    assert answer.error["details"] == {
        "required": "spoke-memory-transfer",
        "negotiated": ["spoke-memory"],
    }


def test_host_serving_only_core_answers_sub_flag_ops_capability_missing(api, admin):
    with override_settings(SPOKE_MEMORY_SERVED_CAPABILITIES=["spoke-memory"]):
        session = api.connect(admin)
        negotiated = api(admin, "memory.describe", {}, session=session)
        assert negotiated.body["provider"]["served_capabilities"] == ["spoke-memory"]
        answer = api(
            admin,
            "memory.reflections.state",
            {"space_id": "s1", "subject_id": "u"},
            session=session,
        )
    assert answer.code == "capability_missing"
    assert answer.error["details"]["negotiated"] == ["spoke-memory"]


def test_cognition_filter_needs_spoke_cognition(api, admin):
    session = api.connect(admin, ["spoke-memory"])
    body = {
        "space_id": "s1",
        "cognition_filter": {"require": [{"dimension": "type", "op": "eq", "value": "goal"}]},
    }
    answer = api(admin, "memory.records.list", body, session=session)
    assert answer.code == "capability_missing"
    assert answer.error["details"]["required"] == "spoke-cognition"


def test_unknown_member_is_schema_error(api, admin):
    answer = api(admin, "memory.spaces.freeze", {"space_id": "s1", "surprise": 1})
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert answer.error["details"]["reason"] == "schema"
    assert answer.error["details"]["errors"][0]["path"] == "/"


def test_schema_errors_do_not_echo_values(api, admin):
    secret = "my-very-private-memory-text"
    answer = api(
        admin, "memory.subjects.ensure", {"space_id": "s1", "subject_id": secret + " with spaces"}
    )
    assert answer.code == "invalid_input"
    assert secret not in json.dumps(answer.body)


def test_unsupported_cognition_requirement_names_its_index(api, admin):
    session = api.connect(admin)
    body = {
        "space_id": "s1",
        "cognition_filter": {
            "require": [
                {"dimension": "type", "op": "eq", "value": "goal"},
                {"dimension": "mood", "op": "eq", "value": "x"},
            ]
        },
    }
    answer = api(admin, "memory.records.list", body, session=session)
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert answer.error["details"] == {
        "reason": "unsupported_cognition_requirement",
        "requirement_index": 1,
    }


def test_gate_order_schema_before_cognition_grammar(api, admin):
    session = api.connect(admin)
    body = {
        "space_id": "s1",
        "bogus": True,
        "cognition_filter": {"require": [{"dimension": "mood", "op": "eq", "value": "x"}]},
    }
    assert (
        api(admin, "memory.records.list", body, session=session).error["details"]["reason"]
        == "schema"
    )


def test_gate_order_capability_before_schema(api, admin):
    answer = api(admin, "memory.exports.create", {"bogus": True})
    assert answer.code == "capability_missing"


def test_rejected_requests_write_nothing(api, admin, space):
    before = (Receipt.objects.count(), IdempotencyKey.objects.count(), Subject.objects.count())
    api(
        admin,
        "memory.subjects.ensure",
        {"space_id": "s1", "subject_id": "bad id!", "idempotency_key": "k1"},
    )
    api.raw("/v1/ops/memory.subjects.ensure", b"{not json", token=admin.token)
    assert (
        Receipt.objects.count(),
        IdempotencyKey.objects.count(),
        Subject.objects.count(),
    ) == before


def test_manifest_needs_no_auth_and_lists_served_flags(api):
    answer = api.raw("/v1/manifest", method="get")
    assert answer.status == 200
    manifest = answer.body["manifest"]
    assert manifest["role"] == "memory-provider"
    assert manifest["capabilities"] == sorted(manifest["capabilities"])
    assert "spoke-memory" in manifest["capabilities"]


def test_health_and_readiness(api):
    assert api.raw("/healthz", method="get").body == {"status": "ok"}
    ready = api.raw("/readyz", method="get")
    assert ready.status == 200 and ready.body == {"status": "ok"}


def test_internal_error_has_request_id_and_no_trace(api, admin, monkeypatch):
    from memory.ops import base

    def boom(ctx, req):
        raise RuntimeError("secret stored content")

    monkeypatch.setitem(base.HANDLERS, "memory.describe", boom)
    answer = api(admin, "memory.describe", {})
    assert (answer.status, answer.code) == (500, "internal_error")
    assert answer.error["details"]["request_id"].startswith("req_")
    assert "secret" not in json.dumps(answer.body)


def test_rate_limit_answers_429_with_retry_after(api, admin, settings):
    settings.SPOKE_MEMORY_RATE = "3/min"
    codes = [api(admin, "memory.describe", {}).status for _ in range(4)]
    limited = api(admin, "memory.describe", {})
    assert codes[:3] == [200, 200, 200]
    assert (limited.status, limited.code) == (429, "rate_limited")
    assert int(limited.headers["Retry-After"]) >= 1


def test_nul_character_is_a_schema_error_and_writes_nothing(api, admin, space):
    raw = '{"space_id": "s1", "subject_id": "u1", "extensions": {"acme": {"note": "a\\u0000b"}}}'
    before = Subject.objects.count()
    answer = api.raw("/v1/ops/memory.subjects.ensure", raw, token=admin.token)
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert answer.error["details"]["errors"][0]["path"] == "/extensions/acme/note"
    assert Subject.objects.count() == before


def test_escaped_backslash_before_u0000_is_not_a_nul(api, admin, space):
    raw = '{"space_id": "s1", "subject_id": "u1", "extensions": {"acme": {"note": "a\\\\u0000b"}}}'
    assert api.raw("/v1/ops/memory.subjects.ensure", raw, token=admin.token).status == 200


def test_an_unauthenticated_oversized_body_is_401_not_413(api, admin, settings):
    """docs/protocol.md#dispatch's order (issue 38 finding 10): authentication before the body, both judged from
    the headers; the 413 is for an authenticated caller."""
    limit = settings.SPOKE_MEMORY_LIMITS["max_request_bytes"]
    big = "{" + " " * limit + "}"
    for token in (None, "smk_not-a-token"):
        answer = api.raw("/v1/ops/memory.describe", big, token=token)
        assert (answer.status, answer.code) == (401, "unauthenticated"), token
        assert answer.headers["WWW-Authenticate"] == "Bearer"
    answer = api.raw("/v1/ops/memory.describe", big, token=admin.token)
    assert (answer.status, answer.code) == (413, "payload_too_large")
