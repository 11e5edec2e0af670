"""Issue 38, finding 3: /mcp/ passes the same Django middleware as REST (Host validation, the
HTTPS redirect, the body limit) and the MCP transport's Origin check against DNS rebinding; an
unauthenticated trailing-slash POST is not redirected to the Host header's URL. Against gunicorn
as production runs it (tests/mcp/conftest.py), with raw HTTP so nothing is followed or fixed up.
Each test below failed on the code before (a foreign Host answered, an Origin never checked, the
HTTPS redirect and body limit skipped, a 307 to http://<Host>/mcp/s1)."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest

from memory.models import Candidate
from tests.mcp.conftest import start_server

pytestmark = pytest.mark.django_db(transaction=True)

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def remember(text: str) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "remember", "arguments": {"subject_id": "u1", "text": text}},
    }


def post(
    base: str, path: str, body: dict | bytes, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One POST with exactly these headers (Host included, when given)."""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Content-Length": str(len(data)),
        **(headers or {}),
    }
    try:
        conn.putrequest("POST", path, skip_host="Host" in sent, skip_accept_encoding=True)
        for name, value in sent.items():
            conn.putheader(name, value)
        conn.endheaders(data)
        answer = conn.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        conn.close()


@pytest.fixture
def agent(grant_to, ensure_subject):
    ensure_subject("u1")
    who, _ = grant_to(capabilities=["capture", "recall"], shared_access=True)
    return who


def bearer(who) -> dict[str, str]:
    return {"Authorization": f"Bearer {who.token}"}


def test_a_foreign_host_is_400_as_on_rest(web, agent):
    status, _, _ = post(web.base, "/mcp/s1", LIST, {**bearer(agent), "Host": "evil.example"})
    assert status == 400
    rest, _, _ = post(web.base, "/v1/ops/memory.describe", {}, {"Host": "evil.example"})
    assert rest == 400
    assert post(web.base, "/mcp/s1", LIST, bearer(agent))[0] == 200  # its own Host is served


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "https://127.0.0.1.evil.example", "null", "file://"]
)
def test_a_foreign_origin_is_403_and_changes_nothing(web, agent, origin):
    before = Candidate.objects.count()
    status, headers, body = post(
        web.base, "/mcp/s1", remember("Ada likes jazz."), {**bearer(agent), "Origin": origin}
    )
    assert status == 403
    answer = json.loads(body)
    assert answer["jsonrpc"] == "2.0" and answer["id"] is None and answer["error"]["message"]
    assert answer["error"]["message"] == "This Origin may not use this server."  # not echoed
    assert Candidate.objects.count() == before


def test_no_origin_and_an_origin_of_allowed_hosts_are_served(web, agent):
    port = urlsplit(web.base).port
    for headers in ({}, {"Origin": f"http://127.0.0.1:{port}"}, {"Origin": "http://localhost"}):
        status, _, body = post(web.base, "/mcp/s1", LIST, {**bearer(agent), **headers})
        assert status == 200, headers
        assert "remember" in {t["name"] for t in json.loads(body)["result"]["tools"]}


def test_a_trailing_slash_post_is_not_redirected(web, agent):
    for headers in ({}, bearer(agent), {"Host": "localhost"}):
        status, answer, _ = post(web.base, "/mcp/s1/", LIST, headers)
        assert status == 404, headers
        assert "location" not in answer


def test_the_https_redirect_applies(tmp_path, agent):
    server = start_server(tmp_path / "https.log", workers=1, SECURE_SSL_REDIRECT="1")
    try:
        status, headers, _ = post(server.base, "/mcp/s1", LIST, bearer(agent))
        assert status == 301
        assert headers["location"] == f"https://{urlsplit(server.base).netloc}/mcp/s1"
    finally:
        server.stop()


def test_the_body_limit_middleware_judges_mcp(web, agent):
    from memory.mcp.http import max_body

    parts = urlsplit(web.base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        conn.putrequest("POST", "/mcp/s1")
        for name, value in {
            **bearer(agent),
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Content-Length": str(max_body() + 1),
        }.items():
            conn.putheader(name, value)
        conn.endheaders()  # the body is never sent: the answer comes from the headers
        answer = conn.getresponse()
        assert answer.status == 413
        assert b"Request body too large" in answer.read()  # the middleware's, not the SDK's
    finally:
        conn.close()


def test_the_origin_rule(settings):
    from memory.mcp.http import origin_allowed

    settings.ALLOWED_HOSTS = ["memory.example.org", ".corp.example"]
    settings.SPOKE_MEMORY_MCP_ALLOWED_ORIGINS = ["https://agent-ui.example.net"]
    assert origin_allowed("https://memory.example.org")
    assert origin_allowed("http://memory.example.org:8443")
    assert origin_allowed("https://a.corp.example")
    assert origin_allowed("https://agent-ui.example.net")
    for refused in (
        "https://agent-ui.example.net:444",  # a listed origin is matched exactly
        "https://evil.example",
        "https://memory.example.org.evil.example",
        "null",
        "",
        "ftp://memory.example.org",
        "https://memory.example.org/path",
        "https://[::1",
    ):
        assert not origin_allowed(refused), refused
