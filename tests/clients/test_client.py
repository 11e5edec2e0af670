"""MemoryClient and AsyncMemoryClient against a scripted transport (httpx.MockTransport): the
request each method sends, idempotency keys and their reuse on retries, bounded retries with
backoff (Retry-After honoured), session negotiation and reconnection, typed errors, iterators,
receipt polling, and a repr without the token."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import spoke_memory_client as smc
from spoke_memory_client import AsyncMemoryClient, MemoryClient

TOKEN = "tok_SECRET_never_printed"
RECEIPT = {
    "schema_version": 1,
    "receipt_id": "rct_1",
    "space_id": "s1",
    "op": "memory.records.create",
    "status": "committed",
    "payload_digest": "sha256:" + "0" * 64,
    "refs": [],
    "created_at": "2026-01-01T00:00:00.000Z",
    "extensions": {},
}
SESSION = {
    "schema_version": 1,
    "session_id": "ses_1",
    "principal_id": "prn_1",
    "negotiated_capabilities": ["spoke-memory"],
    "opened_at": "2026-01-01T00:00:00.000Z",
    "expires_at": "2026-01-01T01:00:00.000Z",
    "extensions": {},
}


def run_async(coro) -> None:
    """asyncio.run in a thread of its own: other tests (Playwright's sync API) may leave an event
    loop running in this one."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, coro).result()


def error(status: int, code: str, headers: dict | None = None, **details) -> httpx.Response:
    body = {"error": {"code": code, "message": "no", "details": details, "extensions": {}}}
    return httpx.Response(status, json=body, headers=headers)


class Script:
    """Answers requests from a list (a response, an exception, or a callable of the request)."""

    def __init__(self, *answers) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if callable(answer) and not isinstance(answer, httpx.Response):
            answer = answer(request)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def bodies(self) -> list[dict]:
        return [json.loads(r.content) if r.content else {} for r in self.requests]

    def paths(self) -> list[str]:
        return [r.url.path for r in self.requests]


def client(script: Script, capabilities=None, **kw) -> tuple[MemoryClient, list[float]]:
    c = MemoryClient(
        "http://spoke.test", TOKEN, capabilities, transport=httpx.MockTransport(script), **kw
    )
    slept: list[float] = []
    c._sleep = slept.append
    return c, slept


def test_methods_send_the_op_with_members_named_as_the_request():
    script = Script(httpx.Response(200, json={"record": {"record_id": "rec_1"}}))
    c, _ = client(script)
    answer = c.records.get(space_id="s1", record_id="rec_1")
    assert answer == {"record": {"record_id": "rec_1"}}
    request = script.requests[0]
    assert request.url.path == "/v1/ops/memory.records.get"
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert "Spoke-Session" not in request.headers
    assert script.bodies() == [{"space_id": "s1", "record_id": "rec_1"}]


def test_absent_members_are_not_sent_and_top_level_ops_are_methods():
    script = Script(*(httpx.Response(200, json={}) for _ in range(3)))
    c, _ = client(script)
    c.describe()
    c.recall(space_id="s1", subject_id="u1", query={"text": "tea"})
    c.op("memory.spaces.list", {})
    assert script.paths() == [
        "/v1/ops/memory.describe",
        "/v1/ops/memory.recall",
        "/v1/ops/memory.spaces.list",
    ]
    assert script.bodies()[1] == {"space_id": "s1", "subject_id": "u1", "query": {"text": "tea"}}


def test_a_mutation_gets_a_fresh_key_reused_on_its_retries():
    script = Script(
        error(503, "unavailable"),
        httpx.ConnectError("refused"),
        httpx.Response(200, json={"receipt": RECEIPT}),
        httpx.Response(200, json={"receipt": RECEIPT}),
    )
    c, slept = client(script)
    body = dict(
        space_id="s1",
        subject_id="u1",
        kind="fact",
        content={"text": "x"},
        placement={"scope": "shared"},
    )
    c.records.create(**body)
    c.records.create(**body)
    keys = [b["idempotency_key"] for b in script.bodies()]
    assert keys[0] == keys[1] == keys[2] != keys[3]
    assert len(slept) == 2


def test_a_given_key_is_sent_as_is():
    script = Script(httpx.Response(200, json={"receipt": RECEIPT}))
    c, _ = client(script)
    c.spaces.freeze(space_id="s1", idempotency_key="mine")
    assert script.bodies()[0] == {"space_id": "s1", "idempotency_key": "mine"}


def test_retry_after_is_honoured_and_retries_are_bounded():
    script = Script(*(error(429, "rate_limited", {"Retry-After": "7"}) for _ in range(3)))
    c, slept = client(script, max_retries=2)
    with pytest.raises(smc.RateLimited) as caught:
        c.describe()
    assert slept == [7.0, 7.0] and len(script.requests) == 3
    assert caught.value.status == 429 and caught.value.retry_after == 7.0


def test_backoff_grows_without_retry_after():
    script = Script(*(error(503, "unavailable") for _ in range(4)))
    c, slept = client(script, max_retries=3, backoff=1.0, max_backoff=3.0)
    with pytest.raises(smc.Unavailable):
        c.describe()
    assert len(slept) == 3
    assert 0.5 <= slept[0] <= 1.0 and 1.0 <= slept[1] <= 2.0 and 1.5 <= slept[2] <= 3.0


def test_other_errors_are_not_retried():
    script = Script(error(500, "internal_error", request_id="r1"))
    c, slept = client(script)
    with pytest.raises(smc.InternalError) as caught:
        c.describe()
    assert slept == [] and caught.value.details == {"request_id": "r1"}


def test_a_connection_error_is_not_retried_for_an_unkeyed_unknown_op():
    script = Script(httpx.ConnectError("refused"))
    c, slept = client(script)
    with pytest.raises(smc.ConnectionFailed) as caught:
        c.op("memory.something.new", {"x": 1})
    assert slept == [] and caught.value.status is None
    assert "idempotency_key" not in script.bodies()[0]


def test_connection_errors_exhaust_into_connection_failed():
    script = Script(*(httpx.ReadTimeout("slow") for _ in range(3)))
    c, slept = client(script, max_retries=2)
    with pytest.raises(smc.ConnectionFailed):
        c.spaces.unfreeze(space_id="s1")
    assert len(slept) == 2
    assert len({b["idempotency_key"] for b in script.bodies()}) == 1


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (409, "REVISION_CONFLICT", smc.RevisionConflict),
        (404, "NOT_FOUND", smc.NotFound),
        (400, "invalid_input", smc.BadRequest),
        (422, "INVALID_INPUT", smc.InvalidInput),
        (403, "capability_missing", smc.CapabilityMissing),
        (409, "IMPORT_STATE_CONFLICT", smc.ImportStateConflict),
        (418, "SOMETHING_NEW", smc.SpokeError),
    ],
)
def test_errors_raise_the_class_of_their_code(status, code, cls):
    script = Script(error(status, code, current_revision=3))
    c, _ = client(script)
    with pytest.raises(cls) as caught:
        c.records.get(space_id="s1", record_id="rec_1")
    err = caught.value
    assert type(err) is cls and isinstance(err, smc.SpokeError)
    assert (err.code, err.status, err.message, err.details) == (
        code,
        status,
        "no",
        {"current_revision": 3},
    )


def test_every_spec_code_has_its_class():
    from memory.wire.errors import STATUS

    assert set(STATUS) <= set(smc.ERRORS)
    assert all(smc.ERRORS[code].code == code for code in STATUS)


def test_an_answer_without_an_envelope_is_unexpected():
    script = Script(httpx.Response(502, text="<html>bad gateway</html>"))
    c, _ = client(script)
    with pytest.raises(smc.UnexpectedResponse) as caught:
        c.describe()
    assert caught.value.status == 502


def test_a_session_is_negotiated_and_named_on_every_call():
    script = Script(
        httpx.Response(200, json={"session": SESSION}),
        httpx.Response(200, json={}),
        httpx.Response(200, json={}),
        httpx.Response(200, json={"closed": True, "session_id": "ses_1"}),
    )
    c, _ = client(script, capabilities=["spoke-memory-reflection", "spoke-memory"])
    c.describe()
    c.describe()
    c.close()
    assert script.paths() == [
        "/v1/connect",
        "/v1/ops/memory.describe",
        "/v1/ops/memory.describe",
        "/v1/disconnect",
    ]
    assert script.bodies()[0] == {"capabilities": ["spoke-memory", "spoke-memory-reflection"]}
    assert [r.headers.get("Spoke-Session") for r in script.requests[1:]] == ["ses_1"] * 3
    assert c.session is None


def test_an_expired_session_is_reopened_and_the_call_repeated_with_its_key():
    script = Script(
        httpx.Response(200, json={"session": SESSION}),
        error(401, "session_invalid"),
        httpx.Response(200, json={"session": {**SESSION, "session_id": "ses_2"}}),
        httpx.Response(200, json={"receipt": RECEIPT}),
    )
    c, _ = client(script, capabilities=["spoke-memory"])
    c.subjects.ensure(space_id="s1", subject_id="u1")
    assert script.paths() == [
        "/v1/connect",
        "/v1/ops/memory.subjects.ensure",
        "/v1/connect",
        "/v1/ops/memory.subjects.ensure",
    ]
    assert script.requests[3].headers["Spoke-Session"] == "ses_2"
    bodies = script.bodies()
    assert bodies[1]["idempotency_key"] == bodies[3]["idempotency_key"]


def test_session_invalid_without_capabilities_is_raised():
    script = Script(error(401, "session_invalid"))
    c, _ = client(script)
    with pytest.raises(smc.SessionInvalid):
        c.describe()


def test_a_session_that_stays_invalid_is_raised():
    script = Script(
        httpx.Response(200, json={"session": SESSION}),
        error(401, "session_invalid"),
        httpx.Response(200, json={"session": SESSION}),
        error(401, "session_invalid"),
    )
    c, _ = client(script, capabilities=["spoke-memory"])
    with pytest.raises(smc.SessionInvalid):
        c.describe()


def test_iter_follows_next_cursor():
    script = Script(
        httpx.Response(
            200,
            json={
                "records": [{"record_id": "a"}, {"record_id": "b"}],
                "total_authorized": 3,
                "next_cursor": "c1",
            },
        ),
        httpx.Response(
            200, json={"records": [{"record_id": "c"}], "total_authorized": 3, "next_cursor": None}
        ),
    )
    c, _ = client(script)
    ids = [r["record_id"] for r in c.records.iter(space_id="s1", page_size=2)]
    assert ids == ["a", "b", "c"]
    assert script.bodies() == [
        {"space_id": "s1", "page_size": 2},
        {"space_id": "s1", "page_size": 2, "cursor": "c1"},
    ]
    assert all(hasattr(getattr(c, f), "iter") for f in ("candidates", "grants", "reflections"))


def test_receipts_wait_polls_until_done_and_times_out():
    pending = {**RECEIPT, "status": "pending"}
    script = Script(
        httpx.Response(200, json={"receipt": pending}),
        httpx.Response(200, json={"receipt": {**RECEIPT, "status": "failed"}}),
    )
    c, _ = client(script)
    assert c.receipts.wait("rct_1", timeout=30, interval=0.001)["status"] == "failed"
    assert script.bodies() == [{"receipt_id": "rct_1"}] * 2
    stuck = Script(*(httpx.Response(200, json={"receipt": pending}) for _ in range(1000)))
    c, _ = client(stuck)
    with pytest.raises(smc.ReceiptTimeout) as caught:
        c.receipts.wait("rct_1", timeout=0, interval=0.001)
    assert caught.value.receipt["status"] == "pending"


def test_repr_and_errors_never_show_the_token():
    script = Script(error(401, "unauthenticated"))
    c, _ = client(script, capabilities=["spoke-memory"])
    assert TOKEN not in repr(c) and TOKEN not in str(c)
    assert "spoke.test" in repr(c)
    with pytest.raises(smc.Unauthenticated) as caught:
        c.describe()
    assert TOKEN not in repr(caught.value) and TOKEN not in str(caught.value)
    assert TOKEN not in repr(vars(c))


def test_a_token_is_required():
    with pytest.raises(ValueError):
        MemoryClient("http://spoke.test", "")


def test_the_async_client_has_the_same_surface():
    pending = {**RECEIPT, "status": "pending"}
    script = Script(
        httpx.Response(200, json={"session": SESSION}),
        error(429, "rate_limited", {"Retry-After": "0"}),
        httpx.Response(200, json={"receipt": RECEIPT}),
        httpx.Response(
            200, json={"records": [{"record_id": "a"}], "total_authorized": 2, "next_cursor": "c1"}
        ),
        httpx.Response(
            200, json={"records": [{"record_id": "b"}], "total_authorized": 2, "next_cursor": None}
        ),
        httpx.Response(200, json={"receipt": pending}),
        httpx.Response(200, json={"receipt": RECEIPT}),
        error(409, "REVISION_CONFLICT", current_revision=2),
        httpx.Response(200, json={"closed": True, "session_id": "ses_1"}),
    )

    async def run() -> None:
        async with AsyncMemoryClient(
            "http://spoke.test", TOKEN, ["spoke-memory"], transport=httpx.MockTransport(script)
        ) as c:
            await c.spaces.freeze(space_id="s1")
            assert [r["record_id"] async for r in c.records.iter(space_id="s1")] == ["a", "b"]
            assert (await c.receipts.wait("rct_1", interval=0.001))["status"] == "committed"
            with pytest.raises(smc.RevisionConflict):
                await c.records.update(
                    space_id="s1", record_id="r", expected_revision=1, kind="fact"
                )
            assert TOKEN not in repr(c)

    run_async(run())
    bodies = script.bodies()
    assert bodies[1]["idempotency_key"] == bodies[2]["idempotency_key"]
    assert script.paths()[-1] == "/v1/disconnect"
