"""One error type for the whole provider, mapped to the envelope of SPEC §1.5 in one place.
Messages are for people and never echo stored memory content or request content."""

from typing import Any

STATUS = {
    "unknown_op": 404,
    "method_not_allowed": 405,
    "unauthenticated": 401,
    "session_invalid": 401,
    "payload_too_large": 413,
    "capability_missing": 403,
    "invalid_input": 400,
    "rate_limited": 429,
    "internal_error": 500,
    "unavailable": 503,  # not in SPEC §1.5: the database is unreachable (memory/outage.py)
    "INVALID_INPUT": 422,
    "NOT_FOUND": 404,
    "PERMISSION_DENIED": 403,
    "AMPLIFICATION_DENIED": 403,
    "REVISION_CONFLICT": 409,
    "SPACE_FROZEN": 409,
    "SUBJECT_FENCED": 409,
    "SUBJECT_ARCHIVED": 409,
    "CONTEXT_FENCED": 409,
    "SUBJECT_KIND_CONFLICT": 409,
    "CANDIDATE_CONSUMED": 409,
    "RECORD_TOMBSTONED": 409,
    "GRANT_REVOKED": 409,
    "IDEMPOTENCY_KEY_REUSED": 409,
    "CURSOR_INVALID": 409,
    "CONTENT_TOO_LARGE": 413,
    "REQUIRED_PROFILE_MISSING": 409,
    "INSUFFICIENT_DATA": 409,
    "EXPORT_NOT_READY": 409,
    "IMPORT_ORDER_VIOLATION": 409,
    "IMPORT_STATE_CONFLICT": 409,
}


class WireError(Exception):
    """Raised anywhere below the edge; the dispatch turns it into `{"error": ...}`."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        if code not in STATUS:
            raise ValueError(f"unknown wire error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details
        self.headers: dict[str, str] = {}

    @property
    def status(self) -> int:
        return STATUS[self.code]

    def envelope(self) -> dict:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            err["details"] = self.details
        err["extensions"] = {}
        return {"error": err}


def not_found(resource: str) -> WireError:
    return WireError(
        "NOT_FOUND",
        f"No such {resource.replace('_', ' ')} is visible to the caller.",
        resource=resource,
    )


def permission_denied(capability: str) -> WireError:
    return WireError(
        "PERMISSION_DENIED",
        f"No effective grant gives the caller '{capability}' on this object.",
        capability=capability,
    )


def invalid(reason: str, field: str, message: str, **details: Any) -> WireError:
    return WireError("INVALID_INPUT", message, reason=reason, field=field, **details)
