"""Streamable HTTP at /mcp/<space_id>: an ASGI app built from the SDK's parts — its bearer
authentication middleware (a missing or bad token is `401` with `WWW-Authenticate: Bearer`), its
session manager in stateless JSON mode (each POST is answered on its own: any web worker serves
any request, so several workers need no sticky sessions; clients of the initialize handshake and
of the stateless 2026 protocol are both served by the SDK) and the low-level server of
memory/mcp/server.py.

`endpoint` serves it as a Django view (spokememory/urls.py: `mcp/<space_id>`), so an MCP request
passes every middleware a REST request passes — Host validation (a foreign Host is 400), the HTTPS
redirect, the body-limit middleware — and then the Origin check the MCP streamable-HTTP transport
asks for against DNS rebinding (`origin_refusal`: no Origin, a non-browser client, is served; a
present one must name a host of ALLOWED_HOSTS or be listed in SPOKE_MEMORY_MCP_ALLOWED_ORIGINS;
anything else is 403 before authentication). The view runs the ASGI app under the WSGI server the
REST API runs on (memory/mcp/bridge.py: each gunicorn thread runs its own instance on its own
event loop, and does the ORM work itself with that loop paused, so an MCP request never leaves
the thread that accepted it). Nothing redirects: `/mcp/<space_id>/` is 404. Why WSGI and not an
ASGI server: docs/decisions/mcp-under-wsgi.md; why through Django:
docs/decisions/mcp-through-django.md."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit

import anyio
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.http.request import validate_host
from django.views.decorators.csrf import csrf_exempt
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import (
    AuthenticatedUser,
    BearerAuthBackend,
    RequireAuthMiddleware,
)
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp_types import INVALID_REQUEST
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
        self.app.router.redirect_slashes = False  # never a redirect to the Host header's URL
        self._running: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

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


# One MCP app per web thread, made on that thread's first MCP request, after gunicorn's fork.
mcp_app = per_thread(McpApp)


def origin_allowed(origin: str) -> bool:
    """A browser's Origin the MCP endpoint serves: one listed in SPOKE_MEMORY_MCP_ALLOWED_ORIGINS
    (exactly, `scheme://host[:port]`), or an http(s) origin whose host is one of ALLOWED_HOSTS
    (the hosts this server answers as: a page served from them is this deployment's own)."""
    if origin in settings.SPOKE_MEMORY_MCP_ALLOWED_ORIGINS:
        return True
    try:
        parts = urlsplit(origin)
        host = parts.hostname
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not host or parts.path not in ("", "/"):
        return False
    if ":" in host:  # an IPv6 literal, as ALLOWED_HOSTS writes it
        host = f"[{host}]"
    return validate_host(host, settings.ALLOWED_HOSTS)


def origin_refusal(request: HttpRequest) -> HttpResponse | None:
    """403 for a request whose Origin header is present and not allowed (the MCP transport's
    DNS-rebinding rule), with a JSON-RPC error without an id; None to serve it. The Origin is
    not echoed."""
    origin = request.headers.get("Origin")
    if origin is None or origin_allowed(origin):
        return None
    body = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": INVALID_REQUEST, "message": "This Origin may not use this server."},
    }
    return HttpResponse(json.dumps(body), status=403, content_type="application/json")


@csrf_exempt  # bearer tokens, no cookies: nothing for a cross-site form to ride on
def endpoint(request: HttpRequest, space_id: str) -> HttpResponse:
    """The Django view of /mcp/<space_id>: Django's middleware has run (Host, HTTPS redirect,
    body limit); the Origin check, then the MCP app (its bearer authentication first). The
    request's database connection is Django's (request_started/request_finished)."""
    refused = origin_refusal(request)
    if refused is not None:
        return refused
    started: dict[str, Any] = {}

    def start_response(status: str, headers: list[Any], exc_info: Any = None) -> None:
        started["status"], started["headers"] = int(status.split(" ", 1)[0]), headers

    # stateless JSON answers: finite, and bounded by the ops' own limits
    body = b"".join(mcp_app(request.META, start_response))  # META is the WSGI environ
    response = HttpResponse(body, status=started.get("status", 500))
    for name, value in started.get("headers", []):
        response.headers[name] = value
    return response
