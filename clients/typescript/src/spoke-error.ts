/**
 * The base of every error the client raises for an error answer (`SpokeError`, one subclass per
 * wire code in the generated `errors.ts`) and the client's own: `ConnectionFailed` (no answer
 * after the retries), `UnexpectedResponse` (an answer that is not the wire's), `ReceiptTimeout`.
 * Messages come from the provider and never hold stored content; the token is never in one.
 */

import type { MemoryReceipt } from "./types.js";

/** An error answer of the provider: `code`, HTTP `status`, `message`, `details` (docs/protocol.md#errors). */
export class SpokeError extends Error {
  /** The wire code of the class (`""` for SpokeError itself). */
  static readonly code: string = "";
  /** The HTTP status of the class's code (`null` for SpokeError itself and the client's own). */
  static readonly status: number | null = null;
  readonly code: string;
  /** The HTTP status of the answer; `null` when none arrived (`ConnectionFailed`). */
  readonly status: number | null;
  readonly details: { [key: string]: unknown };
  readonly extensions: { [key: string]: unknown };
  /** On 429 and 503: the `Retry-After` the provider sent, in milliseconds. */
  readonly retryAfterMs: number | null;

  constructor(
    code: string,
    status: number | null,
    message: string,
    details: { [key: string]: unknown } = {},
    extensions: { [key: string]: unknown } = {},
    retryAfterMs: number | null = null,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    this.code = code;
    this.status = status;
    this.details = details;
    this.extensions = extensions;
    this.retryAfterMs = retryAfterMs;
  }

  override toString(): string {
    return `${this.name}: ${this.code} (${this.status}): ${this.message}`;
  }
}

/** No answer came from the provider (refused, reset, timed out) after the retries; `cause` says why. */
export class ConnectionFailed extends SpokeError {
  static override readonly code = "connection_failed";
  declare readonly code: "connection_failed";
}

/** An answer that is not the wire's (a proxy's HTML error page, a 200 that is not a JSON object). */
export class UnexpectedResponse extends SpokeError {
  static override readonly code = "unexpected_response";
  declare readonly code: "unexpected_response";
}

/** `receipts.wait` gave up while the receipt was still pending; `receipt` is the last one seen. */
export class ReceiptTimeout extends Error {
  readonly receipt: MemoryReceipt;

  constructor(receipt: MemoryReceipt, timeoutMs: number) {
    super(`receipt ${receipt.receipt_id} still ${receipt.status} after ${timeoutMs} ms`);
    this.name = "ReceiptTimeout";
    this.receipt = receipt;
  }
}
