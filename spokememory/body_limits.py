"""Request body bounds per route, judged from the declared Content-Length before anything reads
the body (issue 26: a 100 MiB POST to /console/login/ was read whole, as Django's own limit was
off site-wide for the wire's sake).

- `/v1/`: `limits.max_request_bytes` (SPEC §1.4 gate 3), answered `413 payload_too_large` in the
  wire's envelope; the op view's gate judges the same bound (and the bytes actually read).
- the console's import upload (`/console/s/<space>/imports/stage/`):
  SPOKE_MEMORY_MAX_IMPORT_UPLOAD_BYTES (a whole export file; the form's own check is the file's
  size within it).
- everything else (console forms, login, Django admin): SPOKE_MEMORY_MAX_FORM_BYTES.

A body without a Content-Length (chunked) is not read by Django at all: WSGI gives it none.

A refusal is answered without keeping the body. gunicorn closes a connection whose request body
was not read to its end, and a client still sending that body then sees a broken pipe instead of
the 413; so on /v1 a body up to DRAIN_FACTOR x the limit is read and discarded first (in
chunks: memory stays flat) and the 413 leaves the keep-alive connection usable for the
client's next request. A larger one, and any over-limit console form, is refused unread and the
connection closes (docs/decisions.md "Request bodies")."""

from __future__ import annotations

import re
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

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
            if request.path_info.startswith("/v1/") and declared <= DRAIN_FACTOR * limit:
                drain(request.META["wsgi.input"], declared, CHUNK)
            return too_large(request.path_info, limit)
        return self.get_response(request)


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
