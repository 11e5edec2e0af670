// Every op family's happy path against the live provider, through the typed methods.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { type MemoryClient, type MemoryReceipt, type Ref } from "spoke-memory-client";

import { connected, live, skip } from "./env.js";

const SHARED = { scope: "shared" } as const;

function ref(receipt: MemoryReceipt, type: Ref["type"]): string {
  const found = receipt.refs.find((r) => r.type === type);
  assert.ok(found, `the receipt names a ${type}`);
  return found.id;
}

describe("every op family", { skip }, () => {
  let client: MemoryClient;
  const space = live.space;

  before(async () => {
    client = await connected();
  });
  after(async () => {
    await client?.close();
  });

  test("describe, and the session the first call opened", async () => {
    const { provider } = await client.describe();
    assert.equal(provider.protocol_version, "1");
    assert.ok(provider.served_capabilities.includes("spoke-memory"));
    assert.ok(client.session, "a session was opened");
    assert.deepEqual([...client.session.negotiated_capabilities].sort(), [...provider.served_capabilities].sort());
  });

  test("subjects: ensure, get, fence and unfence", async () => {
    const ensured = await client.subjects.ensure({ space_id: space, subject_id: "user:fam", kind: "acme:user" });
    assert.equal(ensured.receipt.status, "committed");
    assert.equal(ensured.receipt.op, "memory.subjects.ensure");
    const { subject } = await client.subjects.get({ space_id: space, subject_id: "user:fam" });
    assert.equal(subject.kind, "acme:user");
    await client.subjects.fence({ space_id: space, subject_id: "user:fam", action: "fence" });
    assert.equal((await client.subjects.get({ space_id: space, subject_id: "user:fam" })).subject.state, "fenced");
    await client.subjects.fence({ space_id: space, subject_id: "user:fam", action: "unfence" });
    assert.equal((await client.subjects.get({ space_id: space, subject_id: "user:fam" })).subject.state, "active");
  });

  test("capture, candidates list/get/review/dismiss, recall", async () => {
    await client.subjects.ensure({ space_id: space, subject_id: "user:lin" });
    const captured = await client.capture({
      space_id: space,
      subject_id: "user:lin",
      capture_scope: { placement: SHARED },
      items: [{ content: { text: "Lin prefers green tea over coffee." } }, { content: { text: "ok thanks" } }],
    });
    const [first, second] = captured.receipt.refs.map((r) => r.id);
    assert.ok(first && second);
    const pending = await client.candidates.list({ space_id: space, subject_id: "user:lin", states: ["pending"] });
    assert.deepEqual(pending.candidates.map((c) => c.candidate_id).sort(), [first, second].sort());
    const { candidate } = await client.candidates.get({ space_id: space, candidate_id: first });
    assert.equal(candidate.proposed.content.text, "Lin prefers green tea over coffee.");
    const reviewed = await client.candidates.review({
      space_id: space,
      candidate_id: first,
      decision: { action: "promote", kind: "preference" },
    });
    const recordId = ref(reviewed.receipt, "record");
    await client.candidates.dismiss({ space_id: space, candidate_id: second });
    const { candidate: dismissed } = await client.candidates.get({ space_id: space, candidate_id: second });
    assert.equal(dismissed.state, "dismissed");
    const { recall } = await client.recall({ space_id: space, subject_id: "user:lin", query: { text: "green tea" } });
    assert.deepEqual(recall.results.map((r) => r.record.record_id), [recordId]);
    assert.equal(recall.results[0]?.rank, 1);
  });

  test("records: create, get, update, promote, list, delete", async () => {
    await client.subjects.ensure({ space_id: space, subject_id: "user:rec" });
    const created = await client.records.create({
      space_id: space,
      subject_id: "user:rec",
      kind: "fact",
      content: { text: "lives in Lisbon" },
      placement: { scope: "context", context_id: "trip" },
    });
    const recordId = ref(created.receipt, "record");
    assert.equal((await client.records.get({ space_id: space, record_id: recordId })).record.revision, 1);
    await client.records.update({ space_id: space, record_id: recordId, expected_revision: 1, content: { text: "lives in Porto" } });
    await client.records.promote({ space_id: space, record_id: recordId, expected_revision: 2, placement: SHARED });
    const { record } = await client.records.get({ space_id: space, record_id: recordId });
    assert.deepEqual([record.revision, record.content.text, record.placement.scope], [3, "lives in Porto", "shared"]);
    const listed = await client.records.list({ space_id: space, subject_id: "user:rec" });
    assert.deepEqual(listed.records.map((r) => r.record_id), [recordId]);
    await client.records.delete({ space_id: space, record_id: recordId, expected_revision: 3 });
    const { record: gone } = await client.records.get({ space_id: space, record_id: recordId });
    assert.ok(gone.tombstone, "a deleted record keeps a tombstone");
    assert.equal((await client.records.list({ space_id: space, subject_id: "user:rec" })).total_authorized, 0);
  });

  test("profile: update and get", async () => {
    await client.subjects.ensure({ space_id: space, subject_id: "user:pro" });
    await client.profile.update({ space_id: space, subject_id: "user:pro", kind: "preferences", content: { text: "short answers" } });
    const { profile } = await client.profile.get({ space_id: space, subject_id: "user:pro" });
    assert.deepEqual(profile.documents.map((d) => [d.kind, d.content.text]), [["preferences", "short answers"]]);
  });

  test("grants: grant, list, iter, revoke", async () => {
    const granted = await client.grants.grant({
      space_id: space,
      grantee_principal_id: live.grantee,
      capabilities: ["records_read", "recall"],
      subject_ids: ["user:lin"],
    });
    const grantId = ref(granted.receipt, "grant");
    const listed = await client.grants.list({ space_id: space, view: "admin" });
    assert.ok(listed.grants.some((g) => g.grant_id === grantId));
    const walked: string[] = [];
    for await (const grant of client.grants.iter({ space_id: space, view: "admin", page_size: 1 })) walked.push(grant.grant_id);
    assert.deepEqual(walked.sort(), listed.grants.map((g) => g.grant_id).sort());
    await client.grants.revoke({ space_id: space, grant_id: grantId });
    const after = await client.grants.list({ space_id: space, view: "admin", include_inactive: true });
    assert.equal(after.grants.find((g) => g.grant_id === grantId)?.state, "revoked");
  });

  test("spaces: list, freeze, unfreeze", async () => {
    const { spaces } = await client.spaces.list();
    assert.ok(spaces.some((s) => s.space_id === live.freezeSpace));
    await client.spaces.freeze({ space_id: live.freezeSpace });
    const frozen = (await client.spaces.list()).spaces.find((s) => s.space_id === live.freezeSpace);
    assert.equal(frozen?.state, "frozen");
    await client.spaces.unfreeze({ space_id: live.freezeSpace });
    const open = (await client.spaces.list()).spaces.find((s) => s.space_id === live.freezeSpace);
    assert.equal(open?.state, "active");
  });

  test("receipts: get by id and by (space, op, key); op() by name", async () => {
    const made = await client.op("memory.subjects.ensure", { space_id: space, subject_id: "user:op", idempotency_key: "ts-op-1" });
    const byId = await client.receipts.get({ receipt_id: made.receipt.receipt_id });
    assert.deepEqual(byId.receipt, made.receipt);
    const byKey = await client.receipts.get({ space_id: space, op: "memory.subjects.ensure", idempotency_key: "ts-op-1" });
    assert.equal(byKey.receipt.receipt_id, made.receipt.receipt_id);
  });
});
