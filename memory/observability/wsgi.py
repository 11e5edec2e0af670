"""The web process's outermost WSGI layer (spokememory/wsgi.py): for every request, REST, MCP,
console or static alike, a request id (the caller's `X-Request-ID` when it is a short token, else
a new one; answered in `X-Request-ID`), the in-flight gauge, the count and duration by route
class and status, and, in the JSON log format, one `memory.http` line. With tracing on
(`tracing.py`), OpenTelemetry's WSGI middleware runs inside it: it honours a W3C `traceparent`
on every path, /mcp/ included.

A route class is a bounded name, never the caller's path: the op's name for /v1/ops/<op> when
the catalog has it, else a fixed class (`mcp`, `console`, `static`, ...)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from memory.observability import metrics
from memory.observability.context import REQUEST_ID, request_id_from

log = logging.getLogger("memory.http")

_PREFIXES = (
    ("/v1/connect", "connect"),
    ("/v1/disconnect", "disconnect"),
    ("/v1/", "discovery"),
    ("/mcp", "mcp"),
    ("/console/", "console"),
    ("/admin/", "admin"),
    ("/static/", "static"),
    ("/healthz", "healthz"),
    ("/readyz", "readyz"),
    ("/metrics", "metrics"),
)


def route_of(path: str) -> str:
    if path.startswith("/v1/ops/"):
        from memory.wire.validation import catalog

        op = path[len("/v1/ops/") :]
        return op if op in catalog().ops else "unknown_op"
    for prefix, name in _PREFIXES:
        if path.startswith(prefix):
            return name
    return "home" if path == "/" else "other"


def observe_wsgi(app: Callable[..., Any]) -> Callable[..., Any]:
    from memory.observability import tracing

    inner = tracing.wrap_wsgi(app)

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        rid = request_id_from(environ.get("HTTP_X_REQUEST_ID"))
        environ["HTTP_X_REQUEST_ID"] = rid
        token = REQUEST_ID.set(rid)
        route = route_of(environ.get("PATH_INFO", ""))
        status = ["000"]
        started = time.perf_counter()
        metrics.IN_FLIGHT.inc()

        def start(code: str, headers: list[Any], exc_info: Any = None) -> Any:
            if status[0] == "000":
                # counted before a byte of the answer leaves: a client's next request (a
                # scrape) sees it
                metrics.HTTP_REQUESTS.labels(route=route, code=code[:3]).inc()
            status[0] = code[:3]
            headers = [h for h in headers if h[0].lower() != "x-request-id"]
            headers.append(("X-Request-ID", rid))
            return start_response(code, headers, exc_info)

        def done(code: str) -> None:
            try:
                _done(route, code, started)
            finally:
                REQUEST_ID.reset(token)

        try:
            body = inner(environ, start)
        except BaseException:
            if status[0] == "000":
                metrics.HTTP_REQUESTS.labels(route=route, code="500").inc()
            done("500")
            raise
        # The request id stays current until the server closes the answer: a streamed answer
        # (/mcp/) runs its op while the server iterates it.
        return _Closing(body, lambda: done(status[0]))

    return application


def _done(route: str, code: str, started: float) -> None:
    elapsed = time.perf_counter() - started
    metrics.IN_FLIGHT.dec()
    metrics.HTTP_DURATION.labels(route=route).observe(elapsed)
    log.info(
        "http %s %s %.1fms",
        route,
        code,
        elapsed * 1000,
        extra={"route": route, "status": int(code), "duration_ms": round(elapsed * 1000, 3)},
    )


class _Closing:
    """The answer's iterable, with `done` run once when the server closes it (after the last
    byte), as PEP 3333 promises; the request id is current while the body is produced."""

    def __init__(self, body: Iterable[bytes], done: Callable[[], None]) -> None:
        self._body = body
        self._done: Callable[[], None] | None = done

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._body)

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            done, self._done = self._done, None
            if done is not None:
                done()
