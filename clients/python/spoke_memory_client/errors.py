"""Errors: every error answer of the wire raises `SpokeError` (`.code`, `.status`, `.message`,
`.details`), as the subclass named after its code (SPEC §1.5), so callers can catch
`RevisionConflict` or `NotFound` alone. Messages come from the provider and never hold content."""

from __future__ import annotations

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


# Dispatch-layer codes (lower case).
class UnknownOp(SpokeError):
    code = "unknown_op"


class MethodNotAllowed(SpokeError):
    code = "method_not_allowed"


class Unauthenticated(SpokeError):
    code = "unauthenticated"


class SessionInvalid(SpokeError):
    code = "session_invalid"


class PayloadTooLarge(SpokeError):
    code = "payload_too_large"


class CapabilityMissing(SpokeError):
    code = "capability_missing"


class BadRequest(SpokeError):
    """`400 invalid_input`: malformed JSON, schema violation (`details.errors`), unsupported
    cognition requirement."""

    code = "invalid_input"


class RateLimited(SpokeError):
    code = "rate_limited"


class InternalError(SpokeError):
    code = "internal_error"


class Unavailable(SpokeError):
    """`503 unavailable`: the provider's database or broker is unreachable (retried)."""

    code = "unavailable"


# Operations-layer codes (upper case).
class InvalidInput(SpokeError):
    """`422 INVALID_INPUT`: semantically invalid (`details.reason`, `details.field`)."""

    code = "INVALID_INPUT"


class NotFound(SpokeError):
    code = "NOT_FOUND"


class PermissionDenied(SpokeError):
    code = "PERMISSION_DENIED"


class AmplificationDenied(SpokeError):
    code = "AMPLIFICATION_DENIED"


class RevisionConflict(SpokeError):
    code = "REVISION_CONFLICT"


class SpaceFrozen(SpokeError):
    code = "SPACE_FROZEN"


class SubjectFenced(SpokeError):
    code = "SUBJECT_FENCED"


class SubjectArchived(SpokeError):
    code = "SUBJECT_ARCHIVED"


class ContextFenced(SpokeError):
    code = "CONTEXT_FENCED"


class SubjectKindConflict(SpokeError):
    code = "SUBJECT_KIND_CONFLICT"


class CandidateConsumed(SpokeError):
    code = "CANDIDATE_CONSUMED"


class RecordTombstoned(SpokeError):
    code = "RECORD_TOMBSTONED"


class GrantRevoked(SpokeError):
    code = "GRANT_REVOKED"


class IdempotencyKeyReused(SpokeError):
    code = "IDEMPOTENCY_KEY_REUSED"


class CursorInvalid(SpokeError):
    code = "CURSOR_INVALID"


class ContentTooLarge(SpokeError):
    code = "CONTENT_TOO_LARGE"


class RequiredProfileMissing(SpokeError):
    code = "REQUIRED_PROFILE_MISSING"


class InsufficientData(SpokeError):
    code = "INSUFFICIENT_DATA"


class ExportNotReady(SpokeError):
    code = "EXPORT_NOT_READY"


class ImportOrderViolation(SpokeError):
    code = "IMPORT_ORDER_VIOLATION"


class ImportStateConflict(SpokeError):
    code = "IMPORT_STATE_CONFLICT"


# Client-side: no answer arrived (connection refused, reset, timed out) after the retries.
class ConnectionFailed(SpokeError):
    code = "connection_failed"


class UnexpectedResponse(SpokeError):
    """An answer that is not the wire's (e.g. a proxy's HTML error page)."""

    code = "unexpected_response"


ERRORS: dict[str, type[SpokeError]] = {
    cls.code: cls
    for cls in (
        UnknownOp,
        MethodNotAllowed,
        Unauthenticated,
        SessionInvalid,
        PayloadTooLarge,
        CapabilityMissing,
        BadRequest,
        RateLimited,
        InternalError,
        Unavailable,
        InvalidInput,
        NotFound,
        PermissionDenied,
        AmplificationDenied,
        RevisionConflict,
        SpaceFrozen,
        SubjectFenced,
        SubjectArchived,
        ContextFenced,
        SubjectKindConflict,
        CandidateConsumed,
        RecordTombstoned,
        GrantRevoked,
        IdempotencyKeyReused,
        CursorInvalid,
        ContentTooLarge,
        RequiredProfileMissing,
        InsufficientData,
        ExportNotReady,
        ImportOrderViolation,
        ImportStateConflict,
        ConnectionFailed,
        UnexpectedResponse,
    )
}


def error_from(status: int, body: Any, retry_after: float | None = None) -> SpokeError:
    """The exception of an error answer: the class of its code, or SpokeError for a code this
    client does not know (a newer provider's)."""
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict) or not isinstance(err.get("code"), str):
        return UnexpectedResponse(
            "unexpected_response", status, f"HTTP {status} without an error envelope"
        )
    code = err["code"]
    cls = ERRORS.get(code, SpokeError)
    return cls(
        code,
        status,
        str(err.get("message", "")),
        err.get("details") if isinstance(err.get("details"), dict) else None,
        err.get("extensions") if isinstance(err.get("extensions"), dict) else None,
        retry_after,
    )
