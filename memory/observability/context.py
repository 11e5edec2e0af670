"""The request's identity for logs and traces, carried in context variables: the request id
(the caller's `X-Request-ID` when it is a short token, else one made here), and, once an op
runs, its principal id, space and op. Nothing here holds content, a token or a body."""

from __future__ import annotations

import re
from contextvars import ContextVar

from ulid import ULID

REQUEST_ID: ContextVar[str | None] = ContextVar("spoke_request_id", default=None)
PRINCIPAL_ID: ContextVar[str | None] = ContextVar("spoke_principal_id", default=None)
SPACE_ID: ContextVar[str | None] = ContextVar("spoke_space_id", default=None)
OP: ContextVar[str | None] = ContextVar("spoke_op", default=None)

# A caller's request id is kept only when it is a short token (no spaces, quotes or controls):
# it is echoed in the X-Request-ID header and written to logs.
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def request_id_from(header: str | None) -> str:
    if header and _REQUEST_ID.fullmatch(header):
        return header
    return f"req_{ULID()}"
