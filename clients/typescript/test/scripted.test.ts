// The client's own decisions, against scripted answers (the `fetch` option), where the live
// provider cannot be made to give them: session expiry and reconnection, an answer that is not
// the wire's, a code this client does not know, ReceiptTimeout, Retry-After, no re-send of an
// op it cannot key.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  ConnectionFailed,
  MemoryClient,
  RateLimited,
  ReceiptTimeout,
  SpokeError,
  UnexpectedResponse,
  newIdempotencyKey,
} from "spoke-memory-client";

type Answer = Response | Error;

function scripted(...answers: Answer[]) {
  const sent: { url: string; headers: Headers; body: { [key: string]: unknown } }[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    sent.push({ url: String(input), headers: new Headers(init?.headers), body: JSON.parse(String(init?.body ?? "{}")) });
    const answer = answers.shift();
    if (answer === undefined) throw new Error("no scripted answer left");
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { fetch: fetch as typeof globalThis.fetch, sent };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });
}

function wireError(status: number, code: string): Response {
  return json(status, { error: { code, message: "no", details: { why: 1 }, extensions: {} } });
}

const SESSION = { session_id: "ses_1", negotiated_capabilities: ["spoke-memory"] };
const PENDING = { receipt: { receipt_id: "rct_1", status: "pending", refs: [] } };

test("an expired session is reopened once and the same request (same key) sent again", async () => {
  const { fetch, sent } = scripted(
    json(200, { session: SESSION }),
    wireError(401, "session_invalid"),
    json(200, { session: { ...SESSION, session_id: "ses_2" } }),
    json(200, { receipt: { receipt_id: "rct_1", status: "committed", refs: [] } }),
  );
  const client = new MemoryClient("http://spoke.test/", "tok", { capabilities: ["spoke-memory", "spoke-memory"], fetch });
  await client.subjects.ensure({ space_id: "s1", subject_id: "u1" });
  assert.deepEqual(sent.map((s) => new URL(s.url).pathname), ["/v1/connect", "/v1/ops/memory.subjects.ensure", "/v1/connect", "/v1/ops/memory.subjects.ensure"]);
  assert.deepEqual(sent[0]?.body, { capabilities: ["spoke-memory"] });
  assert.equal(sent[1]?.headers.get("Spoke-Session"), "ses_1");
  assert.equal(sent[3]?.headers.get("Spoke-Session"), "ses_2");
  assert.equal(sent[3]?.headers.get("Authorization"), "Bearer tok");
  assert.equal(sent[1]?.body["idempotency_key"], sent[3]?.body["idempotency_key"]);
  assert.equal(client.session?.session_id, "ses_2");
});

test("an answer that is not the wire's rejects with UnexpectedResponse; an unknown code with SpokeError", async () => {
  const html = new Response("<html>bad gateway</html>", { status: 502, headers: { "Content-Type": "text/html" } });
  const { fetch } = scripted(html, wireError(418, "TEAPOT"), json(200, [1, 2]));
  const client = new MemoryClient("http://spoke.test", "tok", { fetch });
  await assert.rejects(client.describe(), (e: unknown) => e instanceof UnexpectedResponse && e.status === 502);
  await assert.rejects(client.describe(), (e: unknown) => e instanceof SpokeError && e.constructor === SpokeError && e.code === "TEAPOT" && e.details["why"] === 1);
  await assert.rejects(client.describe(), (e: unknown) => e instanceof UnexpectedResponse && e.status === 200);
});

test("429 is retried after Retry-After, at most maxRetries times", async () => {
  const limited = () => wireError(429, "rate_limited");
  const { fetch, sent } = scripted(
    new Response(JSON.stringify({ error: { code: "rate_limited", message: "slow" } }), { status: 429, headers: { "Retry-After": "0" } }),
    limited(),
    limited(),
  );
  const client = new MemoryClient("http://spoke.test", "tok", { fetch, maxRetries: 2, backoffMs: 1, maxBackoffMs: 2 });
  const error: unknown = await client.describe().catch((e: unknown) => e);
  assert.ok(error instanceof RateLimited);
  assert.equal(error.status, 429);
  assert.equal(sent.length, 3);
});

test("an op unknown to the client is not re-sent after no answer (it cannot be keyed)", async () => {
  const { fetch, sent } = scripted(new TypeError("fetch failed"), json(200, {}));
  const client = new MemoryClient("http://spoke.test", "tok", { fetch, backoffMs: 1 });
  const error: unknown = await client.op("memory.someday.new", { x: 1 }).catch((e: unknown) => e);
  assert.ok(error instanceof ConnectionFailed);
  assert.ok(error.cause instanceof TypeError);
  assert.equal(sent.length, 1);
  assert.deepEqual(sent[0]?.body, { x: 1 });
});

test("receipts.wait polls a pending receipt and gives up with ReceiptTimeout", async () => {
  const { fetch, sent } = scripted(json(200, PENDING), json(200, PENDING), json(200, PENDING), json(200, PENDING));
  const client = new MemoryClient("http://spoke.test", "tok", { fetch });
  const error: unknown = await client.receipts.wait("rct_1", { timeoutMs: 30, intervalMs: 10 }).catch((e: unknown) => e);
  assert.ok(error instanceof ReceiptTimeout, String(error));
  assert.equal(error.receipt.receipt_id, "rct_1");
  assert.ok(sent.length >= 2);
  assert.deepEqual(sent[0]?.body, { receipt_id: "rct_1" });
});

test("absent (undefined) members are not sent", async () => {
  const { fetch, sent } = scripted(json(200, { records: [], total_authorized: 0, next_cursor: null }));
  const client = new MemoryClient("http://spoke.test", "tok", { fetch });
  await client.records.list({ space_id: "s1", subject_id: undefined, page_size: 5 });
  assert.deepEqual(sent[0]?.body, { space_id: "s1", page_size: 5 });
});

test("calls made at once share one session: one connect, not one each", async () => {
  const committed = () => json(200, { receipt: { receipt_id: "rct_1", status: "committed", refs: [] } });
  const { fetch, sent } = scripted(json(200, { session: SESSION }), committed(), committed(), committed());
  const client = new MemoryClient("http://spoke.test", "tok", { capabilities: ["spoke-memory"], fetch });
  await Promise.all([1, 2, 3].map((n) => client.subjects.ensure({ space_id: "s1", subject_id: `u${n}` })));
  const paths = sent.map((s) => new URL(s.url).pathname);
  assert.deepEqual(paths.filter((p) => p === "/v1/connect"), ["/v1/connect"]);
  assert.ok(sent.slice(1).every((s) => s.headers.get("Spoke-Session") === "ses_1"));
});

test("a fresh key is 128 random bits in hex, never the same twice", () => {
  const keys = new Set(Array.from({ length: 100 }, () => newIdempotencyKey()));
  assert.equal(keys.size, 100);
  for (const key of keys) assert.match(key, /^ts-[0-9a-f]{32}$/);
});
