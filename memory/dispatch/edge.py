"""The edge's gates for a caller that is already authenticated but did not come through
`OpView`'s HTTP parsing: the MCP server (memory/mcp/), over streamable HTTP or stdio.

`admit` is the limiter's admission (memory/limits.py), the same REST's `WireView.initial` runs:
over HTTP every MCP request (initialize, ping, tools/list, a tool call, a bad one) passes it
once its principal is known and before the SDK reads its JSON-RPC message
(memory/mcp/http.py), so nothing of it is judged for a caller over its limits. `edge_call` then
runs one tool's op as REST runs it: the rest of the op's declared cost, the size
(`limits.max_request_bytes` of the body REST would have received), then
`memory.ops.base.call` (admission's gates 3-6 and the handler, so grants, coverage, fences,
freeze, idempotency and receipts are the op's own). Over stdio (one local caller, no HTTP
request) `edge_call` admits each op itself. `EdgePort` is the typed form the MCP tools call:
`MemoryPort[Principal]`, each method one `edge_call`. Nothing here is a second copy of a rule."""

from __future__ import annotations

import threading
from typing import Any

from django.conf import settings

from memory.dispatch import auth
from memory.dispatch.responses import json_bytes
from memory.limits import LIMITER, Hold
from memory.models import Principal
from memory.ops.base import call, op_cost
from memory.ops.port import InProcessMemoryPort
from memory.wire.errors import BadRequest, PayloadTooLarge

# The request this thread serves was admitted (`admit`): an MCP request over HTTP is served
# wholly by the web thread that accepted it (memory/mcp/bridge.py).
_admitted = threading.local()


def admit(principal: Principal, size: int) -> Hold:
    """One request's admission (a unit of rate, `size` bytes, a place in flight); raises the
    429 (`RateLimited`, with Retry-After). `leave` gives the place back."""
    hold = LIMITER.admit(principal, size)
    _admitted.principal_id = principal.principal_id
    return hold


def leave(hold: Hold) -> None:
    _admitted.principal_id = None
    LIMITER.leave(hold)


def edge_call(principal: Principal, op: str, body: dict[str, Any]) -> dict[str, Any]:
    """One op for an authenticated principal, negotiated as a REST call without a session is
    (the core flag): admission (unless this request had it), the op's cost, size, admission's
    gates, handler. Raises the op's WireError."""
    size = len(json_bytes(body))  # the body REST would have received
    hold = None
    if getattr(_admitted, "principal_id", None) != principal.principal_id:
        hold = admit(principal, size)
    try:
        LIMITER.charge(principal, op_cost(op, body, size) - 1)
        try:
            limit = settings.SPOKE_MEMORY_LIMITS["max_request_bytes"]
            if size > limit:
                raise PayloadTooLarge(
                    "The request body is larger than limits.max_request_bytes.", limit=limit
                )
            return call(principal, op, body, auth.default_negotiated())
        except (BadRequest, PayloadTooLarge):
            LIMITER.refused_body(principal, size)
            raise
    finally:
        if hold is not None:
            leave(hold)


class EdgePort(InProcessMemoryPort):
    """The typed port over the edge: `MemoryPort[Principal]` (one method per op, its request and
    answer the wire types), each method running its op by `edge_call`, as a tool call runs it."""

    def __init__(self) -> None:
        super().__init__(None)

    def __repr__(self) -> str:
        return "EdgePort()"

    def op(self, principal: Principal, name: str, request: dict[str, Any]) -> dict[str, Any]:
        return edge_call(principal, name, request)
