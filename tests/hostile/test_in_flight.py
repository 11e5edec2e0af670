"""Issue 26's aim (another tenant's p95 within 2x of quiet), from outside against gunicorn as
deployed: one principal's requests may hold at most SPOKE_MEMORY_MAX_IN_FLIGHT of a web
process's threads at once (default GUNICORN_THREADS less one), so another tenant always finds a
thread; past the limit a request is answered `429 rate_limited` at once, its body read and
discarded, its keep-alive connection kept (docs/decisions.md "Requests in flight"). Before, four
slow clients of one principal held all four threads of a process and every other tenant's request
waited behind them. A principal the process serves alone (an app with its one token) may still use
every thread. And a web worker lets its threads take turns every 0.5 ms, not Python's 5 ms
(spokememory/warm.py `switch_threads`)."""

# Loopback URLs only.
# ruff: noqa: S310

from __future__ import annotations

import http.client
import json
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import make_persona, make_space
from tests.hostile.conftest import gunicorn
from tests.reviews.jobs import _jobs

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
THREADS = 4


def start(tmp_path, **extra: str):
    """gunicorn with the deployed configuration (one process of THREADS threads, the in-flight
    limit at its default unless `extra` sets it), on the test database; yields its port."""
    env = _jobs.worker_env(WEB_CONCURRENCY="1", GUNICORN_THREADS=str(THREADS))
    env.pop("SPOKE_MEMORY_MAX_IN_FLIGHT", None)
    env.update(extra)
    with gunicorn(tmp_path, env) as port:
        yield port


@pytest.fixture
def server(tmp_path):
    yield from start(tmp_path)


@pytest.fixture
def parking_server(tmp_path):
    """One slot per principal, one parking place, a refused request held 10 s."""
    yield from start(
        tmp_path, SPOKE_MEMORY_MAX_IN_FLIGHT="1", SPOKE_MEMORY_REFUSAL_DELAY_MS="10000"
    )


def held_open(port: int, token: str, body: bytes) -> socket.socket:
    """A memory.describe whose body is sent but for its last byte: the server has taken the
    request into a thread (the gates before the body have run) and waits for the rest."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = (
        "POST /v1/ops/memory.describe HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    sock.sendall(head + body[:-1])
    return sock


def finish(sock: socket.socket, body: bytes) -> bytes:
    sock.sendall(body[-1:])
    answer = b""
    while b"\r\n\r\n" not in answer:
        got = sock.recv(65536)
        if not got:
            break
        answer += got
    sock.close()
    return answer


def describe(connection: http.client.HTTPConnection, token: str) -> tuple[int, dict, dict]:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    connection.request("POST", "/v1/ops/memory.describe", body=b"{}", headers=headers)
    response = connection.getresponse()
    answer = json.loads(response.read())
    assert not response.will_close
    return response.status, answer, dict(response.headers)


def test_one_principal_cannot_hold_every_thread(server):
    make_space("s1")
    hog, other = make_persona("hog"), make_persona("other")
    body = b"{}" + b" " * 64
    connection = http.client.HTTPConnection("127.0.0.1", server, timeout=30)
    # another tenant was served a moment ago: the process keeps a thread for it from now on
    status, answer, _ = describe(connection, other.token)
    assert status == 200, answer
    held = [held_open(server, hog.token, body) for _ in range(THREADS - 1)]
    time.sleep(1.0)  # every held request has reached its thread and waits for its body
    try:
        # the hog holds THREADS - 1 threads: its next request is refused at once, and the
        # keep-alive connection carries the next one
        status, answer, headers = describe(connection, hog.token)
        assert (status, answer["error"]["code"]) == (429, "rate_limited"), answer
        assert "in flight" in answer["error"]["message"]
        assert headers["Retry-After"] == "1"
        sock = connection.sock
        # another tenant finds the thread left free, on the same connection
        status, answer, _ = describe(connection, other.token)
        assert status == 200 and "provider" in answer, answer
        assert connection.sock is sock
        # the held requests complete as usual, and free their slots
        for one in held:
            assert finish(one, body).startswith(b"HTTP/1.1 200"), "a held request failed"
        held = []
        status, answer, _ = describe(connection, hog.token)
        assert status == 200 and "provider" in answer, answer
    finally:
        for one in held:
            one.close()
        connection.close()


def test_a_principal_served_alone_may_use_every_thread(server):
    """An app calling with its one token, with nobody else served by the process, is not
    refused for its concurrency: every thread is its (the limit keeps a thread for another
    tenant, and there is none). Before, its fourth call at once was a 429."""
    make_space("s1")
    app = make_persona("app")
    body = b"{}" + b" " * 64
    held = [held_open(server, app.token, body) for _ in range(THREADS - 1)]
    time.sleep(1.0)  # every held request has reached its thread and waits for its body
    connection = http.client.HTTPConnection("127.0.0.1", server, timeout=30)
    try:
        status, answer, _ = describe(connection, app.token)
        assert status == 200 and "provider" in answer, answer
        for one in held:
            assert finish(one, body).startswith(b"HTTP/1.1 200"), "a held request failed"
        held = []
    finally:
        for one in held:
            one.close()
        connection.close()


def test_the_limit_applies_while_another_principal_was_served_within_the_window(settings):
    """The rule itself (memory/dispatch/views.py InFlight), on a fresh count: alone, a principal
    takes every slot it asks for; with another principal in flight, or served within
    SPOKE_MEMORY_IN_FLIGHT_WINDOW_S, it is refused past SPOKE_MEMORY_MAX_IN_FLIGHT; once the
    window has passed without the other, it is alone again."""
    from memory.dispatch import views

    settings.SPOKE_MEMORY_MAX_IN_FLIGHT = 2
    settings.SPOKE_MEMORY_IN_FLIGHT_WINDOW_S = 60
    clock = [1000.0]
    count = views.InFlight(clock=lambda: clock[0])
    assert all(count.enter("app") for _ in range(5))  # alone: five at once
    for _ in range(5):
        count.leave("app")
    assert count.enter("other")  # another tenant in flight
    assert count.enter("app") and count.enter("app")
    assert not count.enter("app")  # its limit, while the other is served
    count.leave("other")
    clock[0] += 59  # the other answered, seen 59 s ago: still within the window
    assert not count.enter("app")
    clock[0] += 2  # 61 s: the process has served the app alone for the window
    assert count.enter("app")
    assert count._held == {"app": 3}  # a refusal took nothing


def test_a_web_worker_switches_threads_every_half_millisecond():
    """The WSGI module as gunicorn loads it sets the GIL's switch interval (0.5 ms; Python's
    5 ms let another tenant's running request hold a request that waited for the interpreter
    after each statement for up to 5 ms every time); SPOKE_MEMORY_SWITCH_INTERVAL_MS changes it,
    0 keeps Python's."""
    probe = "import sys, spokememory.wsgi; print(sys.getswitchinterval())"

    def interval(**extra: str) -> float:
        env = _jobs.worker_env()
        env.pop("SPOKE_MEMORY_SWITCH_INTERVAL_MS", None)
        env.update(extra)
        out = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return float(out.stdout.strip().splitlines()[-1])

    assert interval() == pytest.approx(0.0005)
    assert interval(SPOKE_MEMORY_SWITCH_INTERVAL_MS="2") == pytest.approx(0.002)
    assert interval(SPOKE_MEMORY_SWITCH_INTERVAL_MS="0") == pytest.approx(0.005)


def test_mcp_tool_calls_take_slots_in_the_same_count(settings):
    """The MCP edge (memory/dispatch/edge.py) counts a principal's tool calls among the same
    requests in flight as REST: with its slots held, a tool call is refused `rate_limited` with
    Retry-After 1, and goes through once one is free."""
    from memory.dispatch.edge import edge_call
    from memory.dispatch.views import IN_FLIGHT
    from memory.wire.errors import RateLimited

    settings.SPOKE_MEMORY_MAX_IN_FLIGHT = 2
    make_space("s1")
    who, other = make_persona("client"), make_persona("other")
    assert IN_FLIGHT.enter(other.id)  # another tenant's request in flight: the limit applies
    held = [IN_FLIGHT.enter(who.id) for _ in range(2)]  # two REST requests of its, in flight
    assert held == [True, True]
    try:
        with pytest.raises(RateLimited) as refused:
            edge_call(who.principal, "memory.describe", {})
        assert refused.value.headers["Retry-After"] == "1"
        assert "in flight" in refused.value.message
    finally:
        for _ in held:
            IN_FLIGHT.leave(who.id)
        IN_FLIGHT.leave(other.id)
    assert "provider" in edge_call(who.principal, "memory.describe", {})


def test_a_caller_over_its_rate_waits_for_its_429_in_its_own_slot(parking_server):
    """A request of a principal over its rate is held (SPOKE_MEMORY_REFUSAL_DELAY_MS) before its
    429, in one of the principal's in-flight slots and one of the process's parking places, so a
    client that ignores Retry-After cannot make the server refuse it as fast as it sends; with
    the places taken, the next refusal is at once; another tenant is served meanwhile. Before,
    every 429 was answered at once."""
    from memory.services import operators

    make_space("s1")
    hog, other = make_persona("hog"), make_persona("other")
    operators.set_rate(hog.principal, "1/day")  # no window ends during the test
    connection = http.client.HTTPConnection("127.0.0.1", parking_server, timeout=30)
    body = b"{}"
    try:
        status, answer, _ = describe(connection, hog.token)
        assert status == 200, answer
        parked = held_open(parking_server, hog.token, body + b" ")
        parked.sendall(b" ")  # the whole request: over its rate, held before its answer
        time.sleep(1.0)  # it has reached its thread
        # the next one finds the only parking place taken: refused at once
        status, answer, headers = describe(connection, hog.token)
        assert (status, answer["error"]["code"]) == (429, "rate_limited"), answer
        assert int(headers["Retry-After"]) >= 1
        # another tenant is served while the hog's request is held
        status, answer, _ = describe(connection, other.token)
        assert status == 200 and "provider" in answer, answer
        readable, _, _ = select.select([parked], [], [], 0)
        assert not readable, "the held request was answered before the later ones"
        answer = finish(parked, b"")
        assert answer.startswith(b"HTTP/1.1 429"), answer[:200]
        assert b"retry-after:" in answer.lower()
    finally:
        connection.close()


def test_principals_answered_in_a_common_space_are_one_tenant_for_the_limit(settings):
    """The limit keeps a thread for *another tenant*. An app beside its own agent's token (both
    answered in the team's space within the window) may take every slot, as alone: refused
    before, and then at once by the keep-alive connection that happened to land on that
    process, in a loop (docs/reliability.md, the `team` phase). A principal of another space,
    in flight or served within the window, brings the limit back."""
    from memory.dispatch import views

    settings.SPOKE_MEMORY_MAX_IN_FLIGHT = 2
    settings.SPOKE_MEMORY_IN_FLIGHT_WINDOW_S = 60
    clock = [1000.0]
    count = views.InFlight(clock=lambda: clock[0])
    count.served_in("app", "team")
    assert count.enter("agent")  # its own agent, in flight
    count.served_in("agent", "team")
    assert all(count.enter("app") for _ in range(5))
    assert not count.shared("app")
    assert count.enter("other")  # another tenant, in flight
    assert not count.enter("app")
    assert count.shared("app")
