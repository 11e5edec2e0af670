// Pending receipts finished by the real worker the test that started the provider runs:
// reflection generation waited to completion, and an export imported into another space.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import type { MemoryClient, MemoryExportChunk } from "spoke-memory-client";

import { connected, live, skip } from "./env.js";

describe("pending receipts", { skip }, () => {
  let client: MemoryClient;

  before(async () => {
    client = await connected();
  });
  after(async () => {
    await client?.close();
  });

  test("a reflection answers pending; receipts.wait returns it committed", async () => {
    const space_id = live.space;
    await client.subjects.ensure({ space_id, subject_id: "user:ref" });
    const { provider } = await client.describe();
    const texts = ["prefers green tea", "lives in Lisbon", "plans a trip to Porto", "learns Portuguese", "runs on Sundays"];
    for (const text of texts.slice(0, Math.max(3, provider.limits.reflection_min_records))) {
      await client.records.create({ space_id, subject_id: "user:ref", kind: "fact", content: { text }, placement: { scope: "shared" } });
    }
    const state = await client.reflections.state({ space_id, subject_id: "user:ref" });
    assert.equal(state.state.data_sufficiency.sufficient, true);
    const { receipt } = await client.reflections.generate({ space_id, subject_id: "user:ref" });
    assert.equal(receipt.status, "pending");
    const done = await client.receipts.wait(receipt.receipt_id, { timeoutMs: 120_000 });
    assert.equal(done.status, "committed", JSON.stringify(done.failure));
    const reflectionId = done.refs.find((r) => r.type === "reflection")?.id;
    const listed = await client.reflections.list({ space_id, subject_id: "user:ref" });
    assert.deepEqual(listed.reflections.map((r) => r.reflection_id), [reflectionId]);
    const walked = [];
    for await (const reflection of client.reflections.iter({ space_id, subject_id: "user:ref" })) walked.push(reflection);
    assert.equal(walked.length, 1);
  });

  test("exports and imports: export, stage into another space, activate", async () => {
    const created = await client.exports.create({ space_id: live.space, subject_ids: ["user:lin"] });
    assert.equal(created.receipt.status, "pending");
    const exported = await client.receipts.wait(created.receipt.receipt_id, { timeoutMs: 120_000 });
    assert.equal(exported.status, "committed", JSON.stringify(exported.failure));
    const export_id = exported.refs[0]!.id;
    const first = await client.exports.get({ space_id: live.space, export_id, ordinal: 0 });
    const chunks: MemoryExportChunk[] = [first.chunk];
    for (let n = 1; n < first.bundle.chunk_count; n++) {
      chunks.push((await client.exports.get({ space_id: live.space, export_id, ordinal: n })).chunk);
    }
    let staged = await client.imports.stage({ space_id: live.importSpace, bundle: first.bundle, chunk: chunks[0]! });
    const import_id = staged.receipt.refs[0]!.id;
    for (const chunk of chunks.slice(1)) staged = await client.imports.stage({ space_id: live.importSpace, import_id, chunk });
    assert.equal((await client.receipts.wait(staged.receipt.receipt_id, { timeoutMs: 120_000 })).status, "committed");
    const activated = await client.imports.activate({ space_id: live.importSpace, import_id });
    assert.equal((await client.receipts.wait(activated.receipt.receipt_id, { timeoutMs: 120_000 })).status, "committed");
    const imported = await client.records.list({ space_id: live.importSpace, subject_id: "user:lin" });
    const original = await client.records.list({ space_id: live.space, subject_id: "user:lin" });
    assert.deepEqual(imported.records.map((r) => r.content.text).sort(), original.records.map((r) => r.content.text).sort());
    assert.ok(imported.records.length > 0);
  });

  test("imports: a staged import can be discarded", async () => {
    const created = await client.exports.create({ space_id: live.space, subject_ids: ["user:pro"] });
    const exported = await client.receipts.wait(created.receipt.receipt_id, { timeoutMs: 120_000 });
    const first = await client.exports.get({ space_id: live.space, export_id: exported.refs[0]!.id, ordinal: 0 });
    const staged = await client.imports.stage({ space_id: live.importSpace, bundle: first.bundle, chunk: first.chunk });
    const import_id = staged.receipt.refs[0]!.id;
    if (first.bundle.chunk_count === 1) await client.receipts.wait(staged.receipt.receipt_id, { timeoutMs: 120_000 });
    const discarded = await client.imports.discard({ space_id: live.importSpace, import_id });
    assert.equal(discarded.receipt.status, "committed");
  });
});
