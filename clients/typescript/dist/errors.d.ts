/**
 * One `SpokeError` subclass per error code of the wire (docs/protocol.md#errors), so a caller can catch
 * `RevisionConflict` or `NotFound` alone, with its `details` typed as the contract gives
 * them; `ERRORS` maps a code to its class.
 */
import { SpokeError } from "./spoke-error.js";
export type AmplificationDeniedDetails = {
    exceeds: string[];
};
export type BadRequestDetails = {
    reason: "malformed_json" | "schema" | "unsupported_cognition_requirement";
    errors?: BadRequestDetailsErrorsItem[];
    requirement_index?: number;
};
export type BadRequestDetailsErrorsItem = {
    path: string;
    message: string;
};
export type CapabilityMissingDetails = {
    required: string;
    negotiated: string[];
};
export type ContentTooLargeDetails = {
    limit: number;
    size: number;
    field?: string;
    item_index?: number;
    fragment_index?: number;
};
export type ContextFencedDetails = {
    context_id: string;
};
export type ExportNotReadyDetails = {
    state: string;
};
export type IdempotencyKeyReusedDetails = {
    receipt_id: string;
};
export type ImportOrderViolationDetails = {
    expected_ordinal: number;
};
export type ImportStateConflictDetails = {
    state: string;
};
export type InsufficientDataDetails = {
    record_count?: number;
    minimum_records?: number;
};
export type InternalErrorDetails = {
    request_id?: string;
};
export type InvalidInputDetails = {
    reason: string;
    field: string;
    [key: string]: unknown;
};
export type NotFoundDetails = {
    resource: string;
};
export type PayloadTooLargeDetails = {
    limit: number;
};
export type PermissionDeniedDetails = {
    capability: string;
};
export type RequiredProfileMissingDetails = {
    missing_kinds: string[];
};
export type RevisionConflictDetails = {
    current_revision: number;
};
export type SpaceFrozenDetails = {
    reason?: "import_activating";
};
export type SubjectKindConflictDetails = {
    current_kind: string | null;
};
export type UnavailableDetails = {
    outcome?: "unknown";
};
export type UnknownOpDetails = {
    op?: string;
};
/** `404 unknown_op`: No such op, or an op of the contract this provider build does not serve. */
export declare class UnknownOp extends SpokeError {
    static readonly code = "unknown_op";
    static readonly status = 404;
    readonly code: "unknown_op";
    readonly details: UnknownOpDetails;
}
/** `405 method_not_allowed`: Not POST. */
export declare class MethodNotAllowed extends SpokeError {
    static readonly code = "method_not_allowed";
    static readonly status = 405;
    readonly code: "method_not_allowed";
}
/** `401 unauthenticated`: No or bad bearer token. */
export declare class Unauthenticated extends SpokeError {
    static readonly code = "unauthenticated";
    static readonly status = 401;
    readonly code: "unauthenticated";
}
/** `401 session_invalid`: Bad, closed or expired Spoke-Session. */
export declare class SessionInvalid extends SpokeError {
    static readonly code = "session_invalid";
    static readonly status = 401;
    readonly code: "session_invalid";
}
/** `413 payload_too_large`: Request over limits.max_request_bytes. */
export declare class PayloadTooLarge extends SpokeError {
    static readonly code = "payload_too_large";
    static readonly status = 413;
    readonly code: "payload_too_large";
    readonly details: PayloadTooLargeDetails;
}
/** `403 capability_missing`: A flag the request needs is not negotiated or not served. */
export declare class CapabilityMissing extends SpokeError {
    static readonly code = "capability_missing";
    static readonly status = 403;
    readonly code: "capability_missing";
    readonly details: CapabilityMissingDetails;
}
/** `400 invalid_input`: Malformed JSON, schema violation (details.errors), unsupported cognition requirement (details.requirement_index). */
export declare class BadRequest extends SpokeError {
    static readonly code = "invalid_input";
    static readonly status = 400;
    readonly code: "invalid_input";
    readonly details: BadRequestDetails;
}
/** `429 rate_limited`: The caller is over its request rate (Retry-After header). */
export declare class RateLimited extends SpokeError {
    static readonly code = "rate_limited";
    static readonly status = 429;
    readonly code: "rate_limited";
}
/** `500 internal_error`: A bug: details.request_id correlates with the log, nothing else. */
export declare class InternalError extends SpokeError {
    static readonly code = "internal_error";
    static readonly status = 500;
    readonly code: "internal_error";
    readonly details: InternalErrorDetails;
}
/** `503 unavailable`: Not in docs/protocol.md#errors: the database is unreachable, or a mutation could not be ordered among the space's concurrent writers and was rolled back (memory/outage.py); details.outcome 'unknown' when a write may have committed. */
export declare class Unavailable extends SpokeError {
    static readonly code = "unavailable";
    static readonly status = 503;
    readonly code: "unavailable";
    readonly details: UnavailableDetails;
}
/** `422 INVALID_INPUT`: Semantically invalid (bad cognition record, bad selection, ordinal out of range, ...); details.reason and details.field say which. */
export declare class InvalidInput extends SpokeError {
    static readonly code = "INVALID_INPUT";
    static readonly status = 422;
    readonly code: "INVALID_INPUT";
    readonly details: InvalidInputDetails;
}
/** `404 NOT_FOUND`: Object absent or outside the caller's read coverage (indistinguishable); details.resource. */
export declare class NotFound extends SpokeError {
    static readonly code = "NOT_FOUND";
    static readonly status = 404;
    readonly code: "NOT_FOUND";
    readonly details: NotFoundDetails;
}
/** `403 PERMISSION_DENIED`: The caller sees the object but no effective grant covers this op on it; details.capability. */
export declare class PermissionDenied extends SpokeError {
    static readonly code = "PERMISSION_DENIED";
    static readonly status = 403;
    readonly code: "PERMISSION_DENIED";
    readonly details: PermissionDeniedDetails;
}
/** `403 AMPLIFICATION_DENIED`: A grant asks for more than the issuer's coverage; details.exceeds. */
export declare class AmplificationDenied extends SpokeError {
    static readonly code = "AMPLIFICATION_DENIED";
    static readonly status = 403;
    readonly code: "AMPLIFICATION_DENIED";
    readonly details: AmplificationDeniedDetails;
}
/** `409 REVISION_CONFLICT`: expected_revision differs from the current revision; details.current_revision. */
export declare class RevisionConflict extends SpokeError {
    static readonly code = "REVISION_CONFLICT";
    static readonly status = 409;
    readonly code: "REVISION_CONFLICT";
    readonly details: RevisionConflictDetails;
}
/** `409 SPACE_FROZEN`: Mutation on a frozen space, or while an import activation is pending. */
export declare class SpaceFrozen extends SpokeError {
    static readonly code = "SPACE_FROZEN";
    static readonly status = 409;
    readonly code: "SPACE_FROZEN";
    readonly details: SpaceFrozenDetails;
}
/** `409 SUBJECT_FENCED`: Write to a fenced subject. */
export declare class SubjectFenced extends SpokeError {
    static readonly code = "SUBJECT_FENCED";
    static readonly status = 409;
    readonly code: "SUBJECT_FENCED";
}
/** `409 SUBJECT_ARCHIVED`: Write to an archived subject. */
export declare class SubjectArchived extends SpokeError {
    static readonly code = "SUBJECT_ARCHIVED";
    static readonly status = 409;
    readonly code: "SUBJECT_ARCHIVED";
}
/** `409 CONTEXT_FENCED`: Write to a fenced context of the subject; details.context_id. */
export declare class ContextFenced extends SpokeError {
    static readonly code = "CONTEXT_FENCED";
    static readonly status = 409;
    readonly code: "CONTEXT_FENCED";
    readonly details: ContextFencedDetails;
}
/** `409 SUBJECT_KIND_CONFLICT`: Ensure with a kind different from the stored one; details.current_kind. */
export declare class SubjectKindConflict extends SpokeError {
    static readonly code = "SUBJECT_KIND_CONFLICT";
    static readonly status = 409;
    readonly code: "SUBJECT_KIND_CONFLICT";
    readonly details: SubjectKindConflictDetails;
}
/** `409 CANDIDATE_CONSUMED`: Review or dismiss of a candidate no longer pending. */
export declare class CandidateConsumed extends SpokeError {
    static readonly code = "CANDIDATE_CONSUMED";
    static readonly status = 409;
    readonly code: "CANDIDATE_CONSUMED";
}
/** `409 RECORD_TOMBSTONED`: Update, promote or delete of a deleted record. */
export declare class RecordTombstoned extends SpokeError {
    static readonly code = "RECORD_TOMBSTONED";
    static readonly status = 409;
    readonly code: "RECORD_TOMBSTONED";
}
/** `409 GRANT_REVOKED`: Revoke of an already revoked grant. */
export declare class GrantRevoked extends SpokeError {
    static readonly code = "GRANT_REVOKED";
    static readonly status = 409;
    readonly code: "GRANT_REVOKED";
}
/** `409 IDEMPOTENCY_KEY_REUSED`: Same idempotency key, different payload (docs/protocol.md#idempotency); details.receipt_id. */
export declare class IdempotencyKeyReused extends SpokeError {
    static readonly code = "IDEMPOTENCY_KEY_REUSED";
    static readonly status = 409;
    readonly code: "IDEMPOTENCY_KEY_REUSED";
    readonly details: IdempotencyKeyReusedDetails;
}
/** `409 CURSOR_INVALID`: Stale, foreign or tampered cursor (docs/protocol.md#cursors). */
export declare class CursorInvalid extends SpokeError {
    static readonly code = "CURSOR_INVALID";
    static readonly status = 409;
    readonly code: "CURSOR_INVALID";
}
/** `413 CONTENT_TOO_LARGE`: Content over limits.max_content_bytes (docs/protocol.md#content); details.limit and details.size. */
export declare class ContentTooLarge extends SpokeError {
    static readonly code = "CONTENT_TOO_LARGE";
    static readonly status = 413;
    readonly code: "CONTENT_TOO_LARGE";
    readonly details: ContentTooLargeDetails;
}
/** `409 REQUIRED_PROFILE_MISSING`: Reflection generation without the required profile kinds; details.missing_kinds. */
export declare class RequiredProfileMissing extends SpokeError {
    static readonly code = "REQUIRED_PROFILE_MISSING";
    static readonly status = 409;
    readonly code: "REQUIRED_PROFILE_MISSING";
    readonly details: RequiredProfileMissingDetails;
}
/** `409 INSUFFICIENT_DATA`: Reflection generation below limits.reflection_min_records. */
export declare class InsufficientData extends SpokeError {
    static readonly code = "INSUFFICIENT_DATA";
    static readonly status = 409;
    readonly code: "INSUFFICIENT_DATA";
    readonly details: InsufficientDataDetails;
}
/** `409 EXPORT_NOT_READY`: Chunk fetch of an export still pending or failed; details.state. */
export declare class ExportNotReady extends SpokeError {
    static readonly code = "EXPORT_NOT_READY";
    static readonly status = 409;
    readonly code: "EXPORT_NOT_READY";
    readonly details: ExportNotReadyDetails;
}
/** `409 IMPORT_ORDER_VIOLATION`: Chunk ordinal differs from the next expected; details.expected_ordinal. */
export declare class ImportOrderViolation extends SpokeError {
    static readonly code = "IMPORT_ORDER_VIOLATION";
    static readonly status = 409;
    readonly code: "IMPORT_ORDER_VIOLATION";
    readonly details: ImportOrderViolationDetails;
}
/** `409 IMPORT_STATE_CONFLICT`: Activate, discard or stage in the wrong import state; details.state. */
export declare class ImportStateConflict extends SpokeError {
    static readonly code = "IMPORT_STATE_CONFLICT";
    static readonly status = 409;
    readonly code: "IMPORT_STATE_CONFLICT";
    readonly details: ImportStateConflictDetails;
}
/** The class of each code: the wire's, then the client's own (no answer, not the wire's). */
export declare const ERRORS: {
    readonly [code: string]: typeof SpokeError;
};
