/**
 * The one request path the generated op namespaces call (`Caller`), and the hand-written method
 * the receipts namespace inherits: `receipts.wait`, which polls a pending receipt to its end.
 */
import { ReceiptTimeout } from "./spoke-error.js";
/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms, signal) {
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
    #caller;
    constructor(caller) {
        this.#caller = caller;
    }
    /**
     * Poll memory.receipts.get until the receipt is `committed` or `failed` (a failed receipt is
     * returned, not thrown: its `failure` says why). Rejects with `ReceiptTimeout` after
     * `timeoutMs`, with the signal's reason when `signal` aborts.
     */
    async wait(receiptId, options = {}) {
        const { timeoutMs = 60_000, maxIntervalMs = 1_000, signal } = options;
        let interval = options.intervalMs ?? 50;
        const deadline = Date.now() + timeoutMs;
        for (;;) {
            const answer = (await this.#caller.call("memory.receipts.get", { receipt_id: receiptId }, { signal }));
            const receipt = answer.receipt;
            if (receipt.status !== "pending")
                return receipt;
            const left = deadline - Date.now();
            if (left <= 0)
                throw new ReceiptTimeout(receipt, timeoutMs);
            await sleep(Math.min(interval, left), signal);
            interval = Math.min(maxIntervalMs, interval * 1.5);
        }
    }
}
