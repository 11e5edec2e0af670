"""Issue 26 item 11, from outside against gunicorn as deployed (spokememory/gunicorn_conf.py):
a 100 MiB POST to /console/login/ was read whole (DATA_UPLOAD_MAX_MEMORY_SIZE was off
site-wide). Request bodies are now bounded per route from the declared Content-Length, before
anything reads them (spokememory/body_limits.py): the console's forms by
SPOKE_MEMORY_MAX_FORM_BYTES, the import upload by its own SPOKE_MEMORY_MAX_IMPORT_UPLOAD_BYTES,
the wire by limits.max_request_bytes; and a 413 on /v1 leaves a keep-alive client's connection
usable for its next request."""

# Loopback URLs only.
# ruff: noqa: S310

from __future__ import annotations

import http.client
import json
import socket

import pytest

from tests.conftest import make_persona, make_space
from tests.hostile.conftest import gunicorn
from tests.reviews.jobs import _jobs

worker_env = _jobs.worker_env

pytestmark = pytest.mark.django_db(transaction=True)

FORM_LIMIT = 256 * 1024
IMPORT_LIMIT = 2 * 1024 * 1024
WIRE_LIMIT = 1_048_576
BYTE_BUDGET = 8 * WIRE_LIMIT  # limits.max_request_bytes_per_min (test_byte_budget.py)


@pytest.fixture
def server(tmp_path):
    """gunicorn with the deployed configuration, on the test database."""
    env = worker_env(
        SPOKE_MEMORY_MAX_FORM_BYTES=str(FORM_LIMIT),
        SPOKE_MEMORY_MAX_IMPORT_UPLOAD_BYTES=str(IMPORT_LIMIT),
        SPOKE_MEMORY_MAX_REQUEST_BYTES_PER_MIN=str(BYTE_BUDGET),
        WEB_CONCURRENCY="1",
    )
    with gunicorn(tmp_path, env) as port:
        yield port


def send_head(port: int, path: str, length: int, content_type: str, first: bytes) -> bytes:
    """Declare a `length`-byte body, send only its first bytes, and read what the server
    answers (a server that reads the whole body first answers nothing: the socket's timeout
    bounds the wait, so the test fails instead of hanging)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {length}\r\n\r\n"
        ).encode()
        sock.sendall(head + first)
        try:
            return sock.recv(4096)
        except TimeoutError:
            return b""


def test_a_100_mib_login_post_is_refused_before_it_is_read(server):
    answer = send_head(
        server,
        "/console/login/",
        100 * 1024 * 1024,
        "application/x-www-form-urlencoded",
        b"username=a&password=" + b"a" * 65536,
    )
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


def test_a_console_form_within_its_limit_is_read(server):
    body = b"username=a&password=" + b"a" * (FORM_LIMIT - 100)
    connection = http.client.HTTPConnection("127.0.0.1", server, timeout=60)
    connection.request(
        "POST",
        "/console/login/",
        body=body,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    response = connection.getresponse()
    response.read()
    assert response.status == 403  # read, then refused for its missing CSRF token, not its size


def test_the_import_upload_has_its_own_larger_limit(server):
    under = send_head(
        server,
        "/console/s/s1/imports/stage/",
        IMPORT_LIMIT - 1024,
        "multipart/form-data; boundary=x",
        b"",
    )
    # within the import limit the request reaches the view's gates (no session: not a 413)
    assert under and not under.startswith(b"HTTP/1.1 413"), under[:200]
    over = send_head(
        server,
        "/console/s/s1/imports/stage/",
        IMPORT_LIMIT + 1,
        "multipart/form-data; boundary=x",
        b"",
    )
    assert over.startswith(b"HTTP/1.1 413"), over[:200]
    # the same size elsewhere in the console is over the form limit
    elsewhere = send_head(
        server,
        "/console/s/s1/grants/issue/",
        IMPORT_LIMIT - 1024,
        "multipart/form-data; boundary=x",
        b"",
    )
    assert elsewhere.startswith(b"HTTP/1.1 413"), elsewhere[:200]


def test_a_413_on_v1_keeps_the_keep_alive_connection(server):
    make_space("s1")
    who = make_persona("client")
    headers = {"Authorization": f"Bearer {who.token}", "Content-Type": "application/json"}
    connection = http.client.HTTPConnection("127.0.0.1", server, timeout=60)
    big = json.dumps({"pad": "a" * WIRE_LIMIT}).encode()
    for _ in range(2):
        connection.request("POST", "/v1/ops/memory.describe", body=big, headers=headers)
        response = connection.getresponse()
        refused = json.loads(response.read())
        assert response.status == 413 and not response.will_close
        assert refused["error"]["code"] == "payload_too_large"
        sock = connection.sock
        connection.request("POST", "/v1/ops/memory.describe", body=b"{}", headers=headers)
        response = connection.getresponse()
        described = json.loads(response.read())
        assert response.status == 200, described
        assert connection.sock is sock  # the same connection: not closed, not reopened
        assert described["provider"]["limits"]["max_request_bytes"] == WIRE_LIMIT
    connection.close()


def describe_keeping_alive(
    connection: http.client.HTTPConnection, persona, body: bytes
) -> tuple[int, dict]:
    """POST memory.describe on the open connection; the answer must leave it open, and a 429
    must carry a Retry-After within the minute."""
    headers = {"Authorization": f"Bearer {persona.token}", "Content-Type": "application/json"}
    connection.request("POST", "/v1/ops/memory.describe", body=body, headers=headers)
    response = connection.getresponse()
    assert not response.will_close
    answer = json.loads(response.read())
    if response.status == 429:
        assert 1 <= int(response.headers["Retry-After"]) <= 60
    return response.status, answer


def test_a_429_of_the_byte_budget_keeps_the_keep_alive_connection(server):
    """A principal over its byte budget is refused before its body is parsed (the body is read
    and discarded), and its keep-alive connection carries the next request; another principal
    is not affected."""
    make_space("s1")
    who, other = make_persona("client"), make_persona("other")
    connection = http.client.HTTPConnection("127.0.0.1", server, timeout=60)

    def post(persona, body: bytes) -> tuple[int, dict]:
        return describe_keeping_alive(connection, persona, body)

    invalid = json.dumps({"pad": "a" * (WIRE_LIMIT - 100)}).encode()  # refused: 16x its size
    status, answer = post(who, invalid)
    assert (status, answer["error"]["code"]) == (400, "invalid_input")
    sock = connection.sock
    for body in (invalid, b"{}"):
        status, answer = post(who, body)
        assert (status, answer["error"]["code"]) == (429, "rate_limited")
        assert connection.sock is sock  # the same connection: not closed, not reopened
    status, answer = post(other, b"{}")
    assert (
        status == 200 and answer["provider"]["limits"]["max_request_bytes_per_min"] == BYTE_BUDGET
    )
    assert connection.sock is sock
    connection.close()


def test_a_429_of_the_request_rate_keeps_the_keep_alive_connection(server):
    """A principal over its own request rate gets `429 rate_limited` with Retry-After, its body
    read and discarded unparsed, and the keep-alive connection carries the next request. Before,
    the throttle answered without reading the body and gunicorn closed the connection under a
    client still sending it, which saw a broken connection instead of the 429 (and could not
    know to back off)."""
    from memory.services import operators

    make_space("s1")
    who, other = make_persona("client"), make_persona("other")
    operators.set_rate(who.principal, "2/min")
    connection = http.client.HTTPConnection("127.0.0.1", server, timeout=60)
    padded = b"{}" + b" " * (WIRE_LIMIT // 4)  # valid JSON, a quarter of the size limit

    def post(persona, body: bytes) -> tuple[int, dict]:
        return describe_keeping_alive(connection, persona, body)

    for _ in range(2):
        status, answer = post(who, padded)
        assert status == 200, answer
    sock = connection.sock
    for _ in range(2):
        status, answer = post(who, padded)
        assert (status, answer["error"]["code"]) == (429, "rate_limited")
        assert connection.sock is sock  # the same connection: not closed, not reopened
    status, answer = post(other, padded)
    assert status == 200 and "provider" in answer
    assert connection.sock is sock
    connection.close()
