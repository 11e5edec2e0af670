"""The edge's gates for a caller that is already authenticated but did not come through
`OpView`'s HTTP parsing: the MCP server (memory/mcp/), over streamable HTTP or stdio. What the
REST edge does between the bearer token and the handler, this does too, in the same order:
the principal's request rate (the same throttle, the same counter), its byte budget (the same
count, charged with the body REST would have received, and more for a refused one), its share
of the process's time (the same buckets), its slot among its requests in flight (the same count), the request size (`limits.max_request_bytes` of that body), then `memory.ops.base.call`
(admission's gates 3-6 and the op's handler, so grants, coverage, fences, freeze, idempotency
and receipts are the op's own). Nothing here is a second copy of a rule."""

from __future__ import annotations

from types import SimpleNamespace

from django.conf import settings

from memory.dispatch import auth
from memory.dispatch.responses import json_bytes
from memory.dispatch.views import (
    CPU_SHARE,
    IN_FLIGHT,
    PrincipalThrottle,
    charge_refused,
    check_byte_budget,
    refuse,
)
from memory.models import Principal
from memory.ops.base import call
from memory.wire.errors import BadRequest, PayloadTooLarge


def throttle(principal: Principal) -> None:
    """The principal's request rate, counted in the same window REST counts it in."""
    limiter = PrincipalThrottle()
    if not limiter.allow_request(SimpleNamespace(user=principal), None):
        raise refuse(principal, limiter.wait())


def edge_call(principal: Principal, op: str, body: dict) -> dict:
    """One op for an authenticated principal, negotiated as a REST call without a session is
    (the core flag): rate, byte budget, in flight, size, admission, handler. Raises the op's WireError."""
    throttle(principal)
    size = len(json_bytes(body))  # the body REST would have received
    check_byte_budget(principal, size)
    CPU_SHARE.check(principal.principal_id)
    with IN_FLIGHT.slot(principal), CPU_SHARE.metered() as cost:
        try:
            if size > settings.SPOKE_MEMORY_LIMITS["max_request_bytes"]:
                raise PayloadTooLarge(
                    "The request body is larger than limits.max_request_bytes.",
                    limit=settings.SPOKE_MEMORY_LIMITS["max_request_bytes"],
                )
            answer = call(principal, op, body, auth.default_negotiated())
            IN_FLIGHT.served_in(principal.principal_id, body.get("space_id"))
            return answer
        except (BadRequest, PayloadTooLarge):
            charge_refused(principal, size)
            raise
        finally:
            CPU_SHARE.charge(principal.principal_id, *cost())
