/**
 * The wire types of spoke-memory, generated from the JSON Schemas: one type per model, per
 * request and per answer of every op (named as in the Python client's `types`), the op table
 * and `MemoryPort`, the typed boundary with one method per op.
 */
/** Options every call takes: `signal` aborts it (the promise rejects with the signal's reason). */
export interface CallOptions {
    signal?: AbortSignal;
}
/** Id of a candidate: 'cnd_' + 1-64 alphanumerics. This provider makes 'cnd_<ULID>' (26 Crockford base32 chars); the looser form accepts ids made by another provider, which imports keep (docs/protocol.md#identifiers). */
export type CandidateId = string;
/** How a candidate was consumed (docs/protocol.md#model-memorycandidate): the review action (or dismiss) and the records it made, in order. */
export interface CandidateOutcome {
    action: "promote" | "fragment" | "drop" | "dismiss";
    record_ids: RecordId[];
    reason?: Reason;
}
/** The request of memory.candidates.dismiss. */
export interface CandidatesDismissRequest {
    space_id: SpaceId;
    candidate_id: CandidateId;
    reason?: Reason;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.candidates.dismiss. */
export type CandidatesDismissResponse = ReceiptResponse;
/** The request of memory.candidates.get. */
export interface CandidatesGetRequest {
    space_id: SpaceId;
    candidate_id: CandidateId;
}
/** The answer of memory.candidates.get. */
export interface CandidatesGetResponse {
    candidate: MemoryCandidate;
}
/** The request of memory.candidates.list. */
export interface CandidatesListRequest {
    space_id: SpaceId;
    subject_id?: SubjectId;
    states?: Array<"pending" | "promoted" | "fragmented" | "dropped" | "dismissed">;
    selection?: ReadSelection;
    labels?: RecordKind[];
    order?: "oldest" | "newest";
    page_size?: PageSize;
    cursor?: Cursor;
}
/** The answer of memory.candidates.list. */
export interface CandidatesListResponse {
    candidates: MemoryCandidate[];
    total_authorized: number;
    next_cursor: NextCursor;
}
/** The request of memory.candidates.review. */
export interface CandidatesReviewRequest {
    space_id: SpaceId;
    candidate_id: CandidateId;
    decision: ReviewDecision;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.candidates.review. */
export type CandidatesReviewResponse = ReceiptResponse;
/** A grant capability (docs/protocol.md#grants). */
export type Capability = "space_admin" | "grants_issue" | "subjects_write" | "capture" | "candidates_read" | "review" | "records_read" | "records_write" | "recall" | "profile_read" | "profile_write" | "reflections_read" | "reflections_generate" | "export" | "import";
/** A wire capability flag (docs/protocol.md#dispatch), e.g. spoke-memory. Not an enum: unknown flags are ignored by connect. */
export type CapabilityFlag = string;
/** The request of memory.capture. */
export interface CaptureRequest {
    space_id: SpaceId;
    subject_id: SubjectId;
    capture_scope: CaptureScope;
    items: CaptureRequestItemsItem[];
    extensions?: Extensions;
    idempotency_key?: IdempotencyKey;
}
export interface CaptureRequestItemsItem {
    content: Content;
    kind_hint?: RecordKind;
}
/** The answer of memory.capture. */
export type CaptureResponse = ReceiptResponse;
/** Where captured material is placed and where it came from; never changes (docs/protocol.md#model-memorycandidate). */
export interface CaptureScope {
    placement: Placement;
    source_context_id?: ContextId;
}
/** Advisory classification of a captured item (docs/protocol.md#model-memorycandidate, #engine-policy): it decides nothing. The label is a record kind (engine/1: preference, fact, event, plan, cognition, noise); signals name the rules that fired. */
export interface Classification {
    label: RecordKind;
    confidence: number;
    signals: string[];
    policy_version: EnginePolicyVersion;
}
/** A hard filter over recorded cognition: a record matches when one of its entries satisfies all requirements (docs/protocol.md#cognition-filter). */
export interface CognitionFilter {
    require: CognitionRequirement[];
}
/** A standard recorded-at-time cognition record (docs/protocol.md#cognition-record). Used by the operations layer to check Content.cognition entries (422 INVALID_INPUT, reason invalid_cognition_record). */
export interface CognitionRecord {
    view: "recorded_at";
    type: "belief" | "goal" | "intention" | "emotion" | "perception" | "evaluation";
    proposition: string;
    attribution: CognitionRecordAttribution;
    basis: CognitionRecordBasis;
    times: CognitionRecordTimes;
    polarity?: "affirmed" | "negated";
    confidence?: number;
    intensity?: number;
}
export interface CognitionRecordAttribution {
    holder: string;
    source: "self_report" | "observed" | "inferred" | "third_party";
}
export interface CognitionRecordBasis {
    kind: "stated" | "observed" | "inferred";
    refs?: string[];
}
export interface CognitionRecordTimes {
    recorded_at: LooseTime;
    occurred_at?: LooseTime;
    valid_from?: LooseTime;
    valid_until?: LooseTime;
}
/** One requirement of a cognition filter (docs/protocol.md#cognition-filter). Any dimension/op strings pass the schema; the grammar is the separate dispatch gate 6 (400 invalid_input, reason unsupported_cognition_requirement). */
export interface CognitionRequirement {
    dimension: string;
    op: string;
    value: unknown;
}
/** The request of POST /v1/connect. */
export interface ConnectRequest {
    capabilities: CapabilityFlag[];
    extensions?: Extensions;
}
/** The answer of POST /v1/connect. */
export interface ConnectResponse {
    session: Session;
}
/** Record and candidate content (docs/protocol.md#content): untrusted, stored and returned verbatim. cognition entries are any JSON value here: each is checked against CognitionRecord by the operations layer (422 INVALID_INPUT with details.index), not by the dispatch schema. The byte budget (limits.max_content_bytes) is judged by the operations layer too. */
export interface Content {
    text: string;
    structured?: {
        [key: string]: unknown;
    };
    cognition?: unknown[];
}
/** Id of a placement context (chosen by clients): 1-128 chars of [A-Za-z0-9._:@-] (docs/protocol.md#identifiers). */
export type ContextId = string;
/** Opaque, server-signed list cursor (docs/protocol.md#cursors). */
export type Cursor = string;
/** The request of memory.describe. */
export type DescribeRequest = Record<string, never>;
/** The answer of memory.describe. */
export interface DescribeResponse {
    provider: ProviderDescription;
}
/** sha256:<64 lower-case hex>. */
export type Digest = string;
/** The request of POST /v1/disconnect. */
export type DisconnectRequest = Record<string, never>;
/** The answer of POST /v1/disconnect. */
export interface DisconnectResponse {
    closed: true;
    session_id: SessionId;
}
/** Identity of the engine policy, e.g. engine/1 (docs/protocol.md#engine-policy). */
export type EnginePolicyVersion = string;
/** Every error response (docs/protocol.md#errors). Dispatch-layer codes are lower case, operations-layer codes upper case. */
export interface ErrorEnvelope {
    error: ErrorEnvelopeError;
}
export interface ErrorEnvelopeError {
    code: string;
    message: string;
    details?: {
        [key: string]: unknown;
    };
    extensions: Extensions;
}
/** A MemoryCandidate inside an export chunk: the model without space_id (docs/protocol.md#ops). */
export interface ExportCandidate {
    schema_version: SchemaVersion;
    candidate_id: CandidateId;
    subject_id: SubjectId;
    capture_scope: CaptureScope;
    proposed: ExportCandidateProposed;
    classification: Classification;
    state: "pending" | "promoted" | "fragmented" | "dropped" | "dismissed";
    captured_by_principal_id: PrincipalId;
    captured_at: Time;
    consumed_at?: Time;
    consumed_by_principal_id?: PrincipalId;
    outcome?: CandidateOutcome;
    revision: number;
    extensions: Extensions;
}
export interface ExportCandidateProposed {
    kind?: RecordKind;
    content: Content;
}
/** Id of a export: 'exp_' + 1-64 alphanumerics. This provider makes 'exp_<ULID>' (26 Crockford base32 chars); the looser form accepts ids made by another provider, which imports keep (docs/protocol.md#identifiers). */
export type ExportId = string;
/** One object inside an export chunk: its type and its wire data without space_id (docs/protocol.md#model-memoryexportchunk). */
export type ExportObject = ExportObjectSubject | ExportObjectRecord | ExportObjectCandidate | ExportObjectProfileDocument | ExportObjectReflection;
export interface ExportObjectCandidate {
    type: "candidate";
    data: ExportCandidate;
}
export interface ExportObjectProfileDocument {
    type: "profile_document";
    data: ExportProfileDocument;
}
export interface ExportObjectRecord {
    type: "record";
    data: ExportRecord;
}
export interface ExportObjectReflection {
    type: "reflection";
    data: ExportReflection;
}
export interface ExportObjectSubject {
    type: "subject";
    data: ExportSubject;
}
/** A ProfileDocument inside an export chunk: the model without space_id (docs/protocol.md#ops). */
export interface ExportProfileDocument {
    schema_version: SchemaVersion;
    subject_id: SubjectId;
    kind: ProfileKind;
    content: ProfileContent;
    revision: number;
    author_principal_id: PrincipalId;
    created_at: Time;
    updated_at: Time;
    extensions: Extensions;
}
/** A RetainedRecord inside an export chunk: the model without space_id (docs/protocol.md#ops). */
export interface ExportRecord {
    schema_version: SchemaVersion;
    record_id: RecordId;
    subject_id: SubjectId;
    kind: RecordKind;
    content: Content;
    placement: Placement;
    provenance: Provenance;
    revision: number;
    created_at: Time;
    updated_at: Time;
    tombstone?: Tombstone;
    extensions: Extensions;
}
/** A Reflection inside an export chunk: the model without space_id (docs/protocol.md#ops). stale is computed at read time, not stored, so it is optional here. */
export interface ExportReflection {
    schema_version: SchemaVersion;
    reflection_id: ReflectionId;
    subject_id: SubjectId;
    content: ProfileContent;
    basis: ReflectionBasis;
    cognition_filter?: CognitionFilter;
    generated_at: Time;
    generated_by_principal_id: PrincipalId;
    stale?: boolean;
    extensions: Extensions;
}
/** A Subject inside an export chunk: the model without space_id (docs/protocol.md#ops). */
export interface ExportSubject {
    schema_version: SchemaVersion;
    subject_id: SubjectId;
    kind?: SubjectKind;
    state: "active" | "fenced" | "archived";
    fenced_context_ids: ContextId[];
    revision: number;
    created_at: Time;
    updated_at: Time;
    extensions: Extensions;
}
/** The request of memory.exports.create. */
export interface ExportsCreateRequest {
    space_id: SpaceId;
    subject_ids?: SubjectId[];
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.exports.create. */
export type ExportsCreateResponse = ReceiptResponse;
/** The request of memory.exports.get. */
export interface ExportsGetRequest {
    space_id: SpaceId;
    export_id: ExportId;
    ordinal: number;
}
/** The answer of memory.exports.get. */
export interface ExportsGetResponse {
    bundle: MemoryExportBundle;
    chunk: MemoryExportChunk;
}
/** ExtensionMap (docs/protocol.md#identifiers): namespaced keys, JSON-object values; unknown namespaces round-trip verbatim. */
export type Extensions = {
    [key: string]: {
        [key: string]: unknown;
    };
};
/** Id of a grant: 'grt_' + 1-64 alphanumerics. This provider makes 'grt_<ULID>' (26 Crockford base32 chars); the looser form accepts ids made by another provider, which imports keep (docs/protocol.md#identifiers). */
export type GrantId = string;
/** The request of memory.grants.grant. */
export interface GrantsGrantRequest {
    space_id: SpaceId;
    grantee_principal_id: PrincipalId;
    capabilities: Capability[];
    subject_ids?: SubjectId[];
    context_ids?: ContextId[];
    shared_access?: boolean;
    expires_at?: LooseTime;
    parent_grant_id?: GrantId;
    extensions?: Extensions;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.grants.grant. */
export type GrantsGrantResponse = ReceiptResponse;
/** The request of memory.grants.list. */
export interface GrantsListRequest {
    space_id: SpaceId;
    view: "admin" | "own";
    include_inactive?: boolean;
    page_size?: PageSize;
    cursor?: Cursor;
}
/** The answer of memory.grants.list. */
export interface GrantsListResponse {
    grants: MemoryGrant[];
    next_cursor: NextCursor;
}
/** The request of memory.grants.revoke. */
export interface GrantsRevokeRequest {
    space_id: SpaceId;
    grant_id: GrantId;
    reason?: Reason;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.grants.revoke. */
export type GrantsRevokeResponse = ReceiptResponse;
/** Client-chosen idempotency key, 1-200 chars (docs/protocol.md#idempotency). */
export type IdempotencyKey = string;
/** Id of a import: 'imp_' + 1-64 alphanumerics. This provider makes 'imp_<ULID>' (26 Crockford base32 chars); the looser form accepts ids made by another provider, which imports keep (docs/protocol.md#identifiers). */
export type ImportId = string;
/** The request of memory.imports.activate. */
export interface ImportsActivateRequest {
    space_id: SpaceId;
    import_id: ImportId;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.imports.activate. */
export type ImportsActivateResponse = ReceiptResponse;
/** The request of memory.imports.discard. */
export interface ImportsDiscardRequest {
    space_id: SpaceId;
    import_id: ImportId;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.imports.discard. */
export type ImportsDiscardResponse = ReceiptResponse;
/** The request of memory.imports.stage. */
export interface ImportsStageRequest {
    space_id: SpaceId;
    import_id?: ImportId;
    bundle?: MemoryExportBundle;
    chunk: MemoryExportChunk;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.imports.stage. */
export type ImportsStageResponse = ReceiptResponse;
/** A client-supplied RFC 3339 time (grant expires_at, cognition record times): Z or a numeric offset, optional fraction. The provider normalizes it to UTC milliseconds. */
export type LooseTime = string;
/** The answer of GET /v1/manifest. */
export interface ManifestResponse {
    manifest: ManifestResponseManifest;
}
export interface ManifestResponseManifest {
    schema_version: SchemaVersion;
    provider_id: ProviderId;
    protocol_version: "1";
    role: "memory-provider";
    capabilities: CapabilityFlag[];
    extensions: Extensions;
}
/** A provisional capture awaiting review (docs/protocol.md#model-memorycandidate); capture_scope never changes. */
export interface MemoryCandidate {
    schema_version: SchemaVersion;
    candidate_id: CandidateId;
    space_id: SpaceId;
    subject_id: SubjectId;
    capture_scope: CaptureScope;
    proposed: MemoryCandidateProposed;
    classification: Classification;
    state: "pending" | "promoted" | "fragmented" | "dropped" | "dismissed";
    captured_by_principal_id: PrincipalId;
    captured_at: Time;
    consumed_at?: Time;
    consumed_by_principal_id?: PrincipalId;
    outcome?: CandidateOutcome;
    revision: number;
    extensions: Extensions;
}
export interface MemoryCandidateProposed {
    kind?: RecordKind;
    content: Content;
}
/** A versioned, digested logical export (docs/protocol.md#model-memoryexportbundle). bundle_digest covers {export_id, space_id, format_version, chunk_digests, object_counts}. */
export interface MemoryExportBundle {
    schema_version: SchemaVersion;
    export_id: ExportId;
    space_id: SpaceId;
    format_version: 1;
    provider_id: ProviderId;
    engine_policy_version: EnginePolicyVersion;
    authority_generation: number;
    space_revision: number;
    created_at: Time;
    chunk_count: number;
    object_counts: {
        [key: string]: number;
    };
    chunk_digests: Digest[];
    bundle_digest: Digest;
    extensions: Extensions;
}
/** A bounded wire unit of an export (docs/protocol.md#model-memoryexportchunk). digest = sha256 of RFC 8785 of objects. */
export interface MemoryExportChunk {
    schema_version: SchemaVersion;
    export_id: ExportId;
    ordinal: number;
    chunk_count: number;
    objects: ExportObject[];
    digest: Digest;
    extensions: Extensions;
}
/** A provider-enforced authorization record (docs/protocol.md#model-memorygrant, #grants). effective is computed: active and every ancestor active. Absent subject_ids / context_ids mean all. */
export interface MemoryGrant {
    schema_version: SchemaVersion;
    grant_id: GrantId;
    space_id: SpaceId;
    grantee_principal_id: PrincipalId;
    issuer_principal_id: PrincipalId;
    parent_grant_id: GrantId | null;
    capabilities: Capability[];
    subject_ids?: SubjectId[];
    context_ids?: ContextId[];
    shared_access: boolean;
    expires_at?: Time;
    state: "active" | "revoked" | "expired";
    effective: boolean;
    revoked_at?: Time;
    revision: number;
    created_at: Time;
    extensions: Extensions;
}
/** A durable, content-free operation receipt (docs/protocol.md#model-memoryreceipt, #receipts). space_id is null for ops outside a space. */
export interface MemoryReceipt {
    schema_version: SchemaVersion;
    receipt_id: ReceiptId;
    space_id: SpaceId | null;
    op: OpName;
    status: "committed" | "pending" | "failed";
    payload_digest: Digest;
    idempotency_key?: IdempotencyKey;
    refs: Ref[];
    space_revision?: number;
    failure?: MemoryReceiptFailure;
    created_at: Time;
    completed_at?: Time;
    extensions: Extensions;
}
export interface MemoryReceiptFailure {
    code: string;
    message: string;
}
/** One authoritative store (docs/protocol.md#model-memoryspace). pending_receipts is computed: receipts of the space now pending. */
export interface MemorySpace {
    schema_version: SchemaVersion;
    space_id: SpaceId;
    display_name: string;
    provider_id: ProviderId;
    state: "active" | "frozen";
    freeze_reason?: Reason;
    revision: number;
    authority_generation: number;
    pending_receipts: number;
    created_at: Time;
    updated_at: Time;
    extensions: Extensions;
}
/** Cursor of the next page, or null at the end (docs/protocol.md#cursors). */
export type NextCursor = Cursor | null;
/** Type of an object inside an export chunk, in export order (docs/protocol.md#ops). */
export type ObjectType = "subject" | "record" | "candidate" | "profile_document" | "reflection";
/** A memory op name, e.g. memory.records.get. */
export type OpName = string;
/** List page size (docs/protocol.md#cursors): default 50, at most limits.max_page_size. */
export type PageSize = number;
/** Where a record (or a candidate's capture scope) is placed: one context, or shared (docs/protocol.md#placement). */
export type Placement = PlacementContext | PlacementShared;
export interface PlacementContext {
    scope: "context";
    context_id: ContextId;
}
export interface PlacementShared {
    scope: "shared";
}
/** An authenticated caller identity (docs/protocol.md#model-principal). */
export interface Principal {
    schema_version: SchemaVersion;
    principal_id: PrincipalId;
    kind: "service" | "user";
    display_name: string;
    extensions: Extensions;
}
/** Id of a principal: 'prn_' + 1-64 alphanumerics. This provider makes 'prn_<ULID>' (26 Crockford base32 chars); the looser form accepts ids made by another provider, which imports keep (docs/protocol.md#identifiers). */
export type PrincipalId = string;
/** Profile document and reflection content: trusted author or derived material (docs/protocol.md#model-profiledocument, #model-reflection). */
export interface ProfileContent {
    text: string;
    structured?: {
        [key: string]: unknown;
    };
}
/** A trusted, author-maintained profile document (docs/protocol.md#model-profiledocument). */
export interface ProfileDocument {
    schema_version: SchemaVersion;
    space_id: SpaceId;
    subject_id: SubjectId;
    kind: ProfileKind;
    content: ProfileContent;
    revision: number;
    author_principal_id: PrincipalId;
    created_at: Time;
    updated_at: Time;
    extensions: Extensions;
}
/** The request of memory.profile.get. */
export interface ProfileGetRequest {
    space_id: SpaceId;
    subject_id: SubjectId;
    kinds?: ProfileKind[];
}
/** The answer of memory.profile.get. */
export interface ProfileGetResponse {
    profile: ProfileGetResponseProfile;
}
export interface ProfileGetResponseProfile {
    subject_id: SubjectId;
    documents: ProfileDocument[];
    absent_kinds: ProfileKind[];
}
/** Profile document kind; core kinds personality, preferences (docs/protocol.md#model-profiledocument). */
export type ProfileKind = string;
/** The request of memory.profile.update. */
export interface ProfileUpdateRequest {
    space_id: SpaceId;
    subject_id: SubjectId;
    kind: ProfileKind;
    content: ProfileContent;
    expected_revision?: number;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.profile.update. */
export type ProfileUpdateResponse = ReceiptResponse;
/** Where a record's material came from (docs/protocol.md#model-retainedrecord); promote never changes it. */
export interface Provenance {
    source: "capture" | "authored" | "import";
    source_context_id?: ContextId;
    candidate_id?: CandidateId;
    author_principal_id: PrincipalId;
    reviewer_principal_id?: PrincipalId;
    captured_at?: Time;
    created_at: Time;
}
/** Filter by where material came from, independent of placement; members combine by AND (docs/protocol.md#selection). */
export interface ProvenanceFilter {
    source_context_ids?: ContextId[];
    sources?: Array<"capture" | "authored" | "import">;
    principal_ids?: PrincipalId[];
}
/** The memory.describe payload: protocol version, served flags, limits, required profile kinds, engine policy version (docs/protocol.md#ops). */
export interface ProviderDescription {
    schema_version: SchemaVersion;
    protocol_version: "1";
    provider_id: ProviderId;
    served_capabilities: CapabilityFlag[];
    limits: ProviderDescriptionLimits;
    required_profile_kinds: ProfileKind[];
    engine_policy_version: EnginePolicyVersion;
    extensions: Extensions;
}
export interface ProviderDescriptionLimits {
    max_request_bytes: number;
    max_content_bytes: number;
    max_capture_items: number;
    max_page_size: number;
    max_recall_records: number;
    max_recall_bytes: number;
    export_chunk_bytes: number;
    export_retention_s: number;
    max_extensions_bytes: number;
    reflection_min_records: number;
    idempotency_retention_s: number;
    session_ttl_s: number;
    max_json_depth?: number;
    max_list_items?: number;
    max_grants_per_principal?: number;
    max_request_bytes_per_min?: number;
}
/** Identity of this provider. */
export type ProviderId = string;
/** Placement selection for reads (docs/protocol.md#selection). Whether context_ids is required (non-empty) or forbidden for the mode is judged by the operations layer (422 INVALID_INPUT, reason selection). */
export interface ReadSelection {
    mode: "all" | "contexts" | "shared" | "contexts_and_shared";
    context_ids?: ContextId[];
}
/** A free-text reason given by a caller (freeze, fence, revoke, dismiss, delete, drop). */
export type Reason = string;
/** Recall budget (docs/protocol.md#ops, #engine-policy): at most max_records results and max_bytes content bytes. */
export interface RecallBudget {
    max_records?: number;
    max_bytes?: number;
}
/** The request of memory.recall. */
export interface RecallRequest {
    space_id: SpaceId;
    subject_id: SubjectId;
    query: RecallRequestQuery;
    selection?: ReadSelection;
    provenance_filter?: ProvenanceFilter;
    cognition_filter?: CognitionFilter;
    kinds?: RecordKind[];
    budget?: RecallBudget;
}
export interface RecallRequestQuery {
    text: string;
}
/** The answer of memory.recall. */
export interface RecallResponse {
    recall: RecallResult;
}
/** The memory.recall payload (docs/protocol.md#ops, #engine-policy): ranked results within the budget, and why and how much was truncated. */
export interface RecallResult {
    results: RecallResultResultsItem[];
    total_eligible: number;
    truncation: RecallResultTruncation;
    engine_policy_version: EnginePolicyVersion;
}
export interface RecallResultResultsItem {
    record: RetainedRecord;
    score: number;
    rank: number;
}
export interface RecallResultTruncation {
    truncated: boolean;
    reason: null | "max_records" | "max_bytes";
    omitted_count: number;
}
/** Alias of MemoryReceipt. */
export type Receipt = MemoryReceipt;
/** Id of a receipt: 'rct_' + 1-64 alphanumerics. This provider makes 'rct_<ULID>' (26 Crockford base32 chars); the looser form accepts ids made by another provider, which imports keep (docs/protocol.md#identifiers). */
export type ReceiptId = string;
/** The answer of every mutating op (docs/protocol.md#receipts). */
export interface ReceiptResponse {
    receipt: MemoryReceipt;
}
/** The request of memory.receipts.get. */
export interface ReceiptsGetRequest {
    receipt_id?: ReceiptId;
    space_id?: SpaceId;
    op?: OpName;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.receipts.get. */
export interface ReceiptsGetResponse {
    receipt: MemoryReceipt;
}
/** Id of a record: 'rec_' + 1-64 alphanumerics. This provider makes 'rec_<ULID>' (26 Crockford base32 chars); the looser form accepts ids made by another provider, which imports keep (docs/protocol.md#identifiers). */
export type RecordId = string;
/** Record kind, e.g. fact, preference, event, plan, note (docs/protocol.md#model-retainedrecord). */
export type RecordKind = string;
/** The request of memory.records.create. */
export interface RecordsCreateRequest {
    space_id: SpaceId;
    subject_id: SubjectId;
    kind: RecordKind;
    content: Content;
    placement: Placement;
    extensions?: Extensions;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.records.create. */
export type RecordsCreateResponse = ReceiptResponse;
/** The request of memory.records.delete. */
export interface RecordsDeleteRequest {
    space_id: SpaceId;
    record_id: RecordId;
    expected_revision: number;
    reason?: Reason;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.records.delete. */
export type RecordsDeleteResponse = ReceiptResponse;
/** The request of memory.records.get. */
export interface RecordsGetRequest {
    space_id: SpaceId;
    record_id: RecordId;
}
/** The answer of memory.records.get. */
export interface RecordsGetResponse {
    record: RetainedRecord;
}
/** The request of memory.records.list. */
export interface RecordsListRequest {
    space_id: SpaceId;
    subject_id?: SubjectId;
    selection?: ReadSelection;
    provenance_filter?: ProvenanceFilter;
    cognition_filter?: CognitionFilter;
    kinds?: RecordKind[];
    include_tombstoned?: boolean;
    page_size?: PageSize;
    cursor?: Cursor;
}
/** The answer of memory.records.list. */
export interface RecordsListResponse {
    records: RetainedRecord[];
    total_authorized: number;
    next_cursor: NextCursor;
}
/** The request of memory.records.promote. */
export interface RecordsPromoteRequest {
    space_id: SpaceId;
    record_id: RecordId;
    expected_revision: number;
    placement: Placement;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.records.promote. */
export type RecordsPromoteResponse = ReceiptResponse;
/** The request of memory.records.update. */
export interface RecordsUpdateRequest {
    space_id: SpaceId;
    record_id: RecordId;
    expected_revision: number;
    content?: Content;
    kind?: RecordKind;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.records.update. */
export type RecordsUpdateResponse = ReceiptResponse;
/** A receipt reference to an object the op touched (docs/protocol.md#model-memoryreceipt). For a profile_document the id is its kind; for a space, the space_id. */
export interface Ref {
    type: "subject" | "grant" | "candidate" | "record" | "profile_document" | "reflection" | "export" | "import" | "space";
    id: string;
    revision?: number;
}
/** A derived synthesis over a pinned basis (docs/protocol.md#model-reflection); stale is computed at read time. */
export interface Reflection {
    schema_version: SchemaVersion;
    reflection_id: ReflectionId;
    space_id: SpaceId;
    subject_id: SubjectId;
    content: ProfileContent;
    basis: ReflectionBasis;
    cognition_filter?: CognitionFilter;
    generated_at: Time;
    generated_by_principal_id: PrincipalId;
    stale: boolean;
    extensions: Extensions;
}
/** The basis pinned when a reflection is admitted (docs/protocol.md#model-reflection, #ops). coverage is the caller's coverage for the subject (SubjectView); cognition_filter is present when one was pinned (the seed summary: the filter is written into the basis too). */
export interface ReflectionBasis {
    state_digest: Digest;
    record_refs: ReflectionBasisRecordRefsItem[];
    profile_refs: ReflectionBasisProfileRefsItem[];
    engine_policy_version: EnginePolicyVersion;
    selection: ReadSelection;
    coverage: SubjectView;
    cognition_filter?: CognitionFilter;
}
export interface ReflectionBasisProfileRefsItem {
    kind: ProfileKind;
    revision: number;
}
export interface ReflectionBasisRecordRefsItem {
    record_id: RecordId;
    revision: number;
}
/** Id of a reflection: 'rfl_' + 1-64 alphanumerics. This provider makes 'rfl_<ULID>' (26 Crockford base32 chars); the looser form accepts ids made by another provider, which imports keep (docs/protocol.md#identifiers). */
export type ReflectionId = string;
/** The request of memory.reflections.generate. */
export interface ReflectionsGenerateRequest {
    space_id: SpaceId;
    subject_id: SubjectId;
    selection?: ReadSelection;
    cognition_filter?: CognitionFilter;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.reflections.generate. */
export type ReflectionsGenerateResponse = ReceiptResponse;
/** The request of memory.reflections.list. */
export interface ReflectionsListRequest {
    space_id: SpaceId;
    subject_id: SubjectId;
    cognition_filter?: CognitionFilter;
    page_size?: PageSize;
    cursor?: Cursor;
}
/** The answer of memory.reflections.list. */
export interface ReflectionsListResponse {
    reflections: Reflection[];
    next_cursor: NextCursor;
}
/** The request of memory.reflections.state. */
export interface ReflectionsStateRequest {
    space_id: SpaceId;
    subject_id: SubjectId;
    selection?: ReadSelection;
    cognition_filter?: CognitionFilter;
}
/** The answer of memory.reflections.state. */
export interface ReflectionsStateResponse {
    state: ReflectionsStateResponseState;
}
export interface ReflectionsStateResponseState {
    state_digest: Digest;
    record_count: number;
    data_sufficiency: ReflectionsStateResponseStateDataSufficiency;
    missing_required_kinds: ProfileKind[];
    engine_policy_version: EnginePolicyVersion;
    cognition_filter?: CognitionFilter;
    latest_reflection: ReflectionsStateResponseStateLatestReflection1 | null;
}
export interface ReflectionsStateResponseStateDataSufficiency {
    sufficient: boolean;
    record_count: number;
    minimum_records: number;
}
export interface ReflectionsStateResponseStateLatestReflection1 {
    reflection_id: ReflectionId;
    stale: boolean;
}
/** A reviewed or directly authored durable record (docs/protocol.md#model-retainedrecord); tombstoned records carry tombstone and content {"text": ""}. */
export interface RetainedRecord {
    schema_version: SchemaVersion;
    record_id: RecordId;
    space_id: SpaceId;
    subject_id: SubjectId;
    kind: RecordKind;
    content: Content;
    placement: Placement;
    provenance: Provenance;
    revision: number;
    created_at: Time;
    updated_at: Time;
    tombstone?: Tombstone;
    extensions: Extensions;
}
/** A review decision (docs/protocol.md#ops): promote (one record), fragment (n records) or drop (none). */
export type ReviewDecision = ReviewDecisionPromote | ReviewDecisionFragment | ReviewDecisionDrop;
export interface ReviewDecisionDrop {
    action: "drop";
    reason?: Reason;
}
export interface ReviewDecisionFragment {
    action: "fragment";
    fragments: ReviewFragment[];
}
export interface ReviewDecisionPromote {
    action: "promote";
    kind?: RecordKind;
    content_override?: Content;
}
/** One record of a fragment review decision (docs/protocol.md#ops): its content and, optionally, its kind. */
export interface ReviewFragment {
    kind?: RecordKind;
    content: Content;
}
/** schema_version of every durable object (docs/protocol.md#identifiers): now 1. */
export type SchemaVersion = 1;
/** A wire session with its negotiated capability flags (docs/protocol.md#sessions). */
export interface Session {
    schema_version: SchemaVersion;
    session_id: SessionId;
    principal_id: PrincipalId;
    negotiated_capabilities: CapabilityFlag[];
    opened_at: Time;
    expires_at: Time;
    extensions: Extensions;
}
/** Id of a session: 'ses_' + 1-64 alphanumerics. This provider makes 'ses_<ULID>' (26 Crockford base32 chars); the looser form accepts ids made by another provider, which imports keep (docs/protocol.md#identifiers). */
export type SessionId = string;
/** Id of a space (chosen by the operator): 1-128 chars of [A-Za-z0-9._:@-] (docs/protocol.md#identifiers). */
export type SpaceId = string;
/** The request of memory.spaces.freeze. */
export interface SpacesFreezeRequest {
    space_id: SpaceId;
    reason?: Reason;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.spaces.freeze. */
export type SpacesFreezeResponse = ReceiptResponse;
/** The request of memory.spaces.list. */
export type SpacesListRequest = Record<string, never>;
/** The answer of memory.spaces.list. */
export interface SpacesListResponse {
    spaces: MemorySpace[];
}
/** The request of memory.spaces.unfreeze. */
export interface SpacesUnfreezeRequest {
    space_id: SpaceId;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.spaces.unfreeze. */
export type SpacesUnfreezeResponse = ReceiptResponse;
/** The entity memory is about (docs/protocol.md#model-subject). */
export interface Subject {
    schema_version: SchemaVersion;
    space_id: SpaceId;
    subject_id: SubjectId;
    kind?: SubjectKind;
    state: "active" | "fenced" | "archived";
    fenced_context_ids: ContextId[];
    revision: number;
    created_at: Time;
    updated_at: Time;
    extensions: Extensions;
}
/** Id of a subject (chosen by clients): 1-128 chars of [A-Za-z0-9._:@-] (docs/protocol.md#identifiers). */
export type SubjectId = string;
/** Namespaced subject kind, e.g. acme:user (docs/protocol.md#model-subject). */
export type SubjectKind = string;
/** A caller's coverage for one subject, as a reflection's basis pins it (docs/protocol.md#ops Reflection): every context (all_contexts) or the listed ones, and whether the shared placement is covered. */
export interface SubjectView {
    all_contexts: boolean;
    context_ids: ContextId[];
    shared: boolean;
}
/** The request of memory.subjects.ensure. */
export interface SubjectsEnsureRequest {
    space_id: SpaceId;
    subject_id: SubjectId;
    kind?: SubjectKind;
    extensions?: Extensions;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.subjects.ensure. */
export type SubjectsEnsureResponse = ReceiptResponse;
/** The request of memory.subjects.fence. */
export interface SubjectsFenceRequest {
    space_id: SpaceId;
    subject_id: SubjectId;
    action: "fence" | "unfence" | "archive";
    context_id?: ContextId;
    reason?: Reason;
    idempotency_key?: IdempotencyKey;
}
/** The answer of memory.subjects.fence. */
export type SubjectsFenceResponse = ReceiptResponse;
/** The request of memory.subjects.get. */
export interface SubjectsGetRequest {
    space_id: SpaceId;
    subject_id: SubjectId;
}
/** The answer of memory.subjects.get. */
export interface SubjectsGetResponse {
    subject: Subject;
}
/** A server-made time: RFC 3339 UTC with Z and exactly millisecond precision (docs/protocol.md#identifiers). */
export type Time = string;
/** Present on a deleted record, whose content is then exactly {"text": ""} (docs/protocol.md#model-retainedrecord, #content). */
export interface Tombstone {
    deleted_at: Time;
    deleted_by_principal_id: PrincipalId;
    reason?: Reason;
}
/** Every op of the wire: its capability flag, whether it mutates (answers a receipt), summary. */
export declare const OPS: {
    readonly "memory.candidates.dismiss": {
        readonly flag: "spoke-memory";
        readonly mutating: true;
        readonly summary: "Consume a candidate without a review decision.";
    };
    readonly "memory.candidates.get": {
        readonly flag: "spoke-memory";
        readonly mutating: false;
        readonly summary: "One candidate.";
    };
    readonly "memory.candidates.list": {
        readonly flag: "spoke-memory";
        readonly mutating: false;
        readonly summary: "Pending and consumed candidates by capture placement and label, oldest (or newest) first, with total_authorized.";
    };
    readonly "memory.candidates.review": {
        readonly flag: "spoke-memory";
        readonly mutating: true;
        readonly summary: "Promote, fragment or drop a candidate: the only candidate-to-record path.";
    };
    readonly "memory.capture": {
        readonly flag: "spoke-memory";
        readonly mutating: true;
        readonly summary: "Capture raw material into pending candidates, one per item.";
    };
    readonly "memory.describe": {
        readonly flag: "spoke-memory";
        readonly mutating: false;
        readonly summary: "Provider self-description: protocol version, served flags, limits, required profile kinds, engine policy version.";
    };
    readonly "memory.exports.create": {
        readonly flag: "spoke-memory-transfer";
        readonly mutating: true;
        readonly summary: "Produce a chunked logical export (answers pending).";
    };
    readonly "memory.exports.get": {
        readonly flag: "spoke-memory-transfer";
        readonly mutating: false;
        readonly summary: "Fetch one export chunk with its bundle.";
    };
    readonly "memory.grants.grant": {
        readonly flag: "spoke-memory";
        readonly mutating: true;
        readonly summary: "Issue a grant within the issuer's own coverage.";
    };
    readonly "memory.grants.list": {
        readonly flag: "spoke-memory";
        readonly mutating: false;
        readonly summary: "Grants in a space: the admin view or the caller's own.";
    };
    readonly "memory.grants.revoke": {
        readonly flag: "spoke-memory";
        readonly mutating: true;
        readonly summary: "Terminally revoke a grant.";
    };
    readonly "memory.imports.activate": {
        readonly flag: "spoke-memory-transfer";
        readonly mutating: true;
        readonly summary: "Atomic visibility flip to a verified import; bumps authority_generation (answers pending).";
    };
    readonly "memory.imports.discard": {
        readonly flag: "spoke-memory-transfer";
        readonly mutating: true;
        readonly summary: "Pre-activation rollback of staged data.";
    };
    readonly "memory.imports.stage": {
        readonly flag: "spoke-memory-transfer";
        readonly mutating: true;
        readonly summary: "Stage export chunks in strict ordinal order; the final chunk is verified (answers pending).";
    };
    readonly "memory.profile.get": {
        readonly flag: "spoke-memory";
        readonly mutating: false;
        readonly summary: "Authored profile documents; absent kinds are an honest empty.";
    };
    readonly "memory.profile.update": {
        readonly flag: "spoke-memory";
        readonly mutating: true;
        readonly summary: "Create or update an authored profile document.";
    };
    readonly "memory.recall": {
        readonly flag: "spoke-memory";
        readonly mutating: false;
        readonly summary: "Authorized, ranked, budgeted execution-time read.";
    };
    readonly "memory.receipts.get": {
        readonly flag: "spoke-memory";
        readonly mutating: false;
        readonly summary: "Poll a receipt, or resolve an uncertain outcome by (space_id, op, idempotency_key).";
    };
    readonly "memory.records.create": {
        readonly flag: "spoke-memory";
        readonly mutating: true;
        readonly summary: "Direct authored write of a record.";
    };
    readonly "memory.records.delete": {
        readonly flag: "spoke-memory";
        readonly mutating: true;
        readonly summary: "Erase a record's content and keep a tombstone.";
    };
    readonly "memory.records.get": {
        readonly flag: "spoke-memory";
        readonly mutating: false;
        readonly summary: "One retained record, tombstoned ones included.";
    };
    readonly "memory.records.list": {
        readonly flag: "spoke-memory";
        readonly mutating: false;
        readonly summary: "Records by selection and filters, newest first, with total_authorized.";
    };
    readonly "memory.records.promote": {
        readonly flag: "spoke-memory";
        readonly mutating: true;
        readonly summary: "Explicit placement change between contexts or to shared.";
    };
    readonly "memory.records.update": {
        readonly flag: "spoke-memory";
        readonly mutating: true;
        readonly summary: "Update a record's content or kind (placement changes use promote).";
    };
    readonly "memory.reflections.generate": {
        readonly flag: "spoke-memory-reflection";
        readonly mutating: true;
        readonly summary: "Explicit, cost-bearing generation over a pinned basis (answers pending).";
    };
    readonly "memory.reflections.list": {
        readonly flag: "spoke-memory-reflection";
        readonly mutating: false;
        readonly summary: "Reflections whose pinned filter equals the request's, newest first.";
    };
    readonly "memory.reflections.state": {
        readonly flag: "spoke-memory-reflection";
        readonly mutating: false;
        readonly summary: "Current basis digest, staleness, data sufficiency and missing required kinds.";
    };
    readonly "memory.spaces.freeze": {
        readonly flag: "spoke-memory";
        readonly mutating: true;
        readonly summary: "Freeze a space for maintenance or migration.";
    };
    readonly "memory.spaces.list": {
        readonly flag: "spoke-memory";
        readonly mutating: false;
        readonly summary: "Spaces where the caller holds an effective grant, with pending_receipts.";
    };
    readonly "memory.spaces.unfreeze": {
        readonly flag: "spoke-memory";
        readonly mutating: true;
        readonly summary: "Re-open a frozen space.";
    };
    readonly "memory.subjects.ensure": {
        readonly flag: "spoke-memory";
        readonly mutating: true;
        readonly summary: "Idempotent get-or-create of a subject.";
    };
    readonly "memory.subjects.fence": {
        readonly flag: "spoke-memory";
        readonly mutating: true;
        readonly summary: "Fence, unfence or archive a subject; fence or unfence one placement context.";
    };
    readonly "memory.subjects.get": {
        readonly flag: "spoke-memory";
        readonly mutating: false;
        readonly summary: "One subject.";
    };
};
/** The name of an op this client knows. */
export type KnownOp = keyof typeof OPS;
/** Each op's request and answer types: `Ops["memory.records.get"]["response"]`. */
export interface Ops {
    "memory.candidates.dismiss": {
        request: CandidatesDismissRequest;
        response: CandidatesDismissResponse;
    };
    "memory.candidates.get": {
        request: CandidatesGetRequest;
        response: CandidatesGetResponse;
    };
    "memory.candidates.list": {
        request: CandidatesListRequest;
        response: CandidatesListResponse;
    };
    "memory.candidates.review": {
        request: CandidatesReviewRequest;
        response: CandidatesReviewResponse;
    };
    "memory.capture": {
        request: CaptureRequest;
        response: CaptureResponse;
    };
    "memory.describe": {
        request: DescribeRequest;
        response: DescribeResponse;
    };
    "memory.exports.create": {
        request: ExportsCreateRequest;
        response: ExportsCreateResponse;
    };
    "memory.exports.get": {
        request: ExportsGetRequest;
        response: ExportsGetResponse;
    };
    "memory.grants.grant": {
        request: GrantsGrantRequest;
        response: GrantsGrantResponse;
    };
    "memory.grants.list": {
        request: GrantsListRequest;
        response: GrantsListResponse;
    };
    "memory.grants.revoke": {
        request: GrantsRevokeRequest;
        response: GrantsRevokeResponse;
    };
    "memory.imports.activate": {
        request: ImportsActivateRequest;
        response: ImportsActivateResponse;
    };
    "memory.imports.discard": {
        request: ImportsDiscardRequest;
        response: ImportsDiscardResponse;
    };
    "memory.imports.stage": {
        request: ImportsStageRequest;
        response: ImportsStageResponse;
    };
    "memory.profile.get": {
        request: ProfileGetRequest;
        response: ProfileGetResponse;
    };
    "memory.profile.update": {
        request: ProfileUpdateRequest;
        response: ProfileUpdateResponse;
    };
    "memory.recall": {
        request: RecallRequest;
        response: RecallResponse;
    };
    "memory.receipts.get": {
        request: ReceiptsGetRequest;
        response: ReceiptsGetResponse;
    };
    "memory.records.create": {
        request: RecordsCreateRequest;
        response: RecordsCreateResponse;
    };
    "memory.records.delete": {
        request: RecordsDeleteRequest;
        response: RecordsDeleteResponse;
    };
    "memory.records.get": {
        request: RecordsGetRequest;
        response: RecordsGetResponse;
    };
    "memory.records.list": {
        request: RecordsListRequest;
        response: RecordsListResponse;
    };
    "memory.records.promote": {
        request: RecordsPromoteRequest;
        response: RecordsPromoteResponse;
    };
    "memory.records.update": {
        request: RecordsUpdateRequest;
        response: RecordsUpdateResponse;
    };
    "memory.reflections.generate": {
        request: ReflectionsGenerateRequest;
        response: ReflectionsGenerateResponse;
    };
    "memory.reflections.list": {
        request: ReflectionsListRequest;
        response: ReflectionsListResponse;
    };
    "memory.reflections.state": {
        request: ReflectionsStateRequest;
        response: ReflectionsStateResponse;
    };
    "memory.spaces.freeze": {
        request: SpacesFreezeRequest;
        response: SpacesFreezeResponse;
    };
    "memory.spaces.list": {
        request: SpacesListRequest;
        response: SpacesListResponse;
    };
    "memory.spaces.unfreeze": {
        request: SpacesUnfreezeRequest;
        response: SpacesUnfreezeResponse;
    };
    "memory.subjects.ensure": {
        request: SubjectsEnsureRequest;
        response: SubjectsEnsureResponse;
    };
    "memory.subjects.fence": {
        request: SubjectsFenceRequest;
        response: SubjectsFenceResponse;
    };
    "memory.subjects.get": {
        request: SubjectsGetRequest;
        response: SubjectsGetResponse;
    };
}
/** memory.candidates.* */
export interface CandidatesPort {
    /** memory.candidates.dismiss: Consume a candidate without a review decision. Rejects with NotFound, PermissionDenied, SpaceFrozen, SubjectFenced, SubjectArchived, ContextFenced, CandidateConsumed, IdempotencyKeyReused. */
    dismiss(request: CandidatesDismissRequest, options?: CallOptions): Promise<CandidatesDismissResponse>;
    /** memory.candidates.get: One candidate. Rejects with NotFound. */
    get(request: CandidatesGetRequest, options?: CallOptions): Promise<CandidatesGetResponse>;
    /** memory.candidates.list: Pending and consumed candidates by capture placement and label, oldest (or newest) first, with total_authorized. Rejects with InvalidInput, NotFound, PermissionDenied, CursorInvalid. */
    list(request: CandidatesListRequest, options?: CallOptions): Promise<CandidatesListResponse>;
    /** memory.candidates.review: Promote, fragment or drop a candidate: the only candidate-to-record path. Rejects with InvalidInput, NotFound, PermissionDenied, SpaceFrozen, SubjectFenced, SubjectArchived, ContextFenced, CandidateConsumed, IdempotencyKeyReused, ContentTooLarge. */
    review(request: CandidatesReviewRequest, options?: CallOptions): Promise<CandidatesReviewResponse>;
}
/** memory.exports.* */
export interface ExportsPort {
    /** memory.exports.create: Produce a chunked logical export (answers pending). Rejects with InvalidInput, NotFound, PermissionDenied, IdempotencyKeyReused. */
    create(request: ExportsCreateRequest, options?: CallOptions): Promise<ExportsCreateResponse>;
    /** memory.exports.get: Fetch one export chunk with its bundle. Rejects with InvalidInput, NotFound, PermissionDenied, ExportNotReady. */
    get(request: ExportsGetRequest, options?: CallOptions): Promise<ExportsGetResponse>;
}
/** memory.grants.* */
export interface GrantsPort {
    /** memory.grants.grant: Issue a grant within the issuer's own coverage. Rejects with InvalidInput, NotFound, PermissionDenied, AmplificationDenied, SpaceFrozen, IdempotencyKeyReused. */
    grant(request: GrantsGrantRequest, options?: CallOptions): Promise<GrantsGrantResponse>;
    /** memory.grants.list: Grants in a space: the admin view or the caller's own. Rejects with NotFound, PermissionDenied, CursorInvalid. */
    list(request: GrantsListRequest, options?: CallOptions): Promise<GrantsListResponse>;
    /** memory.grants.revoke: Terminally revoke a grant. Rejects with NotFound, PermissionDenied, SpaceFrozen, GrantRevoked, IdempotencyKeyReused. */
    revoke(request: GrantsRevokeRequest, options?: CallOptions): Promise<GrantsRevokeResponse>;
}
/** memory.imports.* */
export interface ImportsPort {
    /** memory.imports.activate: Atomic visibility flip to a verified import; bumps authority_generation (answers pending). Rejects with NotFound, PermissionDenied, IdempotencyKeyReused, ImportStateConflict. */
    activate(request: ImportsActivateRequest, options?: CallOptions): Promise<ImportsActivateResponse>;
    /** memory.imports.discard: Pre-activation rollback of staged data. Rejects with NotFound, PermissionDenied, IdempotencyKeyReused, ImportStateConflict. */
    discard(request: ImportsDiscardRequest, options?: CallOptions): Promise<ImportsDiscardResponse>;
    /** memory.imports.stage: Stage export chunks in strict ordinal order; the final chunk is verified (answers pending). Rejects with InvalidInput, NotFound, PermissionDenied, IdempotencyKeyReused, ContentTooLarge, ImportOrderViolation, ImportStateConflict. */
    stage(request: ImportsStageRequest, options?: CallOptions): Promise<ImportsStageResponse>;
}
/** memory.profile.* */
export interface ProfilePort {
    /** memory.profile.get: Authored profile documents; absent kinds are an honest empty. Rejects with NotFound, PermissionDenied. */
    get(request: ProfileGetRequest, options?: CallOptions): Promise<ProfileGetResponse>;
    /** memory.profile.update: Create or update an authored profile document. Rejects with NotFound, PermissionDenied, RevisionConflict, SpaceFrozen, SubjectFenced, SubjectArchived, IdempotencyKeyReused, ContentTooLarge. */
    update(request: ProfileUpdateRequest, options?: CallOptions): Promise<ProfileUpdateResponse>;
}
/** memory.receipts.* */
export interface ReceiptsPort {
    /** memory.receipts.get: Poll a receipt, or resolve an uncertain outcome by (space_id, op, idempotency_key). Rejects with NotFound. */
    get(request?: ReceiptsGetRequest, options?: CallOptions): Promise<ReceiptsGetResponse>;
}
/** memory.records.* */
export interface RecordsPort {
    /** memory.records.create: Direct authored write of a record. Rejects with InvalidInput, NotFound, PermissionDenied, SpaceFrozen, SubjectFenced, SubjectArchived, ContextFenced, IdempotencyKeyReused, ContentTooLarge. */
    create(request: RecordsCreateRequest, options?: CallOptions): Promise<RecordsCreateResponse>;
    /** memory.records.delete: Erase a record's content and keep a tombstone. Rejects with NotFound, PermissionDenied, RevisionConflict, SpaceFrozen, SubjectFenced, SubjectArchived, ContextFenced, RecordTombstoned, IdempotencyKeyReused. */
    delete(request: RecordsDeleteRequest, options?: CallOptions): Promise<RecordsDeleteResponse>;
    /** memory.records.get: One retained record, tombstoned ones included. Rejects with NotFound. */
    get(request: RecordsGetRequest, options?: CallOptions): Promise<RecordsGetResponse>;
    /** memory.records.list: Records by selection and filters, newest first, with total_authorized. Rejects with InvalidInput, NotFound, PermissionDenied, CursorInvalid. */
    list(request: RecordsListRequest, options?: CallOptions): Promise<RecordsListResponse>;
    /** memory.records.promote: Explicit placement change between contexts or to shared. Rejects with NotFound, PermissionDenied, RevisionConflict, SpaceFrozen, SubjectFenced, SubjectArchived, ContextFenced, RecordTombstoned, IdempotencyKeyReused. */
    promote(request: RecordsPromoteRequest, options?: CallOptions): Promise<RecordsPromoteResponse>;
    /** memory.records.update: Update a record's content or kind (placement changes use promote). Rejects with InvalidInput, NotFound, PermissionDenied, RevisionConflict, SpaceFrozen, SubjectFenced, SubjectArchived, ContextFenced, RecordTombstoned, IdempotencyKeyReused, ContentTooLarge. */
    update(request: RecordsUpdateRequest, options?: CallOptions): Promise<RecordsUpdateResponse>;
}
/** memory.reflections.* */
export interface ReflectionsPort {
    /** memory.reflections.generate: Explicit, cost-bearing generation over a pinned basis (answers pending). Rejects with InvalidInput, NotFound, PermissionDenied, SpaceFrozen, SubjectFenced, SubjectArchived, IdempotencyKeyReused, RequiredProfileMissing, InsufficientData. */
    generate(request: ReflectionsGenerateRequest, options?: CallOptions): Promise<ReflectionsGenerateResponse>;
    /** memory.reflections.list: Reflections whose pinned filter equals the request's, newest first. Rejects with InvalidInput, NotFound, PermissionDenied, CursorInvalid. */
    list(request: ReflectionsListRequest, options?: CallOptions): Promise<ReflectionsListResponse>;
    /** memory.reflections.state: Current basis digest, staleness, data sufficiency and missing required kinds. Rejects with InvalidInput, NotFound, PermissionDenied. */
    state(request: ReflectionsStateRequest, options?: CallOptions): Promise<ReflectionsStateResponse>;
}
/** memory.spaces.* */
export interface SpacesPort {
    /** memory.spaces.freeze: Freeze a space for maintenance or migration. Rejects with NotFound, PermissionDenied, SpaceFrozen, IdempotencyKeyReused. */
    freeze(request: SpacesFreezeRequest, options?: CallOptions): Promise<SpacesFreezeResponse>;
    /** memory.spaces.list: Spaces where the caller holds an effective grant, with pending_receipts. */
    list(request?: SpacesListRequest, options?: CallOptions): Promise<SpacesListResponse>;
    /** memory.spaces.unfreeze: Re-open a frozen space. Rejects with NotFound, PermissionDenied, IdempotencyKeyReused. */
    unfreeze(request: SpacesUnfreezeRequest, options?: CallOptions): Promise<SpacesUnfreezeResponse>;
}
/** memory.subjects.* */
export interface SubjectsPort {
    /** memory.subjects.ensure: Idempotent get-or-create of a subject. Rejects with InvalidInput, NotFound, PermissionDenied, SpaceFrozen, SubjectKindConflict, IdempotencyKeyReused. */
    ensure(request: SubjectsEnsureRequest, options?: CallOptions): Promise<SubjectsEnsureResponse>;
    /** memory.subjects.fence: Fence, unfence or archive a subject; fence or unfence one placement context. Rejects with InvalidInput, NotFound, PermissionDenied, SpaceFrozen, SubjectArchived, IdempotencyKeyReused. */
    fence(request: SubjectsFenceRequest, options?: CallOptions): Promise<SubjectsFenceResponse>;
    /** memory.subjects.get: One subject. Rejects with NotFound. */
    get(request: SubjectsGetRequest, options?: CallOptions): Promise<SubjectsGetResponse>;
}
/**
 * One typed method per `memory.*` op, grouped as the clients group them: `records.get`,
 * `recall`. Over HTTP the principal is the bearer token the client was made with; errors
 * reject the promise with a `SpokeError`, never resolve.
 */
export interface MemoryPort {
    readonly candidates: CandidatesPort;
    readonly exports: ExportsPort;
    readonly grants: GrantsPort;
    readonly imports: ImportsPort;
    readonly profile: ProfilePort;
    readonly receipts: ReceiptsPort;
    readonly records: RecordsPort;
    readonly reflections: ReflectionsPort;
    readonly spaces: SpacesPort;
    readonly subjects: SubjectsPort;
    /** memory.capture: Capture raw material into pending candidates, one per item. Rejects with InvalidInput, NotFound, PermissionDenied, SpaceFrozen, SubjectFenced, SubjectArchived, ContextFenced, IdempotencyKeyReused, ContentTooLarge. */
    capture(request: CaptureRequest, options?: CallOptions): Promise<CaptureResponse>;
    /** memory.describe: Provider self-description: protocol version, served flags, limits, required profile kinds, engine policy version. */
    describe(request?: DescribeRequest, options?: CallOptions): Promise<DescribeResponse>;
    /** memory.recall: Authorized, ranked, budgeted execution-time read. Rejects with InvalidInput, NotFound, PermissionDenied. */
    recall(request: RecallRequest, options?: CallOptions): Promise<RecallResponse>;
}
