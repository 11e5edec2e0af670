// What the client does for a caller, against the live provider: typed errors (a revision
// conflict, not-found, a bad token), paging, a retry that replays, aborted calls, the token kept
// out of sight.
import assert from "node:assert/strict";
import { inspect } from "node:util";
import { after, before, describe, test } from "node:test";

import {
  ConnectionFailed,
  MemoryClient,
  NotFound,
  RevisionConflict,
  SpokeError,
  Unauthenticated,
} from "spoke-memory-client";

import { connected, live, skip } from "./env.js";
import { Proxy } from "./proxy.js";

const SHARED = { scope: "shared" } as const;

async function create(client: MemoryClient, subject: string, text: string, key?: string) {
  const answer = await client.records.create({
    space_id: live.space,
    subject_id: subject,
    kind: "fact",
    content: { text },
    placement: SHARED,
    idempotency_key: key,
  });
  return answer.receipt;
}

describe("errors, paging, retries, aborts", { skip }, () => {
  let client: MemoryClient;
  let proxy: Proxy;

  before(async () => {
    client = await connected();
    await client.subjects.ensure({ space_id: live.space, subject_id: "user:beh" });
    proxy = await Proxy.start(live.url);
  });
  after(async () => {
    await client?.close();
    await proxy?.close();
  });

  test("a stale expected_revision rejects with RevisionConflict and changes nothing", async () => {
    const recordId = (await create(client, "user:beh", "lives in Lisbon")).refs[0]!.id;
    await client.records.update({ space_id: live.space, record_id: recordId, expected_revision: 1, content: { text: "lives in Porto" } });
    const stale = client.records.update({ space_id: live.space, record_id: recordId, expected_revision: 1, content: { text: "lives in Faro" } });
    await assert.rejects(stale, (error: unknown) => {
      assert.ok(error instanceof RevisionConflict && error instanceof SpokeError);
      assert.equal(error.code, "REVISION_CONFLICT");
      assert.equal(error.status, 409);
      assert.equal(error.details["current_revision"], 2);
      assert.equal(error.name, "RevisionConflict");
      return true;
    });
    const { record } = await client.records.get({ space_id: live.space, record_id: recordId });
    assert.deepEqual([record.revision, record.content.text], [2, "lives in Porto"]);
  });

  test("an absent record rejects with NotFound", async () => {
    await assert.rejects(client.records.get({ space_id: live.space, record_id: "rec_00000000000000000000000000" }), (error: unknown) => {
      assert.ok(error instanceof NotFound);
      assert.equal(error.status, 404);
      assert.equal(error.code, "NOT_FOUND");
      return true;
    });
  });

  test("a wrong token rejects with Unauthenticated, and no error or view shows a token", async () => {
    const secret = "spk_not_a_real_token_123456";
    const stranger = new MemoryClient(live.url, secret);
    const error: unknown = await stranger.describe().catch((e: unknown) => e);
    assert.ok(error instanceof Unauthenticated);
    assert.equal(error.status, 401);
    for (const view of [String(stranger), inspect(stranger, { showHidden: true, depth: 9 }), JSON.stringify(stranger), String(error), inspect(error)]) {
      assert.ok(!view.includes(secret), view);
    }
    for (const view of [String(client), inspect(client, { showHidden: true, depth: 9 }), JSON.stringify(client)]) {
      assert.ok(!view.includes(live.token), view);
    }
    assert.match(String(client), /^MemoryClient\(baseUrl=/);
  });

  test("pages: list follows next_cursor by hand, iter walks the same records", async () => {
    await client.subjects.ensure({ space_id: live.space, subject_id: "user:pages" });
    const made: string[] = [];
    for (let n = 0; n < 7; n++) made.push((await create(client, "user:pages", `note ${n}`)).refs[0]!.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await client.records.list({ space_id: live.space, subject_id: "user:pages", page_size: 3, ...(cursor ? { cursor } : {}) });
      assert.equal(page.total_authorized, 7);
      seen.push(...page.records.map((r) => r.record_id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.deepEqual([...seen].sort(), [...made].sort());
    const walked: string[] = [];
    for await (const record of client.records.iter({ space_id: live.space, subject_id: "user:pages", page_size: 3 })) {
      walked.push(record.record_id);
    }
    assert.deepEqual(walked, seen);
  });

  test("an answer lost after the write: the retry replays it with the same key, the write runs once", async () => {
    const viaProxy = await connected(proxy.url, { backoffMs: 1, maxBackoffMs: 5 });
    await viaProxy.connect();
    const before = proxy.seen.length;
    proxy.plan.push("lose-answer", "pass");
    const receipt = await create(viaProxy, "user:beh", "written once");
    const sent = proxy.seen.slice(before);
    assert.equal(sent.length, 2, "the client sent the create twice");
    const [first, second] = sent.map((s) => s.body["idempotency_key"]);
    assert.ok(typeof first === "string" && first.startsWith("ts-"));
    assert.equal(second, first, "the retry carried the first attempt's key");
    const byKey = await client.receipts.get({ space_id: live.space, op: "memory.records.create", idempotency_key: first });
    assert.deepEqual(byKey.receipt, receipt, "the answer is the first attempt's receipt, replayed");
    const written = (await client.records.list({ space_id: live.space, subject_id: "user:beh" })).records.filter(
      (r) => r.content.text === "written once",
    );
    assert.equal(written.length, 1);
  });

  test("503 is retried (Retry-After honoured); a read with no answer becomes ConnectionFailed", async () => {
    const viaProxy = await connected(proxy.url, { backoffMs: 1, maxBackoffMs: 5, maxRetries: 2 });
    await viaProxy.connect();
    const before = proxy.seen.length;
    proxy.plan.push("unavailable", "unavailable", "pass");
    const { subject } = await viaProxy.subjects.get({ space_id: live.space, subject_id: "user:beh" });
    assert.equal(subject.subject_id, "user:beh");
    assert.equal(proxy.seen.length - before, 3);
    proxy.plan.push("lose-answer", "lose-answer", "lose-answer");
    const error: unknown = await viaProxy.subjects.get({ space_id: live.space, subject_id: "user:beh" }).catch((e: unknown) => e);
    assert.ok(error instanceof ConnectionFailed, String(error));
    assert.equal(error.status, null);
    assert.equal(proxy.seen.length - before, 6, "first attempt and maxRetries re-sends");
  });

  test("a fresh key per mutating call, or the caller's own", async () => {
    const viaProxy = await connected(proxy.url);
    await viaProxy.connect();
    const before = proxy.seen.length;
    await viaProxy.subjects.ensure({ space_id: live.space, subject_id: "user:beh" });
    await viaProxy.subjects.ensure({ space_id: live.space, subject_id: "user:beh" });
    await viaProxy.subjects.ensure({ space_id: live.space, subject_id: "user:beh", idempotency_key: "mine-1" });
    await viaProxy.subjects.get({ space_id: live.space, subject_id: "user:beh" });
    const keys = proxy.seen.slice(before).map((s) => s.body["idempotency_key"]);
    assert.equal(keys.length, 4);
    assert.notEqual(keys[0], keys[1]);
    assert.equal(keys[2], "mine-1");
    assert.equal(keys[3], undefined, "reads carry no key");
  });

  test("an aborted call rejects with the signal's reason; an already aborted one sends nothing", async () => {
    const viaProxy = await connected(proxy.url);
    await viaProxy.connect();
    const before = proxy.seen.length;
    const early = AbortSignal.abort();
    await assert.rejects(viaProxy.describe({}, { signal: early }), { name: "AbortError" });
    assert.equal(proxy.seen.length, before, "nothing was sent");

    proxy.plan.push("hold");
    const controller = new AbortController();
    const held = viaProxy.records.list({ space_id: live.space }, { signal: controller.signal });
    await proxy.arrived(before + 1);
    controller.abort();
    await assert.rejects(held, { name: "AbortError" });
    assert.equal(proxy.seen.length, before + 1, "an abort is not retried");

    const reason = new Error("the user left");
    const waiting = new AbortController();
    const pending = viaProxy.receipts.wait("rct_00000000000000000000000000", { signal: waiting.signal });
    waiting.abort(reason);
    await assert.rejects(pending, (error: unknown) => error === reason);
  });
});

// Compile-time checks (tsc --noEmit in make lint): argument types follow the schemas.
export function typing(client: MemoryClient): void {
  // @ts-expect-error record_id is required by memory.records.get
  void client.records.get({ space_id: "s1" });
  // @ts-expect-error kind is a string, not a number
  void client.records.update({ space_id: "s1", record_id: "rec_1", expected_revision: 1, kind: 3 });
  // @ts-expect-error placement scope is "shared" or "context"
  void client.records.promote({ space_id: "s1", record_id: "rec_1", expected_revision: 1, placement: { scope: "public" } });
  // @ts-expect-error no such op family
  void client.memories;
  // @ts-expect-error a known op's body is typed by op()
  void client.op("memory.records.get", { space_id: "s1" });
  void client.op("memory.someday.new", { anything: true }); // an unknown op: plain objects
}
