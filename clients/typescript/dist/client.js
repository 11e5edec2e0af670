/**
 * MemoryClient: the wire over HTTP with the platform's `fetch` (Node 20+, browsers): session
 * negotiation through /v1/connect, an idempotency key on every mutation, bounded retries with
 * backoff, typed errors and an AbortSignal on every call. The op methods are generated
 * (`ops.ts`); this module holds the one request path they share (`HttpCaller`).
 */
import { ERRORS, RateLimited, SessionInvalid, Unavailable } from "./errors.js";
import { MemoryOps } from "./ops.js";
import { sleep } from "./receipts-wait.js";
import { ConnectionFailed, SpokeError, UnexpectedResponse } from "./spoke-error.js";
import { OPS, } from "./types.js";
export const VERSION = "0.1.0";
/** A fresh key for one logical mutation (reused by every retry of it): 128 random bits. */
export function newIdempotencyKey() {
    // getRandomValues, not randomUUID: browsers offer randomUUID in secure contexts only.
    const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
    return "ts-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
function isObject(value) {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
/** The error of an error answer: the class of its code, SpokeError for a code unknown here. */
export function errorFrom(status, body, retryAfterMs = null) {
    const error = isObject(body) ? body["error"] : undefined;
    if (!isObject(error) || typeof error["code"] !== "string") {
        return new UnexpectedResponse("unexpected_response", status, `HTTP ${status} without an error envelope`);
    }
    const code = error["code"];
    const Class = Object.hasOwn(ERRORS, code) ? ERRORS[code] : SpokeError;
    return new Class(code, status, String(error["message"] ?? ""), isObject(error["details"]) ? error["details"] : {}, isObject(error["extensions"]) ? error["extensions"] : {}, retryAfterMs);
}
function retryAfter(response) {
    const value = response.headers.get("Retry-After");
    if (value === null || value.trim() === "")
        return null;
    const seconds = Number(value);
    return Number.isFinite(seconds) ? Math.max(0, seconds) * 1000 : null; // an HTTP date: backoff
}
/** `promise`, or the signal's reason as soon as it aborts (the work itself goes on). */
function untilAborted(promise, signal) {
    if (signal === undefined)
        return promise;
    if (signal.aborted)
        return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
        promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
}
/** Aborts when `outer` aborts or after `ms`; `done()` releases the timer and the listener. */
function attemptSignal(outer, ms) {
    const controller = new AbortController();
    const onAbort = () => controller.abort(outer?.reason);
    outer?.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${ms} ms`)), ms);
    return {
        signal: controller.signal,
        done: () => {
            clearTimeout(timer);
            outer?.removeEventListener("abort", onAbort);
        },
    };
}
/** The request path: configuration, the token, the session and the one retry policy. */
class HttpCaller {
    baseUrl;
    capabilities;
    timeoutMs;
    maxRetries;
    backoffMs;
    maxBackoffMs;
    session = null;
    #connecting = null;
    #token;
    #fetch;
    constructor(baseUrl, token, options) {
        if (!token)
            throw new TypeError("a bearer token is required");
        this.baseUrl = baseUrl.replace(/\/+$/, "");
        this.capabilities = options.capabilities ? [...new Set(options.capabilities)].sort() : null;
        this.timeoutMs = options.timeoutMs ?? 30_000;
        this.maxRetries = options.maxRetries ?? 4;
        this.backoffMs = options.backoffMs ?? 200;
        this.maxBackoffMs = options.maxBackoffMs ?? 10_000;
        this.#token = token;
        this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    }
    /**
     * The body without absent (undefined) members, a fresh idempotency key for a mutating op that
     * has none, and whether the call may be re-sent after no answer (reads always; mutations
     * because they carry a key; an op unknown to this client, which it cannot key, never).
     */
    static prepare(op, body) {
        const prepared = {};
        for (const [key, value] of Object.entries(body))
            if (value !== undefined)
                prepared[key] = value;
        const info = Object.hasOwn(OPS, op) ? OPS[op] : undefined;
        if (info?.mutating && prepared["idempotency_key"] === undefined) {
            prepared["idempotency_key"] = newIdempotencyKey();
        }
        const resendable = (info !== undefined && !info.mutating) || prepared["idempotency_key"] !== undefined;
        return { body: prepared, resendable };
    }
    async call(op, body, options = {}) {
        const prepared = HttpCaller.prepare(op, body);
        const path = `/v1/ops/${op}`;
        if (this.capabilities !== null)
            await this.#open(options.signal);
        const used = this.session;
        try {
            return await this.post(path, prepared.body, prepared.resendable, options.signal);
        }
        catch (error) {
            if (!(error instanceof SessionInvalid) || this.capabilities === null)
                throw error;
            // Expired or closed: reopen once (unless another call already has), the same request again.
            await this.#open(options.signal, this.session === used);
            return await this.post(path, prepared.body, prepared.resendable, options.signal);
        }
    }
    /**
     * The session for a call: the open one, or one connect shared by every call that needs it at
     * once (a `Promise.all` of ten calls opens one session, not ten). `renew` replaces the current
     * session (found invalid). The shared connect runs without any one caller's signal; each
     * caller stops waiting at its own.
     */
    #open(signal, renew = false) {
        if (this.#connecting === null && (renew || this.session === null)) {
            this.#connecting = this.connect().finally(() => {
                this.#connecting = null;
            });
        }
        return untilAborted(this.#connecting ?? Promise.resolve(this.session), signal);
    }
    async connect(options = {}) {
        if (this.capabilities === null)
            throw new TypeError("this client was made without capabilities");
        this.session = null;
        const answer = (await this.post("/v1/connect", { capabilities: this.capabilities }, true, options.signal));
        this.session = answer.session;
        return answer.session;
    }
    async disconnect(options = {}) {
        if (this.session === null)
            return;
        try {
            await this.post("/v1/disconnect", {}, true, options.signal);
        }
        catch (error) {
            if (!(error instanceof SpokeError))
                throw error; // an abort; expired or unreachable: done
        }
        finally {
            this.session = null;
        }
    }
    delay(attempt, retryAfterMs) {
        if (retryAfterMs !== null)
            return Math.min(retryAfterMs, 60_000);
        const base = Math.min(this.maxBackoffMs, this.backoffMs * 2 ** attempt);
        return base * (0.5 + Math.random() / 2);
    }
    headers() {
        const headers = {
            Authorization: `Bearer ${this.#token}`,
            "Content-Type": "application/json",
            Accept: "application/json",
        };
        if (this.session !== null)
            headers["Spoke-Session"] = this.session.session_id;
        return headers;
    }
    /** One request, re-sent per the retry policy (docs/clients.md); resolves to the answer's body. */
    async post(path, body, resendable, signal) {
        const payload = JSON.stringify(body);
        for (let attempt = 0;; attempt++) {
            signal?.throwIfAborted();
            const attemptAbort = attemptSignal(signal, this.timeoutMs);
            let status;
            let text;
            let response;
            try {
                response = await this.#fetch(this.baseUrl + path, {
                    method: "POST",
                    headers: this.headers(),
                    body: payload,
                    signal: attemptAbort.signal,
                });
                status = response.status;
                text = await response.text();
            }
            catch (error) {
                if (signal?.aborted)
                    throw signal.reason;
                if (!resendable || attempt >= this.maxRetries) {
                    const why = error instanceof Error ? error.message : String(error);
                    throw new ConnectionFailed("connection_failed", null, `no answer from the provider (${why})`, {}, {}, null, error);
                }
                await sleep(this.delay(attempt, null), signal);
                continue;
            }
            finally {
                attemptAbort.done();
            }
            let parsed = undefined;
            try {
                parsed = JSON.parse(text);
            }
            catch {
                parsed = undefined;
            }
            if (status === 200) {
                if (isObject(parsed))
                    return parsed;
                throw new UnexpectedResponse("unexpected_response", 200, "the answer is not a JSON object");
            }
            const error = errorFrom(status, parsed, retryAfter(response));
            if ((error instanceof Unavailable || error instanceof RateLimited) && attempt < this.maxRetries) {
                await sleep(this.delay(attempt, error.retryAfterMs), signal);
                continue;
            }
            throw error;
        }
    }
}
const INSPECT = Symbol.for("nodejs.util.inspect.custom");
/**
 * A client of one provider, as one principal (its bearer token): one method per op
 * (`client.records.get({...})`, `client.recall({...})`), each taking an optional last
 * `{ signal }`. The token is kept in a private field: never in `toString()`, `JSON.stringify`,
 * `util.inspect` or an error.
 */
export class MemoryClient extends MemoryOps {
    #http;
    constructor(baseUrl, token, options = {}) {
        const http = new HttpCaller(baseUrl, token, options);
        super(http);
        this.#http = http;
    }
    get baseUrl() {
        return this.#http.baseUrl;
    }
    get capabilities() {
        return this.#http.capabilities;
    }
    /** The session the client opened (with `capabilities`), or null. */
    get session() {
        return this.#http.session;
    }
    /** Open (or reopen) the session for `capabilities`; the first call does it when needed. */
    connect(options) {
        return this.#http.connect(options);
    }
    /** Close the session, if one is open (`POST /v1/disconnect`). */
    close(options) {
        return this.#http.disconnect(options);
    }
    op(name, body = {}, options) {
        return this.#http.call(name, body, options);
    }
    toString() {
        const session = this.session ? JSON.stringify(this.session.session_id) : "null";
        const caps = this.capabilities ? JSON.stringify(this.capabilities) : "null";
        return `MemoryClient(baseUrl=${JSON.stringify(this.baseUrl)}, capabilities=${caps}, session=${session})`;
    }
    toJSON() {
        return { baseUrl: this.baseUrl, capabilities: this.capabilities, session: this.session?.session_id ?? null };
    }
    [INSPECT]() {
        return this.toString();
    }
}
