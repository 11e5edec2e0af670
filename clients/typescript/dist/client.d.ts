/**
 * MemoryClient: the wire over HTTP with the platform's `fetch` (Node 20+, browsers): session
 * negotiation through /v1/connect, an idempotency key on every mutation, bounded retries with
 * backoff, typed errors and an AbortSignal on every call. The op methods are generated
 * (`ops.ts`); this module holds the one request path they share (`HttpCaller`).
 */
import { MemoryOps } from "./ops.js";
import { SpokeError } from "./spoke-error.js";
import { type CallOptions, type KnownOp, type Ops, type Session } from "./types.js";
export declare const VERSION = "0.1.0";
/** Options of `new MemoryClient(baseUrl, token, options)`. */
export interface ClientOptions {
    /**
     * The capability flags to negotiate: the first call opens a session (`POST /v1/connect`) and
     * every call names it. Without, calls are judged with `["spoke-memory"]`.
     */
    capabilities?: readonly string[];
    /** Per attempt, in milliseconds (default 30 000); a timed-out attempt counts as no answer. */
    timeoutMs?: number;
    /** Re-sends after the first attempt (default 4). */
    maxRetries?: number;
    /** First backoff in milliseconds (default 200), doubling per attempt, with jitter... */
    backoffMs?: number;
    /** ...up to this (default 10 000). */
    maxBackoffMs?: number;
    /** The `fetch` to send with (default: the platform's). */
    fetch?: typeof globalThis.fetch;
}
/** A fresh key for one logical mutation (reused by every retry of it): 128 random bits. */
export declare function newIdempotencyKey(): string;
/** The error of an error answer: the class of its code, SpokeError for a code unknown here. */
export declare function errorFrom(status: number, body: unknown, retryAfterMs?: number | null): SpokeError;
declare const INSPECT: unique symbol;
/**
 * A client of one provider, as one principal (its bearer token): one method per op
 * (`client.records.get({...})`, `client.recall({...})`), each taking an optional last
 * `{ signal }`. The token is kept in a private field: never in `toString()`, `JSON.stringify`,
 * `util.inspect` or an error.
 */
export declare class MemoryClient extends MemoryOps {
    #private;
    constructor(baseUrl: string, token: string, options?: ClientOptions);
    get baseUrl(): string;
    get capabilities(): readonly string[] | null;
    /** The session the client opened (with `capabilities`), or null. */
    get session(): Session | null;
    /** Open (or reopen) the session for `capabilities`; the first call does it when needed. */
    connect(options?: CallOptions): Promise<Session>;
    /** Close the session, if one is open (`POST /v1/disconnect`). */
    close(options?: CallOptions): Promise<void>;
    /** Any op by its full name: typed for the ops this client knows, plain objects otherwise. */
    op<N extends KnownOp>(name: N, body: Ops[N]["request"], options?: CallOptions): Promise<Ops[N]["response"]>;
    op<N extends string>(name: N extends KnownOp ? never : N, body?: object, options?: CallOptions): Promise<{
        [key: string]: unknown;
    }>;
    toString(): string;
    toJSON(): object;
    [INSPECT](): string;
}
export {};
