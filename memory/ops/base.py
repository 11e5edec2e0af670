"""The op registry and the context every handler receives. Handlers never see HTTP: they take
(ctx, request) with the request already admitted (storable, capability held, schema-valid,
cognition grammar checked).

Whether an op writes is read from its schema (`mutating`), not from the handler:

- a read handler is `(ctx, req: XRequest) -> XAnswer` and is registered as it is;
- a write handler is `(ctx, req: XRequest, scope: MutationScope) -> Outcome`: it runs the gates
  of docs/protocol.md#authorization and the writes, and the registry runs it inside `mutate()` (receipt, idempotency
  key, revisions, job row, retries), so no write can skip that mechanism.

Registering a handler whose shape does not match its schema fails at import. The typed
decorator ops use is `memory.ops.signatures.op` (generated: one overload per op, so mypy checks
each handler against its op's request and answer types); `register` is its untyped core."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from memory.admission import admit
from memory.context import OpContext
from memory.models import Principal
from memory.observability.observe import observed
from memory.services.mutation import MutationScope, Outcome, mutate
from memory.wire import types as t
from memory.wire.validation import catalog

# What the registry runs: (context, admitted request) -> the wire answer.
Handler = Callable[[OpContext, Any], Any]
ReadHandler = Callable[[OpContext, Any], Any]
WriteHandler = Callable[[OpContext, Any, MutationScope], Outcome]
HANDLERS: dict[str, Handler] = {}
# The handlers as written (a write handler before the registry wrapped it in `mutate()`).
WRITTEN: dict[str, Callable[..., Any]] = {}

_READ_PARAMS = ["ctx", "req"]
_WRITE_PARAMS = ["ctx", "req", "scope"]


def register(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as `name`'s handler; the function is returned unchanged.
    A mutating op's handler must take `(ctx, req, scope)`, any other op's `(ctx, req)`."""

    def add(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in HANDLERS:
            raise RuntimeError(f"{name} registered twice")
        spec = catalog().ops.get(name)
        if spec is None:
            raise TypeError(f"{name} is not an op of the contract (no schema in schemas/ops/)")
        params = list(inspect.signature(fn).parameters)
        want = _WRITE_PARAMS if spec.mutating else _READ_PARAMS
        if params != want:
            kind = "a mutating op: the registry runs it" if spec.mutating else "a read op"
            raise TypeError(
                f"{name} is {kind}; its handler takes ({', '.join(want)}),"
                f" {fn.__module__}.{fn.__qualname__} takes ({', '.join(params)})"
            )
        WRITTEN[name] = fn
        # Every caller's op (REST, MCP, in-process) is measured and traced here, once.
        HANDLERS[name] = observed(name, _in_mutation(fn) if spec.mutating else fn)
        return fn

    return add


# What one call of an op costs its caller's request rates (memory/limits.py), in units of one
# `records.get`, declared here with the registry from the request alone, never by timing it: a
# page by its size, a recall by its record budget, an import chunk by its bytes, an export or an
# activation (a whole space's work, in the worker) by a fixed weight. Any other op: 1.
PAGE_UNIT = 50  # the items of a page one unit pays for
BYTES_UNIT = 65_536  # the bytes of an import chunk one unit pays for
MAX_COST = 20  # what one request may cost at most (its body is not yet validated)


def _pages(req: Mapping[str, Any]) -> int:
    size = req.get("page_size")
    return -(-size // PAGE_UNIT) if isinstance(size, int) and size > 0 else 1


def _recall(req: Mapping[str, Any]) -> int:
    budget = req.get("budget")
    most = budget.get("max_records") if isinstance(budget, dict) else None
    return -(-most // PAGE_UNIT) if isinstance(most, int) and most > 0 else 1


COSTS: dict[str, Callable[[Mapping[str, Any], int], int]] = {
    "memory.records.list": lambda req, size: _pages(req),
    "memory.candidates.list": lambda req, size: _pages(req),
    "memory.grants.list": lambda req, size: _pages(req),
    "memory.reflections.list": lambda req, size: _pages(req),
    "memory.recall": lambda req, size: _recall(req),
    "memory.capture": lambda req, size: 1 + size // BYTES_UNIT,
    "memory.imports.stage": lambda req, size: 1 + size // BYTES_UNIT,
    "memory.imports.activate": lambda req, size: 10,
    "memory.exports.create": lambda req, size: 10,
    "memory.exports.get": lambda req, size: 4,
    "memory.reflections.generate": lambda req, size: 4,
}


def op_cost(op: str, req: Mapping[str, Any], size: int) -> int:
    """The op's cost for this request (`size`: its body's bytes), at least 1."""
    cost = COSTS.get(op)
    return min(MAX_COST, max(1, cost(req, size))) if cost is not None else 1


def _in_mutation(fn: WriteHandler) -> Handler:
    def run(ctx: OpContext, req: Mapping[str, Any]) -> t.ReceiptResponse:
        return mutate(ctx, req, lambda scope: fn(ctx, req, scope))

    run.__name__ = run.__qualname__ = f"mutate({fn.__qualname__})"
    return run


def call(
    principal: Principal,
    op_name: str,
    request: Mapping[str, Any],
    negotiated: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Run an op in-process, past the HTTP edge but through the same admission (storability,
    capability, schema, grammar): the console, management commands and benchmarks use this,
    never a shortcut. Typed callers use `memory.ops.port.InProcessMemoryPort` over it."""
    negotiated = negotiated or tuple(_all_served())
    admit(op_name, request, negotiated)
    answer: dict[str, Any] = HANDLERS[op_name](
        OpContext(principal=principal, op=op_name, negotiated=negotiated), request
    )
    return answer


def _all_served() -> list[str]:
    from django.conf import settings

    return list(settings.SPOKE_MEMORY_SERVED_CAPABILITIES)
