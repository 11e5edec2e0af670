"""`python manage.py spoke mcp --space SPACE`: the MCP tools over stdio, for an agent on the same
machine that starts the provider as its subprocess. The caller is the principal of the token in
SPOKE_MEMORY_TOKEN (the REST API's bearer tokens), looked up again for every request (as REST
looks up its bearer token per request): a token revoked while the process runs is refused at the
next request (a tool error `unauthenticated`, or an error answer to tools/list), so
`revoke-token` cuts a running stdio agent off too. Every call goes through the same tools and
edge gates as over HTTP."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from memory.dispatch import auth
from memory.mcp.server import build_server
from memory.mcp.tools import Caller
from memory.services.operators import OperatorError
from memory.wire.errors import WireError


def caller_from_token(space_id: str, token: str | None) -> Caller:
    if not token:
        raise OperatorError(
            "SPOKE_MEMORY_TOKEN is not set: export the API token of the principal the agent acts "
            "as (manage.py spoke issue-token PRINCIPAL_ID makes one)."
        )
    try:
        principal = auth.principal_for_header(f"Bearer {token}")
    except WireError:
        raise OperatorError(
            "SPOKE_MEMORY_TOKEN is not a valid token (unknown or revoked)."
        ) from None
    return Caller(principal=principal, space_id=space_id)


def serve_stdio(space_id: str, token: str | None) -> None:
    caller_from_token(space_id, token)  # refuse to start, clearly, without a valid token
    header = f"Bearer {token}"

    def caller_of(ctx: Any) -> Caller:
        # Per request, in the request's thread: raises the 401 WireError once revoked.
        return Caller(principal=auth.principal_for_header(header), space_id=space_id)

    server = build_server(caller_of)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
