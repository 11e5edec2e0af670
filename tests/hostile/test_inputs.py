"""Hostile input at the HTTP edge (docs/protocol.md#authentication-§1.5, §2.5, §2.7): each case answers a clear error
with the protocol code, and nothing is written: the row count of every table is the same before and
after (no row, no receipt, no consumed key, no session)."""

import json

import pytest

from memory.models import ApiToken, WireSession
from tests.hostile.conftest import census

pytestmark = pytest.mark.django_db

ENSURE = "/v1/ops/memory.subjects.ensure"


@pytest.fixture
def before(wired):
    return census()


def ensure_body(**extra) -> dict:
    return {"space_id": "s1", "subject_id": "u-new", "idempotency_key": "k-hostile", **extra}


def test_oversized_body_is_413_and_writes_nothing(api, wired, before, settings):
    limit = settings.SPOKE_MEMORY_LIMITS["max_request_bytes"]
    raw = json.dumps(ensure_body(extensions={"x": {"pad": "a" * limit}}))
    answer = api.raw(ENSURE, raw, token=wired.admin.token, session=wired.session)
    assert (answer.status, answer.code) == (413, "payload_too_large")
    assert answer.error["details"]["limit"] == limit
    assert census() == before


def test_lying_content_length_is_still_judged_by_the_bytes_read(api, wired, before, settings):
    limit = settings.SPOKE_MEMORY_LIMITS["max_request_bytes"]
    response = api.client.post(
        ENSURE,
        data=json.dumps(ensure_body()),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {wired.admin.token}",
        CONTENT_LENGTH=str(limit + 1),
    )
    assert response.status_code == 413
    assert census() == before


def nested(depth: int) -> str:
    return (
        '{"space_id": "s1", "subject_id": "u-new", "extensions": {"x": {"n": '
        + "[" * depth
        + "]" * depth
        + "}}}"
    )


def test_extensions_nested_to_max_json_depth_round_trip(api, wired, settings):
    # the map, its namespace's object and the lists: max_json_depth levels in all
    levels = settings.SPOKE_MEMORY_LIMITS["max_json_depth"] - 2
    answer = api.raw(ENSURE, nested(levels), token=wired.admin.token)
    assert answer.status == 200, answer.body
    got = api(wired.admin, "memory.subjects.get", {"space_id": "s1", "subject_id": "u-new"}).body[
        "subject"
    ]
    assert got["extensions"] == json.loads(nested(levels))["extensions"]


@pytest.mark.parametrize("depth", [31, 200, 900, 5_000, 200_000])
def test_extensions_nested_past_max_json_depth_are_a_schema_error(api, wired, before, depth):
    """Whatever the depth, the same reason: a body too deep for the parser to follow from the
    server's stack (5,000 levels anywhere; 900 under a deeper stack, as in a pytest-xdist worker)
    answered `malformed_json` before, one it could parse `schema` (docs/decisions/index.md, "Input
    bounds beyond the protocol's limits")."""
    answer = api.raw(ENSURE, nested(depth), token=wired.admin.token)
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert answer.error["details"]["reason"] == "schema"
    assert "max_json_depth" in answer.error["details"]["errors"][0]["message"]
    assert census() == before


@pytest.mark.parametrize(
    "raw",
    [
        b'{"space_id": "s1", "subject_id": "\xff\xfe"}',
        b"\xc3\x28",
        b"\xed\xa0\x80{}",
        b'{"space_id": "s1", "subject_id": "\xf0\x28\x8c\x28"}',
    ],
)
def test_invalid_utf8_is_malformed_json(api, wired, before, raw):
    answer = api.raw(ENSURE, raw, token=wired.admin.token)
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert answer.error["details"]["reason"] == "malformed_json"
    assert census() == before


@pytest.mark.parametrize(
    "where", ["subject_id", "extension value", "extension key", "idempotency_key"]
)
def test_nul_character_is_a_schema_error(api, wired, before, where):
    body = ensure_body()
    if where == "subject_id":
        body["subject_id"] = "u\u0000"
    elif where == "extension value":
        body["extensions"] = {"x": {"s": "a\u0000b"}}
    elif where == "extension key":
        body["extensions"] = {"x": {"k\u0000": 1}}
    else:
        body["idempotency_key"] = "k\u0000"
    answer = api(wired.admin, "memory.subjects.ensure", body)
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert answer.error["details"]["reason"] == "schema"
    assert census() == before


@pytest.mark.parametrize("size", [0, 201, 10**6, 10**30, -1, 1.5, "50"])
def test_out_of_range_page_size_is_a_schema_error(api, wired, before, size):
    answer = api(
        wired.admin, "memory.grants.list", {"space_id": "s1", "view": "admin", "page_size": size}
    )
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert answer.error["details"]["reason"] == "schema"
    assert census() == before


def _first_cursor(api, wired) -> str:
    for i in range(3):
        api(
            wired.admin,
            "memory.grants.grant",
            {"space_id": "s1", "grantee_principal_id": wired.admin.id, "capabilities": ["recall"]},
        )
    page = api(
        wired.admin, "memory.grants.list", {"space_id": "s1", "view": "admin", "page_size": 1}
    )
    assert page.status == 200 and page.body["next_cursor"]
    return page.body["next_cursor"]


def test_forged_and_tampered_cursors_are_cursor_invalid(api, wired):
    from django.core import signing

    cursor = _first_cursor(api, wired)
    before = census()
    forged = [
        cursor[:-2] + ("AA" if not cursor.endswith("AA") else "BB"),  # bad signature
        signing.dumps({"b": "x", "k": ["2020-01-01T00:00:00.000Z", "grt_0"]}, salt="wrong"),
        signing.dumps(
            {"b": "x", "k": ["2020-01-01T00:00:00.000Z", "grt_0"]},
            salt="spoke-memory.cursor.v1",
            key="not-the-server-key",
        ),
        "not-a-cursor",
    ]
    for token in forged:
        answer = api(
            wired.admin, "memory.grants.list", {"space_id": "s1", "view": "admin", "cursor": token}
        )
        assert (answer.status, answer.code) == (409, "CURSOR_INVALID"), token
    # the genuine cursor replayed under another request binding
    answer = api(
        wired.admin, "memory.grants.list", {"space_id": "s1", "view": "own", "cursor": cursor}
    )
    assert answer.code == "CURSOR_INVALID"
    assert census() == before


def test_another_principals_cursor_is_cursor_invalid(api, wired, grant_to):
    cursor = _first_cursor(api, wired)
    other, _ = grant_to(capabilities=["space_admin"], shared_access=True)
    answer = api(
        other,
        "memory.grants.list",
        {"space_id": "s1", "view": "admin", "page_size": 1, "cursor": cursor},
    )
    assert answer.code == "CURSOR_INVALID"


def test_another_principals_session_is_session_invalid(api, wired, before, outsider):
    stolen = api.connect(outsider)
    before = census()
    answer = api(wired.admin, "memory.subjects.ensure", ensure_body(), session=stolen)
    assert (answer.status, answer.code) == (401, "session_invalid")
    assert census() == before
    # the stolen id also closes nothing for the wrong principal
    answer = api.raw("/v1/disconnect", b"{}", token=wired.admin.token, session=stolen)
    assert answer.code == "session_invalid"
    assert WireSession.objects.get(pk=stolen).closed_at is None


@pytest.mark.parametrize("state", ["revoked", "unknown", "malformed"])
def test_bad_tokens_are_401_and_write_nothing(api, wired, state):
    token = wired.admin.token
    if state == "revoked":
        ApiToken.objects.filter(principal=wired.admin.principal).update(
            revoked_at="2020-01-01T00:00:00Z"
        )
    elif state == "unknown":
        token = "smk_" + "A" * 43
    else:
        token = "x" * 10_000
    before = census()
    answer = api.raw(ENSURE, json.dumps(ensure_body()), token=token)
    assert (answer.status, answer.code) == (401, "unauthenticated")
    assert census() == before


def test_expired_session_is_401_and_writes_nothing(api, wired):
    WireSession.objects.filter(pk=wired.session).update(expires_at="2020-01-01T00:00:00Z")
    before = census()
    answer = api(wired.admin, "memory.subjects.ensure", ensure_body(), session=wired.session)
    assert (answer.status, answer.code) == (401, "session_invalid")
    assert census() == before


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""],
)
def test_wrong_content_type_with_a_json_body_is_judged_by_the_body(api, wired, content_type):
    """docs/protocol.md#dispatch judges the body, not the header: a JSON object body is accepted whatever the
    Content-Type says (decision recorded in docs/reliability.md); a non-JSON one is malformed."""
    ok = api.raw(
        ENSURE, json.dumps(ensure_body()), token=wired.admin.token, content_type=content_type
    )
    assert ok.status == 200, ok.body
    before = census()
    bad = api.raw(
        ENSURE, "space_id=s1&subject_id=u2", token=wired.admin.token, content_type=content_type
    )
    assert (bad.status, bad.code) == (400, "invalid_input")
    assert bad.error["details"]["reason"] == "malformed_json"
    assert census() == before


def test_failed_request_does_not_consume_its_idempotency_key(api, wired):
    bad = api(wired.admin, "memory.subjects.ensure", ensure_body(subject_id="bad id!"))
    assert bad.code == "invalid_input"
    good = api(wired.admin, "memory.subjects.ensure", ensure_body())
    assert good.status == 200 and good.receipt["status"] == "committed"


@pytest.fixture
def throttled(settings):
    settings.SPOKE_MEMORY_RATE = "3/min"


def test_rate_limit_is_per_principal(api, admin, outsider, throttled):
    first = [api(admin, "memory.describe", {}).status for _ in range(3)]
    limited = api(admin, "memory.describe", {})
    other = api(outsider, "memory.describe", {})
    assert first == [200, 200, 200]
    assert (limited.status, limited.code) == (429, "rate_limited")
    assert int(limited.headers["Retry-After"]) >= 1
    assert other.status == 200  # one principal throttled does not throttle another


def test_rate_limited_mutation_writes_nothing(api, wired, throttled):
    for _ in range(3):
        api(wired.admin, "memory.describe", {})
    before = census()
    answer = api(wired.admin, "memory.subjects.ensure", ensure_body())
    assert answer.code == "rate_limited"
    assert census() == before


def test_unauthenticated_requests_are_not_throttled_as_anyone(api, admin, throttled):
    for _ in range(5):
        assert api(None, "memory.describe", {}).code == "unauthenticated"
    assert api(admin, "memory.describe", {}).status == 200
