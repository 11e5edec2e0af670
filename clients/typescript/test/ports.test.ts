// The availability probe: MemoryPorts.asMemory answers the typed MemoryPort of an adapter whose
// manifest names the memory family and that has every method of the port, else null.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { ConnectionFailed, MemoryClient, type MemoryPort, MemoryPorts } from "spoke-memory-client";

import { live, skip } from "./env.js";

const MANIFEST = {
  manifest: {
    schema_version: 1,
    provider_id: "p",
    protocol_version: "1",
    role: "memory-provider",
    capabilities: ["spoke-memory", "spoke-memory-reflection"],
    extensions: {},
  },
};

describe("MemoryPorts against the live provider", { skip }, () => {
  test("the provider's manifest serves the family; a client with it is a MemoryPort", async () => {
    const manifest = await MemoryPorts.manifest(live.url);
    assert.equal(MemoryPorts.serves(manifest), true);
    const client = new MemoryClient(live.url, live.token);
    const port: MemoryPort | null = MemoryPorts.asMemory(client, manifest);
    assert.equal(port, client);
    const { provider } = await port!.describe();
    assert.ok(provider.served_capabilities.includes("spoke-memory"));
    assert.equal(MemoryPorts.asMemory(client), null, "a client carries no manifest of its own");
  });

  test("probe answers a client of a memory provider, and rejects when nothing answers", async () => {
    const probed = await MemoryPorts.probe(live.url, live.token);
    assert.ok(probed instanceof MemoryClient);
    await probed.subjects.ensure({ space_id: live.space, subject_id: "user:probe" });
    await assert.rejects(MemoryPorts.probe("http://127.0.0.1:9", live.token), ConnectionFailed);
  });
});

describe("MemoryPorts on adapters", () => {
  test("an adapter with a memory manifest and every method is answered; others are null", () => {
    const client = new MemoryClient("http://127.0.0.1:9", "t");
    const adapter = Object.assign(Object.create(client) as MemoryClient, { manifest: MANIFEST });
    assert.equal(MemoryPorts.asMemory(adapter), adapter, "its own manifest (a property)");
    const withMethod = Object.assign(Object.create(client) as MemoryClient, { manifest: () => MANIFEST.manifest });
    assert.equal(MemoryPorts.asMemory(withMethod), withMethod, "its own manifest (a method)");
    const inner = MANIFEST.manifest;
    for (const wrong of [{ ...inner, role: "search-provider" }, { ...inner, capabilities: ["spoke-search"] }, {}, [], "x", null]) {
      assert.equal(MemoryPorts.asMemory(client, wrong), null, JSON.stringify(wrong));
      assert.equal(MemoryPorts.serves(wrong), false);
    }
    const partial = { manifest: MANIFEST, records: { get: () => undefined }, recall: () => undefined };
    assert.equal(MemoryPorts.asMemory(partial), null, "a port lacking ops");
    assert.equal(MemoryPorts.asMemory(undefined, MANIFEST), null);
    assert.equal(MemoryPorts.asMemory(42, MANIFEST), null);
  });
});
