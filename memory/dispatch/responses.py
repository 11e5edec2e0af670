"""The wire's responses: JSON bodies, the error envelope (the one mapping of WireError to HTTP),
internal errors and outages, and the GET-only wrapper of the discovery and health endpoints."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from ulid import ULID

from memory.outage import unavailable
from memory.wire.errors import InternalError, MethodNotAllowed, WireError

log = logging.getLogger("memory.dispatch")


def json_bytes(payload: Mapping[str, Any]) -> bytes:
    """An answer's body as the API serves it (compact JSON, UTF-8)."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def json_response(
    payload: Mapping[str, Any], status: int = 200, headers: Mapping[str, str] | None = None
) -> HttpResponse:
    response = HttpResponse(json_bytes(payload), status=status, content_type="application/json")
    for k, v in (headers or {}).items():
        response[k] = v
    return response


def error_response(err: WireError) -> HttpResponse:
    return json_response(err.envelope(), status=err.status, headers=err.headers)


def internal_error(exc: BaseException) -> HttpResponse:
    request_id = f"req_{ULID()}"
    # The request id ties the log line to the client's report; the exception type and trace go
    # to the log, never request content or stored memory content.
    log.error("internal error %s: %s", request_id, type(exc).__name__, exc_info=exc)
    err = InternalError("An internal error occurred.", request_id=request_id)
    return error_response(err)


def outage(exc: BaseException) -> HttpResponse:
    """The database went away under the request (docs/decisions/database-unavailable.md).
    Any transaction was already rolled back by its atomic block (or the connection dropped,
    which rolls it back on the server); Django discards the broken connection at the end of
    the request and the next one reconnects."""
    log.warning("database unavailable: %s", type(exc.__cause__ or exc).__name__)
    return error_response(unavailable())


def wire_get(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A GET-only endpoint whose other methods answer the JSON 405 envelope (no CSRF: it reads)."""

    @csrf_exempt
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method not in ("GET", "HEAD"):
            return error_response(MethodNotAllowed("Only GET is allowed here."))
        return view(request, *args, **kwargs)

    return wrapped
