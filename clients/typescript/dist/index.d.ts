/**
 * spoke-memory-client: a typed client of the spoke-memory wire family for Node 20+ and browsers.
 *
 *   import { MemoryClient } from "spoke-memory-client";
 *   const client = new MemoryClient("http://127.0.0.1:8000", token, { capabilities: ["spoke-memory"] });
 *   await client.recall({ space_id: "demo", subject_id: "user:ada", query: { text: "tea" } });
 */
export { type ClientOptions, MemoryClient, VERSION, errorFrom, newIdempotencyKey } from "./client.js";
export * from "./errors.js";
export * from "./ops.js";
export { MemoryPorts } from "./ports.js";
export { ReceiptsWait, type WaitOptions } from "./receipts-wait.js";
export { MATCH_KEY, type RecallMatch, aboveMinScore, recallMatch } from "./recall.js";
export { ConnectionFailed, ReceiptTimeout, SpokeError, UnexpectedResponse } from "./spoke-error.js";
export * from "./types.js";
