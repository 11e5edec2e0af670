"""The base of the client's errors and the errors of the client's own making (no answer, or an
answer that is not the wire's). The class per wire code is generated into `errors.py`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class SpokeError(Exception):
    """An error answer of the provider (or `ConnectionFailed` when none arrived)."""

    code: str = ""

    def __init__(
        self,
        code: str,
        status: int | None,
        message: str,
        details: dict[str, Any] | None = None,
        extensions: dict[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message
        self.details: dict[str, Any] = details or {}
        self.extensions: dict[str, Any] = extensions or {}
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"{self.code} ({self.status}): {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, status={self.status!r}, message={self.message!r})"


# Client-side: no answer arrived (connection refused, reset, timed out) after the retries.
class ConnectionFailed(SpokeError):
    code = "connection_failed"


class UnexpectedResponse(SpokeError):
    """An answer that is not the wire's (e.g. a proxy's HTML error page)."""

    code = "unexpected_response"


def decode_error(
    table: Mapping[str, type[SpokeError]], status: int, body: Any, retry_after: float | None
) -> SpokeError:
    """The exception of an error answer: the class of its code in `table`, or SpokeError for a
    code this client does not know (a newer provider's)."""
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict) or not isinstance(err.get("code"), str):
        return UnexpectedResponse(
            "unexpected_response", status, f"HTTP {status} without an error envelope"
        )
    code = err["code"]
    cls = table.get(code, SpokeError)
    return cls(
        code,
        status,
        str(err.get("message", "")),
        err.get("details") if isinstance(err.get("details"), dict) else None,
        err.get("extensions") if isinstance(err.get("extensions"), dict) else None,
        retry_after,
    )
