"""The one wrapper every op's handler runs in (memory/ops/base.py `register` installs it, so
REST, MCP and in-process callers alike are counted): the op's span `memory.<op>` (a no-op
unless tracing is configured, `tracing.py`), its count and duration by outcome, a recall's result
count and top score, and one log line (`memory.ops`, shown in the JSON log format: `logs.py`).

The outcome is `ok` for an answer, the wire error code for a WireError, `unavailable` for a
database outage, `internal_error` for anything else: a bounded set, never a caller's string."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from opentelemetry import trace

from memory.observability import metrics
from memory.observability.context import OP, PRINCIPAL_ID, SPACE_ID

log = logging.getLogger("memory.ops")
tracer = trace.get_tracer("spoke-memory")


def _outcome(exc: BaseException) -> str:
    code = getattr(exc, "code", None)
    if isinstance(code, str) and code:
        return code  # a WireError's code (memory/wire/error_codes.py: a fixed set)
    from memory.outage import is_outage

    return "unavailable" if is_outage(exc) else "internal_error"


def _space_of(request: Mapping[str, Any]) -> str | None:
    space = request.get("space_id") if isinstance(request, Mapping) else None
    return space if isinstance(space, str) and len(space) <= 128 else None


def observed(op: str, handler: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """`handler` (ctx, request) -> answer, measured as op `op`."""
    span_name = f"memory.{op.removeprefix('memory.')}"

    def run(ctx: Any, request: Any) -> Any:
        principal = getattr(getattr(ctx, "principal", None), "principal_id", None)
        space = _space_of(request)
        # The space is the caller's string until the op answers in it (absent and forbidden
        # spaces are refused alike): named in the log line and the span only on success.
        tokens = (PRINCIPAL_ID.set(principal), SPACE_ID.set(None), OP.set(op))
        outcome = "ok"
        started = time.perf_counter()
        with tracer.start_as_current_span(span_name, record_exception=False) as span:
            if span.is_recording():
                span.set_attribute("memory.operation.name", op)
            try:
                answer = handler(ctx, request)
            except BaseException as exc:
                outcome = _outcome(exc)
                if span.is_recording():
                    span.set_attribute("memory.outcome", outcome)
                    span.set_status(trace.Status(trace.StatusCode.ERROR, outcome))
                raise
            else:
                if op == "memory.recall":
                    _recall_measures(answer, span)
                if span.is_recording():
                    span.set_attribute("memory.outcome", outcome)
                    if space is not None:
                        span.set_attribute("memory.space.id", space)
                return answer
            finally:
                elapsed = time.perf_counter() - started
                if outcome == "ok":
                    SPACE_ID.set(space)
                metrics.OPERATIONS.labels(op=op, outcome=outcome).inc()
                metrics.OPERATION_DURATION.labels(op=op, outcome=outcome).observe(elapsed)
                log.info(
                    "op %s %s %.1fms",
                    op,
                    outcome,
                    elapsed * 1000,
                    extra={"outcome": outcome, "duration_ms": round(elapsed * 1000, 3)},
                )
                for var, token in zip((PRINCIPAL_ID, SPACE_ID, OP), tokens, strict=True):
                    var.reset(token)

    run.__name__ = run.__qualname__ = f"observed({getattr(handler, '__qualname__', op)})"
    run.__wrapped__ = handler  # type: ignore[attr-defined]
    return run


def _recall_measures(answer: Any, span: Any) -> None:
    try:
        results = answer["recall"]["results"]
    except (KeyError, TypeError):
        return
    metrics.RECALL_RESULTS.observe(len(results))
    if span.is_recording():
        span.set_attribute("memory.recall.results_count", len(results))
    if results:
        top = results[0].get("score")
        if isinstance(top, (int, float)):
            metrics.RECALL_TOP_SIMILARITY.observe(float(top))
            if span.is_recording():
                span.set_attribute("memory.recall.top_similarity", float(top))


def refused_at_admission(op: str, exc: BaseException) -> None:
    """Count a request admission refused (its op is one of the catalog's: admission looked it
    up before judging)."""
    metrics.ADMISSION_REFUSALS.labels(op=op, code=_outcome(exc)).inc()
