/**
 * The one request path the generated op namespaces call (`Caller`), and the hand-written method
 * the receipts namespace inherits: `receipts.wait`, which polls a pending receipt to its end.
 */

import { ReceiptTimeout } from "./spoke-error.js";
import type { CallOptions, MemoryReceipt, ReceiptsGetResponse } from "./types.js";

/** Sends one op (the client's request path: session, idempotency key, retries, errors). */
export interface Caller {
  call(op: string, body: object, options?: CallOptions): Promise<unknown>;
}

/** Options of `receipts.wait`. */
export interface WaitOptions extends CallOptions {
  /** Give up after this long (default 60 000 ms): rejects with `ReceiptTimeout`. */
  timeoutMs?: number;
  /** First pause between polls (default 50 ms), growing by half each poll... */
  intervalMs?: number;
  /** ...up to this (default 1 000 ms). */
  maxIntervalMs?: number;
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export class ReceiptsWait {
  readonly #caller: Caller;

  constructor(caller: Caller) {
    this.#caller = caller;
  }

  /**
   * Poll memory.receipts.get until the receipt is `committed` or `failed` (a failed receipt is
   * returned, not thrown: its `failure` says why). Rejects with `ReceiptTimeout` after
   * `timeoutMs`, with the signal's reason when `signal` aborts.
   */
  async wait(receiptId: string, options: WaitOptions = {}): Promise<MemoryReceipt> {
    const { timeoutMs = 60_000, maxIntervalMs = 1_000, signal } = options;
    let interval = options.intervalMs ?? 50;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const answer = (await this.#caller.call(
        "memory.receipts.get",
        { receipt_id: receiptId },
        { signal },
      )) as ReceiptsGetResponse;
      const receipt = answer.receipt;
      if (receipt.status !== "pending") return receipt;
      const left = deadline - Date.now();
      if (left <= 0) throw new ReceiptTimeout(receipt, timeoutMs);
      await sleep(Math.min(interval, left), signal);
      interval = Math.min(maxIntervalMs, interval * 1.5);
    }
  }
}
