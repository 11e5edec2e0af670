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
    /** memory.candidates.dismiss: Consume a candidate without a review decision. */
    dismiss(request: CandidatesDismissRequest, options?: CallOptions): Promise<CandidatesDismissResponse>;
    /** memory.candidates.get: One candidate. */
    get(request: CandidatesGetRequest, options?: CallOptions): Promise<CandidatesGetResponse>;
    /** memory.candidates.list: Pending and consumed candidates by capture placement and label, oldest (or newest) first, with total_authorized. */
    list(request: CandidatesListRequest, options?: CallOptions): Promise<CandidatesListResponse>;
    /** Every candidate of memory.candidates.list, page after page (follows next_cursor). */
    iter(request: Omit<CandidatesListRequest, "cursor">, options?: CallOptions): AsyncGenerator<MemoryCandidate, void, undefined>;
    /** memory.candidates.review: Promote, fragment or drop a candidate: the only candidate-to-record path. */
    review(request: CandidatesReviewRequest, options?: CallOptions): Promise<CandidatesReviewResponse>;
}
/** memory.exports.* */
export declare class ExportsOps implements ExportsPort {
    #private;
    constructor(caller: Caller);
    /** memory.exports.create: Produce a chunked logical export (answers pending). */
    create(request: ExportsCreateRequest, options?: CallOptions): Promise<ExportsCreateResponse>;
    /** memory.exports.get: Fetch one export chunk with its bundle. */
    get(request: ExportsGetRequest, options?: CallOptions): Promise<ExportsGetResponse>;
}
/** memory.grants.* */
export declare class GrantsOps implements GrantsPort {
    #private;
    constructor(caller: Caller);
    /** memory.grants.grant: Issue a grant within the issuer's own coverage. */
    grant(request: GrantsGrantRequest, options?: CallOptions): Promise<GrantsGrantResponse>;
    /** memory.grants.list: Grants in a space: the admin view or the caller's own. */
    list(request: GrantsListRequest, options?: CallOptions): Promise<GrantsListResponse>;
    /** Every grant of memory.grants.list, page after page (follows next_cursor). */
    iter(request: Omit<GrantsListRequest, "cursor">, options?: CallOptions): AsyncGenerator<MemoryGrant, void, undefined>;
    /** memory.grants.revoke: Terminally revoke a grant. */
    revoke(request: GrantsRevokeRequest, options?: CallOptions): Promise<GrantsRevokeResponse>;
}
/** memory.imports.* */
export declare class ImportsOps implements ImportsPort {
    #private;
    constructor(caller: Caller);
    /** memory.imports.activate: Atomic visibility flip to a verified import; bumps authority_generation (answers pending). */
    activate(request: ImportsActivateRequest, options?: CallOptions): Promise<ImportsActivateResponse>;
    /** memory.imports.discard: Pre-activation rollback of staged data. */
    discard(request: ImportsDiscardRequest, options?: CallOptions): Promise<ImportsDiscardResponse>;
    /** memory.imports.stage: Stage export chunks in strict ordinal order; the final chunk is verified (answers pending). */
    stage(request: ImportsStageRequest, options?: CallOptions): Promise<ImportsStageResponse>;
}
/** memory.profile.* */
export declare class ProfileOps implements ProfilePort {
    #private;
    constructor(caller: Caller);
    /** memory.profile.get: Authored profile documents; absent kinds are an honest empty. */
    get(request: ProfileGetRequest, options?: CallOptions): Promise<ProfileGetResponse>;
    /** memory.profile.update: Create or update an authored profile document. */
    update(request: ProfileUpdateRequest, options?: CallOptions): Promise<ProfileUpdateResponse>;
}
/** memory.receipts.* */
export declare class ReceiptsOps extends ReceiptsWait implements ReceiptsPort {
    #private;
    constructor(caller: Caller);
    /** memory.receipts.get: Poll a receipt, or resolve an uncertain outcome by (space_id, op, idempotency_key). */
    get(request?: ReceiptsGetRequest, options?: CallOptions): Promise<ReceiptsGetResponse>;
}
/** memory.records.* */
export declare class RecordsOps implements RecordsPort {
    #private;
    constructor(caller: Caller);
    /** memory.records.create: Direct authored write of a record. */
    create(request: RecordsCreateRequest, options?: CallOptions): Promise<RecordsCreateResponse>;
    /** memory.records.delete: Erase a record's content and keep a tombstone. */
    delete(request: RecordsDeleteRequest, options?: CallOptions): Promise<RecordsDeleteResponse>;
    /** memory.records.get: One retained record, tombstoned ones included. */
    get(request: RecordsGetRequest, options?: CallOptions): Promise<RecordsGetResponse>;
    /** memory.records.list: Records by selection and filters, newest first, with total_authorized. */
    list(request: RecordsListRequest, options?: CallOptions): Promise<RecordsListResponse>;
    /** Every record of memory.records.list, page after page (follows next_cursor). */
    iter(request: Omit<RecordsListRequest, "cursor">, options?: CallOptions): AsyncGenerator<RetainedRecord, void, undefined>;
    /** memory.records.promote: Explicit placement change between contexts or to shared. */
    promote(request: RecordsPromoteRequest, options?: CallOptions): Promise<RecordsPromoteResponse>;
    /** memory.records.update: Update a record's content or kind (placement changes use promote). */
    update(request: RecordsUpdateRequest, options?: CallOptions): Promise<RecordsUpdateResponse>;
}
/** memory.reflections.* */
export declare class ReflectionsOps implements ReflectionsPort {
    #private;
    constructor(caller: Caller);
    /** memory.reflections.generate: Explicit, cost-bearing generation over a pinned basis (answers pending). */
    generate(request: ReflectionsGenerateRequest, options?: CallOptions): Promise<ReflectionsGenerateResponse>;
    /** memory.reflections.list: Reflections whose pinned filter equals the request's, newest first. */
    list(request: ReflectionsListRequest, options?: CallOptions): Promise<ReflectionsListResponse>;
    /** Every reflection of memory.reflections.list, page after page (follows next_cursor). */
    iter(request: Omit<ReflectionsListRequest, "cursor">, options?: CallOptions): AsyncGenerator<Reflection, void, undefined>;
    /** memory.reflections.state: Current basis digest, staleness, data sufficiency and missing required kinds. */
    state(request: ReflectionsStateRequest, options?: CallOptions): Promise<ReflectionsStateResponse>;
}
/** memory.spaces.* */
export declare class SpacesOps implements SpacesPort {
    #private;
    constructor(caller: Caller);
    /** memory.spaces.freeze: Freeze a space for maintenance or migration. */
    freeze(request: SpacesFreezeRequest, options?: CallOptions): Promise<SpacesFreezeResponse>;
    /** memory.spaces.list: Spaces where the caller holds an effective grant, with pending_receipts. */
    list(request?: SpacesListRequest, options?: CallOptions): Promise<SpacesListResponse>;
    /** memory.spaces.unfreeze: Re-open a frozen space. */
    unfreeze(request: SpacesUnfreezeRequest, options?: CallOptions): Promise<SpacesUnfreezeResponse>;
}
/** memory.subjects.* */
export declare class SubjectsOps implements SubjectsPort {
    #private;
    constructor(caller: Caller);
    /** memory.subjects.ensure: Idempotent get-or-create of a subject. */
    ensure(request: SubjectsEnsureRequest, options?: CallOptions): Promise<SubjectsEnsureResponse>;
    /** memory.subjects.fence: Fence, unfence or archive a subject; fence or unfence one placement context. */
    fence(request: SubjectsFenceRequest, options?: CallOptions): Promise<SubjectsFenceResponse>;
    /** memory.subjects.get: One subject. */
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
    /** memory.capture: Capture raw material into pending candidates, one per item. */
    capture(request: CaptureRequest, options?: CallOptions): Promise<CaptureResponse>;
    /** memory.describe: Provider self-description: protocol version, served flags, limits, required profile kinds, engine policy version. */
    describe(request?: DescribeRequest, options?: CallOptions): Promise<DescribeResponse>;
    /** memory.recall: Authorized, ranked, budgeted execution-time read. */
    recall(request: RecallRequest, options?: CallOptions): Promise<RecallResponse>;
}
