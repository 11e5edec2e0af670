/**
 * One `SpokeError` subclass per error code of the wire (SPEC §1.5), so a caller can catch
 * `RevisionConflict` or `NotFound` alone, with its `details` typed as the contract gives
 * them; `ERRORS` maps a code to its class.
 */
import { SpokeError } from "./spoke-error.js";
/** `404 unknown_op`. */
export declare class UnknownOp extends SpokeError {
    static readonly code = "unknown_op";
    static readonly status = 404;
    readonly code: "unknown_op";
}
/** `405 method_not_allowed`. */
export declare class MethodNotAllowed extends SpokeError {
    static readonly code = "method_not_allowed";
    static readonly status = 405;
    readonly code: "method_not_allowed";
}
/** `401 unauthenticated`. */
export declare class Unauthenticated extends SpokeError {
    static readonly code = "unauthenticated";
    static readonly status = 401;
    readonly code: "unauthenticated";
}
/** `401 session_invalid`. */
export declare class SessionInvalid extends SpokeError {
    static readonly code = "session_invalid";
    static readonly status = 401;
    readonly code: "session_invalid";
}
/** `413 payload_too_large`. */
export declare class PayloadTooLarge extends SpokeError {
    static readonly code = "payload_too_large";
    static readonly status = 413;
    readonly code: "payload_too_large";
}
/** `403 capability_missing`. */
export declare class CapabilityMissing extends SpokeError {
    static readonly code = "capability_missing";
    static readonly status = 403;
    readonly code: "capability_missing";
}
/** `400 invalid_input`: malformed JSON, a schema violation (`details.errors`), an unsupported cognition requirement. */
export declare class BadRequest extends SpokeError {
    static readonly code = "invalid_input";
    static readonly status = 400;
    readonly code: "invalid_input";
}
/** `429 rate_limited`: too many requests (retried, honouring Retry-After). */
export declare class RateLimited extends SpokeError {
    static readonly code = "rate_limited";
    static readonly status = 429;
    readonly code: "rate_limited";
}
/** `500 internal_error`. */
export declare class InternalError extends SpokeError {
    static readonly code = "internal_error";
    static readonly status = 500;
    readonly code: "internal_error";
}
/** `503 unavailable`: the provider's database or broker is unreachable (retried). */
export declare class Unavailable extends SpokeError {
    static readonly code = "unavailable";
    static readonly status = 503;
    readonly code: "unavailable";
}
/** `422 INVALID_INPUT`: semantically invalid (`details.reason`, `details.field`). */
export declare class InvalidInput extends SpokeError {
    static readonly code = "INVALID_INPUT";
    static readonly status = 422;
    readonly code: "INVALID_INPUT";
}
/** `404 NOT_FOUND`. */
export declare class NotFound extends SpokeError {
    static readonly code = "NOT_FOUND";
    static readonly status = 404;
    readonly code: "NOT_FOUND";
}
/** `403 PERMISSION_DENIED`. */
export declare class PermissionDenied extends SpokeError {
    static readonly code = "PERMISSION_DENIED";
    static readonly status = 403;
    readonly code: "PERMISSION_DENIED";
}
/** `403 AMPLIFICATION_DENIED`. */
export declare class AmplificationDenied extends SpokeError {
    static readonly code = "AMPLIFICATION_DENIED";
    static readonly status = 403;
    readonly code: "AMPLIFICATION_DENIED";
}
/** `409 REVISION_CONFLICT`: `expected_revision` is stale (`details.current_revision`). */
export declare class RevisionConflict extends SpokeError {
    static readonly code = "REVISION_CONFLICT";
    static readonly status = 409;
    readonly code: "REVISION_CONFLICT";
}
/** `409 SPACE_FROZEN`. */
export declare class SpaceFrozen extends SpokeError {
    static readonly code = "SPACE_FROZEN";
    static readonly status = 409;
    readonly code: "SPACE_FROZEN";
}
/** `409 SUBJECT_FENCED`. */
export declare class SubjectFenced extends SpokeError {
    static readonly code = "SUBJECT_FENCED";
    static readonly status = 409;
    readonly code: "SUBJECT_FENCED";
}
/** `409 SUBJECT_ARCHIVED`. */
export declare class SubjectArchived extends SpokeError {
    static readonly code = "SUBJECT_ARCHIVED";
    static readonly status = 409;
    readonly code: "SUBJECT_ARCHIVED";
}
/** `409 CONTEXT_FENCED`. */
export declare class ContextFenced extends SpokeError {
    static readonly code = "CONTEXT_FENCED";
    static readonly status = 409;
    readonly code: "CONTEXT_FENCED";
}
/** `409 SUBJECT_KIND_CONFLICT`. */
export declare class SubjectKindConflict extends SpokeError {
    static readonly code = "SUBJECT_KIND_CONFLICT";
    static readonly status = 409;
    readonly code: "SUBJECT_KIND_CONFLICT";
}
/** `409 CANDIDATE_CONSUMED`. */
export declare class CandidateConsumed extends SpokeError {
    static readonly code = "CANDIDATE_CONSUMED";
    static readonly status = 409;
    readonly code: "CANDIDATE_CONSUMED";
}
/** `409 RECORD_TOMBSTONED`. */
export declare class RecordTombstoned extends SpokeError {
    static readonly code = "RECORD_TOMBSTONED";
    static readonly status = 409;
    readonly code: "RECORD_TOMBSTONED";
}
/** `409 GRANT_REVOKED`. */
export declare class GrantRevoked extends SpokeError {
    static readonly code = "GRANT_REVOKED";
    static readonly status = 409;
    readonly code: "GRANT_REVOKED";
}
/** `409 IDEMPOTENCY_KEY_REUSED`. */
export declare class IdempotencyKeyReused extends SpokeError {
    static readonly code = "IDEMPOTENCY_KEY_REUSED";
    static readonly status = 409;
    readonly code: "IDEMPOTENCY_KEY_REUSED";
}
/** `409 CURSOR_INVALID`. */
export declare class CursorInvalid extends SpokeError {
    static readonly code = "CURSOR_INVALID";
    static readonly status = 409;
    readonly code: "CURSOR_INVALID";
}
/** `413 CONTENT_TOO_LARGE`. */
export declare class ContentTooLarge extends SpokeError {
    static readonly code = "CONTENT_TOO_LARGE";
    static readonly status = 413;
    readonly code: "CONTENT_TOO_LARGE";
}
/** `409 REQUIRED_PROFILE_MISSING`. */
export declare class RequiredProfileMissing extends SpokeError {
    static readonly code = "REQUIRED_PROFILE_MISSING";
    static readonly status = 409;
    readonly code: "REQUIRED_PROFILE_MISSING";
}
/** `409 INSUFFICIENT_DATA`. */
export declare class InsufficientData extends SpokeError {
    static readonly code = "INSUFFICIENT_DATA";
    static readonly status = 409;
    readonly code: "INSUFFICIENT_DATA";
}
/** `409 EXPORT_NOT_READY`. */
export declare class ExportNotReady extends SpokeError {
    static readonly code = "EXPORT_NOT_READY";
    static readonly status = 409;
    readonly code: "EXPORT_NOT_READY";
}
/** `409 IMPORT_ORDER_VIOLATION`. */
export declare class ImportOrderViolation extends SpokeError {
    static readonly code = "IMPORT_ORDER_VIOLATION";
    static readonly status = 409;
    readonly code: "IMPORT_ORDER_VIOLATION";
}
/** `409 IMPORT_STATE_CONFLICT`. */
export declare class ImportStateConflict extends SpokeError {
    static readonly code = "IMPORT_STATE_CONFLICT";
    static readonly status = 409;
    readonly code: "IMPORT_STATE_CONFLICT";
}
/** The class of each code: the wire's, then the client's own (no answer, not the wire's). */
export declare const ERRORS: {
    readonly [code: string]: typeof SpokeError;
};
