/**
 * MemoryClient: the wire over HTTP with the platform's `fetch` (Node 20+, browsers): session
 * negotiation through /v1/connect, an idempotency key on every mutation, bounded retries with
 * backoff, typed errors and an AbortSignal on every call. The op methods are generated
 * (`ops.ts`); this module holds the one request path they share (`HttpCaller`).
 */

import { ERRORS, RateLimited, SessionInvalid, Unavailable } from "./errors.js";
import { MemoryOps } from "./ops.js";
import { type Caller, sleep } from "./receipts-wait.js";
import { ConnectionFailed, SpokeError, UnexpectedResponse } from "./spoke-error.js";
import {
  type CallOptions,
  type ConnectResponse,
  type KnownOp,
  OPS,
  type Ops,
  type Session,
} from "./types.js";

export const VERSION = "0.1.0";

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
export function newIdempotencyKey(): string {
  // getRandomValues, not randomUUID: browsers offer randomUUID in secure contexts only.
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  return "ts-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The error of an error answer: the class of its code, SpokeError for a code unknown here. */
export function errorFrom(status: number, body: unknown, retryAfterMs: number | null = null): SpokeError {
  const error = isObject(body) ? body["error"] : undefined;
  if (!isObject(error) || typeof error["code"] !== "string") {
    return new UnexpectedResponse("unexpected_response", status, `HTTP ${status} without an error envelope`);
  }
  const code = error["code"];
  const Class = Object.hasOwn(ERRORS, code) ? (ERRORS[code] as typeof SpokeError) : SpokeError;
  return new Class(
    code,
    status,
    String(error["message"] ?? ""),
    isObject(error["details"]) ? error["details"] : {},
    isObject(error["extensions"]) ? error["extensions"] : {},
    retryAfterMs,
  );
}

function retryAfter(response: Response): number | null {
  const value = response.headers.get("Retry-After");
  if (value === null || value.trim() === "") return null;
  const seconds = Number(value);
  return Number.isFinite(seconds) ? Math.max(0, seconds) * 1000 : null; // an HTTP date: backoff
}

/** `promise`, or the signal's reason as soon as it aborts (the work itself goes on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Aborts when `outer` aborts or after `ms`; `done()` releases the timer and the listener. */
function attemptSignal(outer: AbortSignal | undefined, ms: number) {
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
class HttpCaller implements Caller {
  readonly baseUrl: string;
  readonly capabilities: readonly string[] | null;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  session: Session | null = null;
  #connecting: Promise<Session> | null = null;
  readonly #token: string;
  readonly #fetch: typeof globalThis.fetch;

  constructor(baseUrl: string, token: string, options: ClientOptions) {
    if (!token) throw new TypeError("a bearer token is required");
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
  static prepare(op: string, body: object): { body: { [key: string]: unknown }; resendable: boolean } {
    const prepared: { [key: string]: unknown } = {};
    for (const [key, value] of Object.entries(body)) if (value !== undefined) prepared[key] = value;
    const info = Object.hasOwn(OPS, op) ? OPS[op as KnownOp] : undefined;
    if (info?.mutating && prepared["idempotency_key"] === undefined) {
      prepared["idempotency_key"] = newIdempotencyKey();
    }
    const resendable = (info !== undefined && !info.mutating) || prepared["idempotency_key"] !== undefined;
    return { body: prepared, resendable };
  }

  async call(op: string, body: object, options: CallOptions = {}): Promise<unknown> {
    const prepared = HttpCaller.prepare(op, body);
    const path = `/v1/ops/${op}`;
    if (this.capabilities !== null) await this.#open(options.signal);
    const used = this.session;
    try {
      return await this.post(path, prepared.body, prepared.resendable, options.signal);
    } catch (error) {
      if (!(error instanceof SessionInvalid) || this.capabilities === null) throw error;
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
  #open(signal: AbortSignal | undefined, renew = false): Promise<Session> {
    if (this.#connecting === null && (renew || this.session === null)) {
      this.#connecting = this.connect().finally(() => {
        this.#connecting = null;
      });
    }
    return untilAborted(this.#connecting ?? Promise.resolve(this.session as Session), signal);
  }

  async connect(options: CallOptions = {}): Promise<Session> {
    if (this.capabilities === null) throw new TypeError("this client was made without capabilities");
    this.session = null;
    const answer = (await this.post(
      "/v1/connect",
      { capabilities: this.capabilities },
      true,
      options.signal,
    )) as unknown as ConnectResponse;
    this.session = answer.session;
    return answer.session;
  }

  async disconnect(options: CallOptions = {}): Promise<void> {
    if (this.session === null) return;
    try {
      await this.post("/v1/disconnect", {}, true, options.signal);
    } catch (error) {
      if (!(error instanceof SpokeError)) throw error; // an abort; expired or unreachable: done
    } finally {
      this.session = null;
    }
  }

  delay(attempt: number, retryAfterMs: number | null): number {
    if (retryAfterMs !== null) return Math.min(retryAfterMs, 60_000);
    const base = Math.min(this.maxBackoffMs, this.backoffMs * 2 ** attempt);
    return base * (0.5 + Math.random() / 2);
  }

  headers(): Record<string, string> {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.#token}`,
      "Content-Type": "application/json",
      Accept: "application/json",
    };
    if (this.session !== null) headers["Spoke-Session"] = this.session.session_id;
    return headers;
  }

  /** One request, re-sent per the retry policy (docs/clients.md); resolves to the answer's body. */
  async post(
    path: string,
    body: object,
    resendable: boolean,
    signal: AbortSignal | undefined,
  ): Promise<{ [key: string]: unknown }> {
    const payload = JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted();
      const attemptAbort = attemptSignal(signal, this.timeoutMs);
      let status: number;
      let text: string;
      let response: Response;
      try {
        response = await this.#fetch(this.baseUrl + path, {
          method: "POST",
          headers: this.headers(),
          body: payload,
          signal: attemptAbort.signal,
        });
        status = response.status;
        text = await response.text();
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (!resendable || attempt >= this.maxRetries) {
          const why = error instanceof Error ? error.message : String(error);
          throw new ConnectionFailed("connection_failed", null, `no answer from the provider (${why})`, {}, {}, null, error);
        }
        await sleep(this.delay(attempt, null), signal);
        continue;
      } finally {
        attemptAbort.done();
      }
      let parsed: unknown = undefined;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (status === 200) {
        if (isObject(parsed)) return parsed;
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
  readonly #http: HttpCaller;

  constructor(baseUrl: string, token: string, options: ClientOptions = {}) {
    const http = new HttpCaller(baseUrl, token, options);
    super(http);
    this.#http = http;
  }

  get baseUrl(): string {
    return this.#http.baseUrl;
  }

  get capabilities(): readonly string[] | null {
    return this.#http.capabilities;
  }

  /** The session the client opened (with `capabilities`), or null. */
  get session(): Session | null {
    return this.#http.session;
  }

  /** Open (or reopen) the session for `capabilities`; the first call does it when needed. */
  connect(options?: CallOptions): Promise<Session> {
    return this.#http.connect(options);
  }

  /** Close the session, if one is open (`POST /v1/disconnect`). */
  close(options?: CallOptions): Promise<void> {
    return this.#http.disconnect(options);
  }

  /** Any op by its full name: typed for the ops this client knows, plain objects otherwise. */
  op<N extends KnownOp>(name: N, body: Ops[N]["request"], options?: CallOptions): Promise<Ops[N]["response"]>;
  op<N extends string>(
    name: N extends KnownOp ? never : N,
    body?: object,
    options?: CallOptions,
  ): Promise<{ [key: string]: unknown }>;
  op(name: string, body: object = {}, options?: CallOptions): Promise<unknown> {
    return this.#http.call(name, body, options);
  }

  override toString(): string {
    const session = this.session ? JSON.stringify(this.session.session_id) : "null";
    const caps = this.capabilities ? JSON.stringify(this.capabilities) : "null";
    return `MemoryClient(baseUrl=${JSON.stringify(this.baseUrl)}, capabilities=${caps}, session=${session})`;
  }

  toJSON(): object {
    return { baseUrl: this.baseUrl, capabilities: this.capabilities, session: this.session?.session_id ?? null };
  }

  [INSPECT](): string {
    return this.toString();
  }
}
