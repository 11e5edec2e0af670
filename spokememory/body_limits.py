"""Request body bounds per route, judged from the declared Content-Length before anything reads
the body (issue 26: a 100 MiB POST to /console/login/ was read whole, as Django's own limit was
off site-wide for the wire's sake).

- `/v1/`: `limits.max_request_bytes` (docs/protocol.md#dispatch gate 3), answered `413 payload_too_large` in the
  wire's envelope to an authenticated caller, `401` to any other (authentication is gate 2);
  the op view's gate judges the same bound (and the bytes actually read).
- the console's import upload (`/console/s/<space>/imports/stage/`):
  SPOKE_MEMORY_MAX_IMPORT_UPLOAD_BYTES (a whole export file; the form's own check is the file's
  size within it).
- `/mcp/`: the MCP transport's bound (memory/mcp/http.py `max_body`), answered as a plain 413.
- everything else (console forms, login, Django admin): SPOKE_MEMORY_MAX_FORM_BYTES.

A body without a Content-Length (chunked) is not read by Django at all: WSGI gives it none.

A refusal is answered without keeping the body. gunicorn closes a connection whose request body
was not read to its end, and a client still sending that body then sees a broken pipe instead of
the 413; so on /v1 a body up to DRAIN_FACTOR x the limit is read and discarded first (in
chunks: memory stays flat) and the 413 leaves the keep-alive connection usable for the
client's next request. A larger one, and any over-limit console form, is refused unread and the
connection closes (docs/decisions/request-bodies.md)."""

from __future__ import annotations

import re
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from memory.dispatch import auth
from memory.dispatch.responses import error_response
from memory.dispatch.views import declared_length, drain
from memory.observability import metrics
from memory.wire.errors import WireError

DRAIN_FACTOR = 8
CHUNK = 65_536
IMPORT_UPLOAD = re.compile(r"^/console/s/[^/]+/imports/stage/$")


def limit_for(path: str) -> int:
    if path.startswith("/v1/"):
        return settings.SPOKE_MEMORY_LIMITS["max_request_bytes"]
    if path.startswith("/mcp/"):
        from memory.mcp.http import max_body

        return max_body()  # the MCP transport's own bound, judged here before anything reads
    if IMPORT_UPLOAD.match(path):
        return settings.SPOKE_MEMORY_MAX_IMPORT_UPLOAD_BYTES
    return settings.SPOKE_MEMORY_MAX_FORM_BYTES


class BodyLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = limit_for(request.path_info)
        declared = declared_length(request)
        if declared > limit:
            wire = request.path_info.startswith("/v1/")
            if wire and declared <= DRAIN_FACTOR * limit:
                drain(request.META["wsgi.input"], declared, CHUNK)
            if wire:
                # docs/protocol.md#dispatch's order: authentication (401) before the body (413), both judged
                # from the headers: an unauthenticated caller learns nothing of the body gate.
                refused = unauthenticated(request)
                if refused is not None:
                    return error_response(refused)
            return too_large(request.path_info, limit)
        return self.get_response(request)


def unauthenticated(request: HttpRequest) -> WireError | None:
    """The 401 of a request whose Authorization header names no valid token, else None (a
    database that cannot be asked leaves the 413 to answer)."""
    try:
        auth.principal_for_header(request.META.get("HTTP_AUTHORIZATION"))
    except WireError as err:
        return err
    except Exception:  # noqa: BLE001 - the token cannot be judged: the size refusal stands
        return None
    return None


def too_large(path: str, limit: int) -> HttpResponse:
    metrics.refused("body_size")
    if path.startswith("/v1/"):
        return error_response(
            WireError(
                "payload_too_large",
                "The request body is larger than limits.max_request_bytes.",
                limit=limit,
            )
        )
    return HttpResponse(
        f"Request body too large (the limit here is {limit} bytes).\n",
        status=413,
        content_type="text/plain; charset=utf-8",
    )
