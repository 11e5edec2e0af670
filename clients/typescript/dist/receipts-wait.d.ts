/**
 * The one request path the generated op namespaces call (`Caller`), and the hand-written method
 * the receipts namespace inherits: `receipts.wait`, which polls a pending receipt to its end.
 */
import type { CallOptions, MemoryReceipt } from "./types.js";
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
export declare function sleep(ms: number, signal?: AbortSignal): Promise<void>;
export declare class ReceiptsWait {
    #private;
    constructor(caller: Caller);
    /**
     * Poll memory.receipts.get until the receipt is `committed` or `failed` (a failed receipt is
     * returned, not thrown: its `failure` says why). Rejects with `ReceiptTimeout` after
     * `timeoutMs`, with the signal's reason when `signal` aborts.
     */
    wait(receiptId: string, options?: WaitOptions): Promise<MemoryReceipt>;
}
