"""Issue 26, its aim (another tenant's p95 within 2x of quiet): four clients sending invalid
~1 MB bodies kept two cores busy parsing them, and another tenant's p95 went from 5 to 113 ms,
although each body was refused. A principal now has a byte budget,
`limits.max_request_bytes_per_min`: each request's declared body length is counted before the
body is read, a body refused as invalid (400 invalid_input, 413) counts
16 times its size (memory/limits.py REFUSED_BODY_WEIGHT), and once the minute's count is over the budget
every request of that principal that does not fit in what is left of it is `429 rate_limited`
with Retry-After, unparsed and changing nothing (memory/limits.py: a sliding minute, per
principal and per space). Other principals are not affected. The load is measured in
bench/tenant_isolation.py (docs/reliability.md); the keep-alive connection after such a 429 in
test_body_limits.py (gunicorn as deployed)."""

from __future__ import annotations

import json

import pytest

from memory.mcp.server import run_tool
from memory.mcp.tools import Caller
from tests.conftest import make_persona
from tests.hostile.conftest import census, shared_fact

pytestmark = pytest.mark.django_db

BUDGET = 200_000
WEIGHT = 16


@pytest.fixture
def small_budget(settings):
    settings.SPOKE_MEMORY_LIMITS = {
        **settings.SPOKE_MEMORY_LIMITS,
        "max_request_bytes_per_min": BUDGET,
    }


@pytest.fixture
def writer(api, admin, grant_to, ensure_subject):
    ensure_subject("u1")
    persona, _ = grant_to(
        capabilities=["records_write", "records_read", "capture", "recall"], shared_access=True
    )
    return persona


def size(body: dict) -> int:
    return len(json.dumps(body).encode())


def test_describe_publishes_the_byte_budget(api, admin):
    limits = api(admin, "memory.describe", {}).body["provider"]["limits"]
    assert limits["max_request_bytes_per_min"] == 64 * 1024 * 1024


def test_past_the_budget_a_write_is_429_with_retry_after_and_changes_nothing(
    api, writer, small_budget
):
    text = "Ada prefers tea. " * 3_500  # ~60 KB, under max_content_bytes
    sent = 0
    while sent + size(shared_fact(text)) <= BUDGET:
        answer = api(writer, "memory.records.create", shared_fact(text))
        assert answer.status == 200, answer.body
        sent += size(shared_fact(text))
    before = census()
    refused = api(writer, "memory.records.create", shared_fact(text, key="k1"))
    assert (refused.status, refused.code) == (429, "rate_limited"), refused.body
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert "max_request_bytes_per_min" in refused.error["message"]
    assert census() == before
    # a body that does not fit in what is left of the minute is refused before it is parsed
    malformed = b"{not json" + b" " * size(shared_fact(text))
    refused = api.raw("/v1/ops/memory.records.list", malformed, token=writer.token)
    assert (refused.status, refused.code) == (429, "rate_limited")
    assert census() == before


def test_under_the_budget_requests_are_unaffected(api, writer, small_budget):
    made = api(writer, "memory.records.create", shared_fact("Ada prefers tea."))
    assert made.status == 200, made.body
    record_id = made.receipt["refs"][0]["id"]
    for _ in range(100):  # ~100 bytes each: 10,000 in all
        got = api(writer, "memory.records.get", {"space_id": "s1", "record_id": record_id})
        assert got.status == 200, got.body


def test_a_refused_body_costs_the_budget_several_times_its_size(api, writer, small_budget):
    # Valid, this size would pass WEIGHT - 3 times; refused as invalid, it costs WEIGHT times
    # its size, which is over the budget at once.
    body = {**shared_fact("Ada prefers tea."), "pad": "x" * (BUDGET // (WEIGHT - 2))}
    refused = api(writer, "memory.records.create", body)
    assert (refused.status, refused.code) == (400, "invalid_input"), refused.body
    assert size(body) * WEIGHT > BUDGET > size(body) * (WEIGHT - 3)
    before = census()
    valid = api(writer, "memory.records.create", shared_fact("Ada prefers tea."))
    assert (valid.status, valid.code) == (429, "rate_limited"), valid.body
    assert census() == before


def test_budgets_are_per_principal(api, admin, writer, grant_to, small_budget):
    other, _ = grant_to(capabilities=["records_write", "records_read"], shared_access=True)
    junk = {"space_id": "s1", "kinds": ["fact"] * 5 + [1], "pad": "x" * 20_000}
    assert api(writer, "memory.records.list", junk).code == "invalid_input"
    assert api(writer, "memory.records.list", {"space_id": "s1"}).code == "rate_limited"
    # another principal of the same space, and the space's admin, go on as before
    for who in (other, admin):
        answer = api(who, "memory.records.create", shared_fact("Ada prefers tea."))
        assert answer.status == 200, answer.body
        assert api(who, "memory.records.list", {"space_id": "s1"}).status == 200


def test_an_mcp_tool_call_counts_in_the_same_budget(api, writer, small_budget):
    """MCP tools pass the same edge: the op body a tool builds is counted (more when refused),
    and a caller over its budget gets the 429 as a tool error with the seconds to wait."""
    caller = Caller(writer.principal, "s1")
    big = run_tool(caller, "remember", {"subject_id": "u1", "text": "x" * 70_000})
    assert big.is_error and big.structured_content["error"]["code"] == "CONTENT_TOO_LARGE"
    ok = run_tool(caller, "recall", {"subject_id": "u1", "query": "tea"})
    assert not ok.is_error  # a 422/413 of the op layer is not a refused body: not weighted
    junk = {**shared_fact("Ada prefers tea."), "pad": "x" * 20_000}
    assert api(writer, "memory.records.create", junk).code == "invalid_input"  # REST, weighted
    before = census()
    limited = run_tool(caller, "remember", {"subject_id": "u1", "text": "Ada prefers tea."})
    error = limited.structured_content["error"]
    assert limited.is_error and error["code"] == "rate_limited"
    assert 1 <= error["details"]["retry_after_s"] <= 60
    assert census() == before
    other = make_persona("other")
    assert api(other, "memory.describe", {}).status == 200
