"""memory/mcp/bridge.py, the ASGI-under-WSGI bridge the MCP endpoint is served through, on
small ASGI apps: synchronous work runs in the web thread with no event loop running (so
Django's ORM may be used there), the request body arrives in order and the end of the request
only after the response, a streamed answer reaches the WSGI server chunk by chunk, a client that
leaves mid-answer cancels the app, an app's failure reaches the WSGI server, and each web thread
has its own app. The MCP endpoint itself is tested end to end in test_tools.py."""

from __future__ import annotations

import asyncio
import functools
import io
import threading
from collections.abc import Callable

import pytest

from memory.mcp.bridge import current, per_thread


def in_own_thread(test: Callable) -> Callable:
    """Run the test in a thread of its own, as a web thread is: no event loop runs there (in the
    suite's main thread, the browser tests' Playwright leaves one running)."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        failure: list[BaseException] = []

        def body() -> None:
            try:
                test(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
                failure.append(exc)

        thread = threading.Thread(target=body)
        thread.start()
        thread.join()
        if failure:
            raise failure[0]

    return run


def environ(body: bytes = b"", path: str = "/mcp/s1", **headers: str) -> dict:
    env = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "QUERY_STRING": "a=1",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "CONTENT_LENGTH": str(len(body)),
        "CONTENT_TYPE": "application/json",
        "REMOTE_ADDR": "127.0.0.1",
        "REMOTE_PORT": "4242",
    }
    env.update({"HTTP_" + k.upper(): v for k, v in headers.items()})
    return env


class Responder:
    def __init__(self) -> None:
        self.status: str | None = None
        self.headers: list[tuple[str, str]] = []

    def __call__(self, status: str, headers: list[tuple[str, str]], exc_info=None) -> None:
        self.status, self.headers = status, headers


def answer(app: Callable, env: dict) -> tuple[Responder, bytes]:
    r = Responder()
    return r, b"".join(app(env, r))


async def respond(send, status: int = 200, body: bytes = b"ok", more: bool = False) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [(b"x-a", b"1")]})
    await send({"type": "http.response.body", "body": body, "more_body": more})


@in_own_thread
def test_sync_work_runs_in_the_web_thread_with_no_loop_running():
    seen: dict = {}

    def work() -> str:
        seen["thread"] = threading.get_ident()
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            seen["loop"] = None
        else:
            seen["loop"] = "running"
        return "from the thread"

    def fails() -> None:
        raise ValueError("bad")

    async def app(scope, receive, send):
        bridge = current()
        assert bridge is not None
        result = await bridge.run_sync(work)
        try:
            await bridge.run_sync(fails)
        except ValueError as exc:
            result += f", then {exc}"
        await respond(send, body=result.encode())

    r, body = answer(per_thread(lambda: app), environ())
    assert r.status == "200 OK"
    assert body == b"from the thread, then bad"
    assert seen == {"thread": threading.get_ident(), "loop": None}
    assert current() is None  # only while a request is served


@in_own_thread
def test_the_scope_and_body_arrive_whole_and_the_end_only_after_the_answer():
    events: list = []

    async def app(scope, receive, send):
        events.append((scope["method"], scope["path"], scope["query_string"], scope["client"]))
        events.append(dict(scope["headers"])[b"authorization"])
        body = b""
        while True:
            message = await receive()
            body += message["body"]
            if not message["more_body"]:
                break
        events.append(len(body))
        waiting = asyncio.ensure_future(receive())
        await asyncio.sleep(0)
        events.append(waiting.done())  # no end of the request before the answer
        await respond(send, body=body[:3])
        events.append((await waiting)["type"])

    big = b"x" * 200_000  # more than one read
    r, body = answer(per_thread(lambda: app), environ(big, authorization="Bearer t"))
    assert body == b"xxx"
    assert ("x-a", "1") in r.headers
    assert events == [
        ("POST", "/mcp/s1", b"a=1", ("127.0.0.1", 4242)),
        b"Bearer t",
        200_000,
        False,
        "http.disconnect",
    ]


@in_own_thread
def test_a_streamed_answer_reaches_the_server_chunk_by_chunk():
    progress: list[str] = []

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for n in range(3):
            progress.append(f"sent {n}")
            await send({"type": "http.response.body", "body": b"%d" % n, "more_body": n < 2})

    chunks = per_thread(lambda: app)(environ(), Responder())
    for n, chunk in enumerate(chunks):
        if chunk:
            assert chunk == b"%d" % n
            assert progress[-1] == f"sent {n}"  # handed over before the next was made


@in_own_thread
def test_a_client_that_leaves_mid_answer_cancels_the_app():
    ended: list[str] = []

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        try:
            while True:
                await send({"type": "http.response.body", "body": b".", "more_body": True})
                await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise

    stream = per_thread(lambda: app)(environ(), Responder())
    assert next(stream) == b"."
    stream.close()  # what a WSGI server does when the client went away
    assert ended == ["cancelled"]
    assert current() is None


@in_own_thread
def test_an_apps_failure_reaches_the_wsgi_server():
    async def app(scope, receive, send):
        raise RuntimeError("broken app")

    with pytest.raises(RuntimeError, match="broken app"):
        answer(per_thread(lambda: app), environ())


@in_own_thread
def test_each_web_thread_has_its_own_app_and_keeps_it():
    made: list[int] = []

    def make():
        made.append(threading.get_ident())

        async def app(scope, receive, send):
            await respond(send, body=str(len(made)).encode())

        return app

    wsgi = per_thread(make)
    answer(wsgi, environ())
    answer(wsgi, environ())
    other = threading.Thread(target=lambda: answer(wsgi, environ()))
    other.start()
    other.join()
    assert len(made) == 2
    assert made[0] == threading.get_ident()
    assert made[1] != made[0]
