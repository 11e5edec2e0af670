"""The op registry and the context every handler receives. Handlers never see HTTP: they take
(ctx, request) with the request already schema-valid, and return the wire payload."""

from __future__ import annotations

from collections.abc import Callable

from memory.context import OpContext
from memory.models import Principal

Handler = Callable[[OpContext, dict], dict]
HANDLERS: dict[str, Handler] = {}


def op(name: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        if name in HANDLERS:
            raise RuntimeError(f"{name} registered twice")
        HANDLERS[name] = fn
        return fn

    return register


def call(
    principal: Principal, op_name: str, request: dict, negotiated: tuple[str, ...] | None = None
) -> dict:
    """Run an op in-process, past the HTTP edge but through the same admission (storability,
    capability, schema, grammar): the console, management commands and benchmarks use this,
    never a shortcut."""
    from memory.admission import admit  # admission imports the catalog, which imports the ops

    negotiated = negotiated or tuple(_all_served())
    admit(op_name, request, negotiated)
    return HANDLERS[op_name](
        OpContext(principal=principal, op=op_name, negotiated=negotiated), request
    )


def _all_served() -> list[str]:
    from django.conf import settings

    return list(settings.SPOKE_MEMORY_SERVED_CAPABILITIES)
