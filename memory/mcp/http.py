"""Streamable HTTP at /mcp/<space_id>: an ASGI app built from the SDK's parts — its bearer
authentication middleware (a missing or bad token is `401` with `WWW-Authenticate: Bearer`), its
session manager in stateless JSON mode (each POST is answered on its own: any web worker serves
any request, so several workers need no sticky sessions; clients of the initialize handshake and
of the stateless 2026 protocol are both served by the SDK) and the low-level server of
memory/mcp/server.py.

`with_mcp()` mounts it under the WSGI server the REST API runs on (memory/mcp/bridge.py: each
gunicorn thread runs its own instance on its own event loop, and does the ORM work itself with
that loop paused, so an MCP request never leaves the thread that accepted it); spokememory/wsgi.py
routes /mcp/ to it. Why WSGI and not an ASGI server: docs/decisions.md "MCP under the WSGI
server"."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import anyio
from django.conf import settings
from django.db import close_old_connections
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import (
    AuthenticatedUser,
    BearerAuthBackend,
    RequireAuthMiddleware,
)
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from pydantic import ConfigDict
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from memory.dispatch import auth, edge
from memory.mcp.bridge import per_thread
from memory.mcp.server import build_server, in_thread
from memory.mcp.tools import Caller
from memory.models import Principal
from memory.wire.errors import WireError

PREFIX = "/mcp/"
PATH = PREFIX + "{space_id}"


class PrincipalToken(AccessToken):
    """The SDK's access token, carrying the principal the bearer token belongs to."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    principal: Any = None


class PrincipalVerifier:
    """The SDK's TokenVerifier over the REST API's tokens (memory/dispatch/auth.py): an
    unrevoked token of an existing principal, looked up by hash."""

    async def verify_token(self, token: str) -> AccessToken | None:
        def lookup() -> Principal | None:
            try:
                return auth.principal_for_header(f"Bearer {token}")
            except WireError:
                return None

        principal = await in_thread(lookup)
        if principal is None:
            return None
        return PrincipalToken(
            token=token, client_id=principal.principal_id, scopes=[], principal=principal
        )


def http_caller(ctx: ServerRequestContext[Any, Any]) -> Caller:
    request = ctx.request
    if request is None:
        raise RuntimeError("an MCP request reached a tool without its HTTP request")
    user = request.scope.get("user")
    if not isinstance(user, AuthenticatedUser) or not isinstance(user.access_token, PrincipalToken):
        raise RuntimeError("an MCP request reached a tool without an authenticated principal")
    return Caller(principal=user.access_token.principal, space_id=request.path_params["space_id"])


class Admitted:
    """Every authenticated MCP request (initialize, ping, tools/list, a tool call, a bad one)
    through the limiter's admission (memory/dispatch/edge.py `admit`: its principal's and its
    space's rates, its declared bytes, a place in flight) before the SDK reads its JSON-RPC
    message; refused, `429` with Retry-After and a JSON-RPC error carrying the wire's
    envelope, the body unread. The admission's Redis calls run in this web thread, as the ORM's
    do (memory/mcp/bridge.py)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        if not isinstance(user, AuthenticatedUser) or not isinstance(
            user.access_token, PrincipalToken
        ):
            raise RuntimeError("an MCP request reached admission without its principal")
        size = declared_length(scope)
        try:
            hold = edge.admit(user.access_token.principal, size)
        except WireError as err:
            if size <= max_body():  # read and dropped, so the keep-alive connection stays usable
                await drain(receive)
            await refused(err, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            edge.leave(hold)


def declared_length(scope: Scope) -> int:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return max(0, int(value))
            except ValueError:
                return 0
    return 0


async def drain(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body"):
            return


async def refused(err: WireError, send: Send) -> None:
    envelope = err.envelope()
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32000, "message": envelope["error"]["message"], "data": envelope},
        }
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    headers += [(k.lower().encode(), v.encode()) for k, v in err.headers.items()]
    await send({"type": "http.response.start", "status": err.http_status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def max_body() -> int:
    # Room above limits.max_request_bytes for the JSON-RPC envelope and JSON escapes, so an
    # oversized argument is answered by the edge's own size gate as a tool error, as REST
    # answers it; what is larger still is refused by the transport (413).
    return 4 * settings.SPOKE_MEMORY_LIMITS["max_request_bytes"] + 65_536


class McpApp:
    """The ASGI app. The session manager's task group must run for as long as the app serves;
    an ASGI server would run it in the lifespan, which the bridge does not send, so it is
    started on the first request, on the loop that serves the requests."""

    def __init__(self) -> None:
        self.server = build_server(http_caller)
        self.manager = StreamableHTTPSessionManager(
            app=self.server, json_response=True, stateless=True, max_request_body_size=max_body()
        )
        endpoint = RequireAuthMiddleware(
            Admitted(StreamableHTTPASGIApp(self.manager)), required_scopes=[]
        )
        self.app = Starlette(
            # POST only: stateless, the server has nothing to send on a standalone GET stream
            # (which would hold a web thread until the client left) and no session to DELETE;
            # clients take the 405 as the protocol allows.
            routes=[Route(PATH, endpoint=endpoint, methods=["POST"])],
            middleware=[
                Middleware(
                    AuthenticationMiddleware, backend=BearerAuthBackend(PrincipalVerifier())
                ),
                Middleware(AuthContextMiddleware),
            ],
        )
        self._running: asyncio.Event | None = None
        self._task: asyncio.Task | None = None

    async def _ensure_running(self) -> None:
        if self._running is None:
            self._running = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run(self._running))
        await self._running.wait()

    async def _run(self, running: asyncio.Event) -> None:
        async with self.manager.run():
            running.set()
            await anyio.sleep_forever()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._ensure_running()
        await self.app(scope, receive, send)


def with_mcp(django_app: Callable) -> Callable:
    """The web process's WSGI callable: /mcp/ to the MCP app (one instance per web thread, made
    on that thread's first MCP request, after gunicorn's fork), all else to Django untouched
    (one prefix test per REST request)."""
    mcp_app = per_thread(McpApp)

    def serve_mcp(environ: dict, start_response: Callable) -> Iterator[bytes]:
        # A request's database connection is handled as Django handles a REST request's (its
        # request_started and request_finished signals): closed if too old or broken, before
        # and after; the ORM work in between runs in this thread (memory/mcp/bridge.py).
        close_old_connections()
        try:
            yield from mcp_app(environ, start_response)
        finally:
            close_old_connections()

    def application(environ, start_response):
        if environ.get("PATH_INFO", "").startswith(PREFIX):
            return serve_mcp(environ, start_response)
        return django_app(environ, start_response)

    return application
