"""Every MCP request passes the REST edge's admission (issue 38 findings 1 and 2; memory/limits.py):
a principal over its rate is refused `429` with Retry-After for tools/list, initialize, ping and
bad-argument calls too, before the SDK reads the message; a tool's arguments are judged bounded
(a `recall` with 250,000 context_ids is refused for its length, its items unread), and the tool
schemas say the bounds (maxItems from `memory.describe`'s limits). Before, only a tool's op was
limited, and the arguments were walked item by item first."""

from __future__ import annotations

import json

import httpx2
import pytest
from django.conf import settings

from memory.mcp.server import run_tool
from memory.mcp.tools import TOOLS, Caller
from memory.services.operators import set_rate
from tests.mcp.conftest import Agent, http_client, start_server

pytestmark = pytest.mark.django_db(transaction=True)

REDIS = settings.CELERY_BROKER_URL if settings.CELERY_BROKER_URL.startswith("redis") else ""
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def rpc(url: str, token: str, method: str, params: dict | None = None, n: int = 1):
    message = {"jsonrpc": "2.0", "id": n, "method": method, "params": params or {}}
    if method == "initialize":
        message["params"] = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        }
    return httpx2.post(
        url, headers={**HEADERS, "Authorization": f"Bearer {token}"}, json=message, timeout=60
    )


@pytest.fixture
def world(ensure_subject, grant_to):
    ensure_subject("u1")
    agent, _ = grant_to(capabilities=["recall", "records_read"], shared_access=True)
    return agent


@pytest.fixture
def limited_web(tmp_path, django_db_blocker):
    """A server whose processes count in one Redis (the suite's broker's), as deployed."""
    if not REDIS:
        pytest.skip("the suite's broker is not Redis")
    with django_db_blocker.unblock():
        server = start_server(tmp_path / "gunicorn.log", SPOKE_MEMORY_CACHE_URL=REDIS)
    yield server
    server.stop()


def test_a_principal_over_its_rate_is_refused_every_mcp_request(limited_web, world):
    set_rate(world.principal, "4/hour")
    url = limited_web.url()
    for n in range(4):
        answer = rpc(url, world.token, "tools/list", n=n)
        assert answer.status_code < 429, answer.text
    for method in ("tools/list", "initialize", "ping", "tools/call"):
        params = (
            {"name": "recall", "arguments": {"subject_id": 5}} if method == "tools/call" else {}
        )
        refused = rpc(url, world.token, method, params)
        assert refused.status_code == 429, (method, refused.text)
        assert int(refused.headers["Retry-After"]) >= 1
        error = refused.json()["error"]
        assert error["data"]["error"]["code"] == "rate_limited"
    # the official client sees the refusal too (its initialize is refused)
    with pytest.raises(Exception) as failed:  # noqa: B017,PT011 - the SDK's own error type
        Agent(http_client(url, world.token)).tools()
    assert "429" in repr(failed.value) or "rate" in repr(failed.value).lower()


def test_another_principal_is_not_refused_for_it(limited_web, world, grant_to):
    other, _ = grant_to(capabilities=["recall"], shared_access=True)
    set_rate(world.principal, "1/hour")
    url = limited_web.url()
    rpc(url, world.token, "tools/list")
    assert rpc(url, world.token, "tools/list").status_code == 429
    agent = Agent(http_client(url, other.token))
    try:
        assert "recall" in agent.tools()
    finally:
        agent.close()


def test_a_recall_with_250000_context_ids_is_refused_for_its_length(world):
    """The bound is judged first: the error is maxItems at /context_ids (the last id, which
    breaks the pattern, is never reached), as invalid_input like REST's schema errors."""
    ids = ["ctx"] * 249_999 + ["not a context id!"]
    result = run_tool(
        Caller(world.principal, "s1"),
        "recall",
        {"subject_id": "u1", "query": "tea", "context_ids": ids},
    )
    error = result.structured_content["error"]
    assert result.is_error and error["code"] == "invalid_input"
    assert error["details"]["reason"] == "schema"
    assert [e["path"] for e in error["details"]["errors"]] == ["/context_ids"]
    assert "256" in error["details"]["errors"][0]["message"]


def test_tool_schemas_bound_every_array(world):
    most = settings.SPOKE_MEMORY_LIMITS["max_list_items"]

    def arrays(node):
        if isinstance(node, dict):
            if node.get("type") == "array":
                yield node
            for value in node.values():
                yield from arrays(value)
        elif isinstance(node, list):
            for value in node:
                yield from arrays(value)

    found = [a for tool in TOOLS.values() for a in arrays(tool.input_schema)]
    assert found and all(a.get("maxItems", most + 1) <= most for a in found), json.dumps(found)
    assert TOOLS["recall"].input_schema["properties"]["query"]["maxLength"] == 4096
