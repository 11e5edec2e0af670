"""An ASGI app served inside a WSGI worker thread, one request at a time, on that thread's own
event loop: the web thread runs the loop, and whenever the app needs synchronous work (Django's
ORM: the token check, a tool's op) the loop is paused and the web thread does that work itself,
with no loop running, as a REST request would. No thread hand-off anywhere: the request, its
ASGI app and its database work all run in the one gunicorn thread that accepted it, on that
thread's database connection.

Why not a2wsgi (which the server used before): a2wsgi runs every ASGI app on one event loop
thread per process and passes each ASGI message (the body, the response start, the body out)
between the web thread and the loop thread, and the ORM work then needs a third thread: ~6
cross-thread round trips a request, measured at ~10-20 ms on the shared 2-core machine
(docs/performance.md#clients). Here a request crosses no thread.

What this requires of the app, which the MCP app (memory/mcp/http.py) meets: its state lives on
the loop it is made on, so each web thread makes its own (`per_thread`): the MCP transport is
stateless, so nothing is shared between requests anyway. Responses may stream (each chunk is
handed to the WSGI server as it is sent); a client that leaves mid-stream cancels the app."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterator
from typing import Any

from starlette.types import ASGIApp, Message, Scope

_local = threading.local()

CHUNK = 65_536


class Bridge:
    """One web thread's event loop and app. `serve()` drives one request to its end."""

    def __init__(self, make_app: Callable[[], ASGIApp]) -> None:
        self.loop = asyncio.new_event_loop()
        self.app = make_app()
        self._work: deque[tuple[Callable[[], Any], asyncio.Future[Any]]] = deque()
        self._waiter: asyncio.Future[None] | None = None

    # -- the app's side (on the loop) -------------------------------------------------------------

    async def run_sync(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` in the web thread with the loop paused (no running loop, so Django's ORM
        may be used); the awaiting task resumes with its result or exception."""
        done = self.loop.create_future()
        self._work.append((fn, done))
        self._wake()
        return await done

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    # -- the web thread's side --------------------------------------------------------------------

    def _step(self, task: asyncio.Task[None], ready: Callable[[], bool]) -> None:
        """Run the loop until there is synchronous work, `ready()` holds, or the task ended; then
        do the work that is queued (with the loop stopped)."""
        if not self._work and not task.done() and not ready():
            self._waiter = self.loop.create_future()
            self.loop.run_until_complete(self._waiter)
            self._waiter = None
        while self._work:
            fn, done = self._work.popleft()
            try:
                result = fn()
            except Exception as exc:  # noqa: BLE001 - handed to the awaiting task, which decides
                if not done.cancelled():
                    done.set_exception(exc)
            else:
                if not done.cancelled():
                    done.set_result(result)

    def serve(self, scope: Scope, body: Any, length: int) -> Generator[Message, None, None]:
        """Run the app for one request; yields its response messages as it sends them."""
        remaining = length
        read_all = False
        sent: deque[Message] = deque()
        handed: deque[asyncio.Future[Any]] = deque()
        finished = asyncio.Event()

        async def receive() -> Message:
            nonlocal remaining, read_all
            if not read_all:
                data = body.read(min(CHUNK, remaining)) if remaining > 0 else b""
                remaining -= len(data)
                read_all = remaining <= 0 or not data  # all of it, or the client stopped sending
                return {"type": "http.request", "body": data, "more_body": not read_all}
            await finished.wait()  # the body was read: what is left to hear is the end
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            sent.append(message)
            self._wake()
            if message["type"] != "http.response.body":
                return
            if message.get("more_body", False):
                # A chunk of a stream: the app goes on once the server has taken it.
                taken = self.loop.create_future()
                handed.append(taken)
                await taken
            else:
                finished.set()

        async def run() -> None:
            await self.app(scope, receive, send)

        task = self.loop.create_task(run())
        task.add_done_callback(lambda _: self._wake())
        try:
            while True:
                self._step(task, lambda: bool(sent))
                while sent:
                    yield sent.popleft()
                while handed:
                    taken = handed.popleft()
                    if not taken.done():
                        taken.set_result(None)
                if task.done():
                    task.result()  # the app's own exception, if it raised one
                    return
        finally:
            if not task.done():  # the client left, or the WSGI server closed us
                finished.set()
                task.cancel()
                while not task.done():
                    self._step(task, lambda: False)


def current() -> Bridge | None:
    """The bridge whose loop runs in this thread, if any (an MCP request being served here)."""
    bridge = getattr(_local, "serving", None)
    return bridge if isinstance(bridge, Bridge) else None


def per_thread(make_app: Callable[[], ASGIApp]) -> Callable[..., Any]:
    """A WSGI callable serving the ASGI app made by `make_app`, one instance per web thread."""
    mine = threading.local()

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterator[bytes]:
        bridge = getattr(mine, "bridge", None)
        if bridge is None:
            bridge = mine.bridge = Bridge(make_app)
        return _respond(bridge, environ, start_response)

    return application


def _respond(
    bridge: Bridge, environ: dict[str, Any], start_response: Callable[..., Any]
) -> Iterator[bytes]:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    messages = bridge.serve(scope_of(environ), environ["wsgi.input"], length)
    _local.serving = bridge
    try:
        started = False
        for message in messages:
            if message["type"] == "http.response.start":
                start_response(
                    f"{message['status']} {_reason(message['status'])}",
                    [(k.decode("latin-1"), v.decode("latin-1")) for k, v in message["headers"]],
                )
                started = True
            elif message["type"] == "http.response.body" and started:
                chunk = message.get("body", b"")
                if chunk:
                    yield chunk
    finally:
        messages.close()  # a client that left: the app is cancelled and run to its end
        _local.serving = None


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def scope_of(environ: dict[str, Any]) -> Scope:
    """The ASGI HTTP scope of a WSGI request (headers from HTTP_*, CONTENT_TYPE, CONTENT_LENGTH)."""
    headers = [
        (key[5:].lower().replace("_", "-").encode("latin-1"), value.encode("latin-1"))
        for key, value in environ.items()
        if key.startswith("HTTP_") and key not in ("HTTP_CONTENT_TYPE", "HTTP_CONTENT_LENGTH")
    ]
    for key, name in (("CONTENT_TYPE", b"content-type"), ("CONTENT_LENGTH", b"content-length")):
        if environ.get(key):
            headers.append((name, environ[key].encode("latin-1")))
    root = environ.get("SCRIPT_NAME", "").encode("latin-1").decode("utf-8")
    path = environ.get("PATH_INFO", "").encode("latin-1").decode("utf-8")
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": environ.get("SERVER_PROTOCOL", "HTTP/1.1").partition("/")[2] or "1.1",
        "method": environ["REQUEST_METHOD"],
        "scheme": environ.get("wsgi.url_scheme", "http"),
        "path": root + path,
        "raw_path": (root + path).encode("utf-8"),
        "query_string": environ.get("QUERY_STRING", "").encode("latin-1"),
        "root_path": root,
        "headers": headers,
        "server": (environ.get("SERVER_NAME", ""), int(environ.get("SERVER_PORT") or 0)),
        "extensions": {},
    }
    if environ.get("REMOTE_ADDR"):
        scope["client"] = (environ["REMOTE_ADDR"], int(environ.get("REMOTE_PORT") or 0))
    return scope
