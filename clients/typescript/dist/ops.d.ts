/**
 * The op methods of MemoryClient: one per op, named after it, taking the request and
 * returning the answer; `iter` on the list ops follows their cursors.
 */
import { ReceiptsWait, type Caller } from "./receipts-wait.js";
import type { CallOptions, CandidatesDismissRequest, CandidatesDismissResponse, CandidatesGetRequest, CandidatesGetResponse, CandidatesListRequest, CandidatesListResponse, CandidatesPort, CandidatesReviewRequest, CandidatesReviewResponse, CaptureRequest, CaptureResponse, DescribeRequest, DescribeResponse, ExportsCreateRequest, ExportsCreateResponse, ExportsGetRequest, ExportsGetResponse, ExportsPort, GrantsGrantRequest, GrantsGrantResponse, GrantsListRequest, GrantsListResponse, GrantsPort, GrantsRevokeRequest, GrantsRevokeResponse, ImportsActivateRequest, ImportsActivateResponse, ImportsDiscardRequest, ImportsDiscardResponse, ImportsPort, ImportsStageRequest, ImportsStageResponse, MemoryCandidate, MemoryGrant, MemoryPort, ProfileGetRequest, ProfileGetResponse, ProfilePort, ProfileUpdateRequest, ProfileUpdateResponse, RecallRequest, RecallResponse, ReceiptsGetRequest, ReceiptsGetResponse, ReceiptsPort, RecordsCreateRequest, RecordsCreateResponse, RecordsDeleteRequest, RecordsDeleteResponse, RecordsGetRequest, RecordsGetResponse, RecordsListRequest, RecordsListResponse, RecordsPort, RecordsPromoteRequest, RecordsPromoteResponse, RecordsUpdateRequest, RecordsUpdateResponse, Reflection, ReflectionsGenerateRequest, ReflectionsGenerateResponse, ReflectionsListRequest, ReflectionsListResponse, ReflectionsPort, ReflectionsStateRequest, ReflectionsStateResponse, RetainedRecord, SpacesFreezeRequest, SpacesFreezeResponse, SpacesListRequest, SpacesListResponse, SpacesPort, SpacesUnfreezeRequest, SpacesUnfreezeResponse, SubjectsEnsureRequest, SubjectsEnsureResponse, SubjectsFenceRequest, SubjectsFenceResponse, SubjectsGetRequest, SubjectsGetResponse, SubjectsPort } from "./types.js";
/** memory.candidates.* */
export declare class CandidatesOps implements CandidatesPort {
    #private;
    constructor(caller: Caller);
    /** memory.candidates.dismiss: Consume a candidate without a review decision. Rejects with NotFound, PermissionDenied, SpaceFrozen, SubjectFenced, SubjectArchived, ContextFenced, CandidateConsumed, IdempotencyKeyReused. */
    dismiss(request: CandidatesDismissRequest, options?: CallOptions): Promise<CandidatesDismissResponse>;
    /** memory.candidates.get: One candidate. Rejects with NotFound. */
    get(request: CandidatesGetRequest, options?: CallOptions): Promise<CandidatesGetResponse>;
    /** memory.candidates.list: Pending and consumed candidates by capture placement and label, oldest (or newest) first, with total_authorized. Rejects with InvalidInput, NotFound, PermissionDenied, CursorInvalid. */
    list(request: CandidatesListRequest, options?: CallOptions): Promise<CandidatesListResponse>;
    /** Every candidate of memory.candidates.list, page after page (follows next_cursor). */
    iter(request: Omit<CandidatesListRequest, "cursor">, options?: CallOptions): AsyncGenerator<MemoryCandidate, void, undefined>;
    /** memory.candidates.review: Promote, fragment or drop a candidate: the only candidate-to-record path. Rejects with InvalidInput, NotFound, PermissionDenied, SpaceFrozen, SubjectFenced, SubjectArchived, ContextFenced, CandidateConsumed, IdempotencyKeyReused, ContentTooLarge. */
    review(request: CandidatesReviewRequest, options?: CallOptions): Promise<CandidatesReviewResponse>;
}
/** memory.exports.* */
export declare class ExportsOps implements ExportsPort {
    #private;
    constructor(caller: Caller);
    /** memory.exports.create: Produce a chunked logical export (answers pending). Rejects with InvalidInput, NotFound, PermissionDenied, IdempotencyKeyReused. */
    create(request: ExportsCreateRequest, options?: CallOptions): Promise<ExportsCreateResponse>;
    /** memory.exports.get: Fetch one export chunk with its bundle. Rejects with InvalidInput, NotFound, PermissionDenied, ExportNotReady. */
    get(request: ExportsGetRequest, options?: CallOptions): Promise<ExportsGetResponse>;
}
/** memory.grants.* */
export declare class GrantsOps implements GrantsPort {
    #private;
    constructor(caller: Caller);
    /** memory.grants.grant: Issue a grant within the issuer's own coverage. Rejects with InvalidInput, NotFound, PermissionDenied, AmplificationDenied, SpaceFrozen, IdempotencyKeyReused. */
    grant(request: GrantsGrantRequest, options?: CallOptions): Promise<GrantsGrantResponse>;
    /** memory.grants.list: Grants in a space: the admin view or the caller's own. Rejects with NotFound, PermissionDenied, CursorInvalid. */
    list(request: GrantsListRequest, options?: CallOptions): Promise<GrantsListResponse>;
    /** Every grant of memory.grants.list, page after page (follows next_cursor). */
    iter(request: Omit<GrantsListRequest, "cursor">, options?: CallOptions): AsyncGenerator<MemoryGrant, void, undefined>;
    /** memory.grants.revoke: Terminally revoke a grant. Rejects with NotFound, PermissionDenied, SpaceFrozen, GrantRevoked, IdempotencyKeyReused. */
    revoke(request: GrantsRevokeRequest, options?: CallOptions): Promise<GrantsRevokeResponse>;
}
/** memory.imports.* */
export declare class ImportsOps implements ImportsPort {
    #private;
    constructor(caller: Caller);
    /** memory.imports.activate: Atomic visibility flip to a verified import; bumps authority_generation (answers pending). Rejects with NotFound, PermissionDenied, IdempotencyKeyReused, ImportStateConflict. */
    activate(request: ImportsActivateRequest, options?: CallOptions): Promise<ImportsActivateResponse>;
    /** memory.imports.discard: Pre-activation rollback of staged data. Rejects with NotFound, PermissionDenied, IdempotencyKeyReused, ImportStateConflict. */
    discard(request: ImportsDiscardRequest, options?: CallOptions): Promise<ImportsDiscardResponse>;
    /** memory.imports.stage: Stage export chunks in strict ordinal order; the final chunk is verified (answers pending). Rejects with InvalidInput, NotFound, PermissionDenied, IdempotencyKeyReused, ContentTooLarge, ImportOrderViolation, ImportStateConflict. */
    stage(request: ImportsStageRequest, options?: CallOptions): Promise<ImportsStageResponse>;
}
/** memory.profile.* */
export declare class ProfileOps implements ProfilePort {
    #private;
    constructor(caller: Caller);
    /** memory.profile.get: Authored profile documents; absent kinds are an honest empty. Rejects with NotFound, PermissionDenied. */
    get(request: ProfileGetRequest, options?: CallOptions): Promise<ProfileGetResponse>;
    /** memory.profile.update: Create or update an authored profile document. Rejects with NotFound, PermissionDenied, RevisionConflict, SpaceFrozen, SubjectFenced, SubjectArchived, IdempotencyKeyReused, ContentTooLarge. */
    update(request: ProfileUpdateRequest, options?: CallOptions): Promise<ProfileUpdateResponse>;
}
/** memory.receipts.* */
export declare class ReceiptsOps extends ReceiptsWait implements ReceiptsPort {
    #private;
    constructor(caller: Caller);
    /** memory.receipts.get: Poll a receipt, or resolve an uncertain outcome by (space_id, op, idempotency_key). Rejects with NotFound. */
    get(request?: ReceiptsGetRequest, options?: CallOptions): Promise<ReceiptsGetResponse>;
}
/** memory.records.* */
export declare class RecordsOps implements RecordsPort {
    #private;
    constructor(caller: Caller);
    /** memory.records.create: Direct authored write of a record. Rejects with InvalidInput, NotFound, PermissionDenied, SpaceFrozen, SubjectFenced, SubjectArchived, ContextFenced, IdempotencyKeyReused, ContentTooLarge. */
    create(request: RecordsCreateRequest, options?: CallOptions): Promise<RecordsCreateResponse>;
    /** memory.records.delete: Erase a record's content and keep a tombstone. Rejects with NotFound, PermissionDenied, RevisionConflict, SpaceFrozen, SubjectFenced, SubjectArchived, ContextFenced, RecordTombstoned, IdempotencyKeyReused. */
    delete(request: RecordsDeleteRequest, options?: CallOptions): Promise<RecordsDeleteResponse>;
    /** memory.records.get: One retained record, tombstoned ones included. Rejects with NotFound. */
    get(request: RecordsGetRequest, options?: CallOptions): Promise<RecordsGetResponse>;
    /** memory.records.list: Records by selection and filters, newest first, with total_authorized. Rejects with InvalidInput, NotFound, PermissionDenied, CursorInvalid. */
    list(request: RecordsListRequest, options?: CallOptions): Promise<RecordsListResponse>;
    /** Every record of memory.records.list, page after page (follows next_cursor). */
    iter(request: Omit<RecordsListRequest, "cursor">, options?: CallOptions): AsyncGenerator<RetainedRecord, void, undefined>;
    /** memory.records.promote: Explicit placement change between contexts or to shared. Rejects with NotFound, PermissionDenied, RevisionConflict, SpaceFrozen, SubjectFenced, SubjectArchived, ContextFenced, RecordTombstoned, IdempotencyKeyReused. */
    promote(request: RecordsPromoteRequest, options?: CallOptions): Promise<RecordsPromoteResponse>;
    /** memory.records.update: Update a record's content or kind (placement changes use promote). Rejects with InvalidInput, NotFound, PermissionDenied, RevisionConflict, SpaceFrozen, SubjectFenced, SubjectArchived, ContextFenced, RecordTombstoned, IdempotencyKeyReused, ContentTooLarge. */
    update(request: RecordsUpdateRequest, options?: CallOptions): Promise<RecordsUpdateResponse>;
}
/** memory.reflections.* */
export declare class ReflectionsOps implements ReflectionsPort {
    #private;
    constructor(caller: Caller);
    /** memory.reflections.generate: Explicit, cost-bearing generation over a pinned basis (answers pending). Rejects with InvalidInput, NotFound, PermissionDenied, SpaceFrozen, SubjectFenced, SubjectArchived, IdempotencyKeyReused, RequiredProfileMissing, InsufficientData. */
    generate(request: ReflectionsGenerateRequest, options?: CallOptions): Promise<ReflectionsGenerateResponse>;
    /** memory.reflections.list: Reflections whose pinned filter equals the request's, newest first. Rejects with InvalidInput, NotFound, PermissionDenied, CursorInvalid. */
    list(request: ReflectionsListRequest, options?: CallOptions): Promise<ReflectionsListResponse>;
    /** Every reflection of memory.reflections.list, page after page (follows next_cursor). */
    iter(request: Omit<ReflectionsListRequest, "cursor">, options?: CallOptions): AsyncGenerator<Reflection, void, undefined>;
    /** memory.reflections.state: Current basis digest, staleness, data sufficiency and missing required kinds. Rejects with InvalidInput, NotFound, PermissionDenied. */
    state(request: ReflectionsStateRequest, options?: CallOptions): Promise<ReflectionsStateResponse>;
}
/** memory.spaces.* */
export declare class SpacesOps implements SpacesPort {
    #private;
    constructor(caller: Caller);
    /** memory.spaces.freeze: Freeze a space for maintenance or migration. Rejects with NotFound, PermissionDenied, SpaceFrozen, IdempotencyKeyReused. */
    freeze(request: SpacesFreezeRequest, options?: CallOptions): Promise<SpacesFreezeResponse>;
    /** memory.spaces.list: Spaces where the caller holds an effective grant, with pending_receipts. */
    list(request?: SpacesListRequest, options?: CallOptions): Promise<SpacesListResponse>;
    /** memory.spaces.unfreeze: Re-open a frozen space. Rejects with NotFound, PermissionDenied, IdempotencyKeyReused. */
    unfreeze(request: SpacesUnfreezeRequest, options?: CallOptions): Promise<SpacesUnfreezeResponse>;
}
/** memory.subjects.* */
export declare class SubjectsOps implements SubjectsPort {
    #private;
    constructor(caller: Caller);
    /** memory.subjects.ensure: Idempotent get-or-create of a subject. Rejects with InvalidInput, NotFound, PermissionDenied, SpaceFrozen, SubjectKindConflict, IdempotencyKeyReused. */
    ensure(request: SubjectsEnsureRequest, options?: CallOptions): Promise<SubjectsEnsureResponse>;
    /** memory.subjects.fence: Fence, unfence or archive a subject; fence or unfence one placement context. Rejects with InvalidInput, NotFound, PermissionDenied, SpaceFrozen, SubjectArchived, IdempotencyKeyReused. */
    fence(request: SubjectsFenceRequest, options?: CallOptions): Promise<SubjectsFenceResponse>;
    /** memory.subjects.get: One subject. Rejects with NotFound. */
    get(request: SubjectsGetRequest, options?: CallOptions): Promise<SubjectsGetResponse>;
}
/** The op namespaces and the top-level ops; `MemoryClient` is this over HTTP. */
export declare class MemoryOps implements MemoryPort {
    #private;
    readonly candidates: CandidatesOps;
    readonly exports: ExportsOps;
    readonly grants: GrantsOps;
    readonly imports: ImportsOps;
    readonly profile: ProfileOps;
    readonly receipts: ReceiptsOps;
    readonly records: RecordsOps;
    readonly reflections: ReflectionsOps;
    readonly spaces: SpacesOps;
    readonly subjects: SubjectsOps;
    constructor(caller: Caller);
    /** memory.capture: Capture raw material into pending candidates, one per item. Rejects with InvalidInput, NotFound, PermissionDenied, SpaceFrozen, SubjectFenced, SubjectArchived, ContextFenced, IdempotencyKeyReused, ContentTooLarge. */
    capture(request: CaptureRequest, options?: CallOptions): Promise<CaptureResponse>;
    /** memory.describe: Provider self-description: protocol version, served flags, limits, required profile kinds, engine policy version. */
    describe(request?: DescribeRequest, options?: CallOptions): Promise<DescribeResponse>;
    /** memory.recall: Authorized, ranked, budgeted execution-time read. Rejects with InvalidInput, NotFound, PermissionDenied. */
    recall(request: RecallRequest, options?: CallOptions): Promise<RecallResponse>;
}
