/**
 * The availability probe of the memory family: `MemoryPorts.asMemory(adapter)` answers the adapter
 * as the typed `MemoryPort` when it serves spoke-memory, else `null` (as `MemoryPorts.as_memory`
 * in the Python client and `MemoryPorts::as_memory()` in the Rust crate). An adapter serves the
 * family when its manifest (the `HostCapabilityManifest` of `GET /v1/manifest`) has the role
 * `memory-provider` and the `spoke-memory` capability, and it has every method of the port
 * (`records.get`, `recall`, ... one per op).
 */

import { type ClientOptions, MemoryClient, errorFrom } from "./client.js";
import { ConnectionFailed } from "./spoke-error.js";
import { type CallOptions, type MemoryPort, OPS } from "./types.js";

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The probes of the memory family. */
export const MemoryPorts = {
  /** The capability flag of the family. */
  CAPABILITY: "spoke-memory",
  /** The role of a memory provider's manifest. */
  ROLE: "memory-provider",

  /**
   * Whether a manifest (`{ manifest: {...} }` as /v1/manifest answers, or the inner object) names
   * the role `memory-provider` and the `spoke-memory` capability.
   */
  serves(manifest: unknown): boolean {
    const inner = isObject(manifest) && isObject(manifest["manifest"]) ? manifest["manifest"] : manifest;
    if (!isObject(inner)) return false;
    const capabilities = inner["capabilities"];
    return (
      inner["role"] === MemoryPorts.ROLE &&
      Array.isArray(capabilities) &&
      capabilities.includes(MemoryPorts.CAPABILITY)
    );
  },

  /**
   * `adapter` as a `MemoryPort` when it serves the family, else `null`. Its manifest is `manifest`
   * when given, else the adapter's own `manifest` (a property, or a method taking no argument);
   * an adapter without one does not serve the family. It must also have every method of the port.
   */
  asMemory(adapter: unknown, manifest?: unknown): MemoryPort | null {
    if (!isObject(adapter)) return null;
    let own = manifest;
    if (own === undefined) {
      const found = adapter["manifest"];
      own = typeof found === "function" ? (found as () => unknown).call(adapter) : found;
    }
    if (!MemoryPorts.serves(own)) return null;
    for (const op of Object.keys(OPS)) {
      const path = op.split(".").slice(1);
      let target: unknown = adapter;
      for (const part of path.slice(0, -1)) target = isObject(target) ? target[part] : undefined;
      const method = isObject(target) ? target[path[path.length - 1]!] : undefined;
      if (typeof method !== "function") return null;
    }
    return adapter as unknown as MemoryPort;
  },

  /** The provider's manifest (`GET /v1/manifest`, no token): `{ manifest: {...} }`. */
  async manifest(
    baseUrl: string,
    options: CallOptions & { fetch?: typeof globalThis.fetch } = {},
  ): Promise<{ [key: string]: unknown }> {
    const send = options.fetch ?? globalThis.fetch.bind(globalThis);
    let response: Response;
    let text: string;
    try {
      response = await send(baseUrl.replace(/\/+$/, "") + "/v1/manifest", {
        headers: { Accept: "application/json" },
        signal: options.signal,
      });
      text = await response.text();
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      const why = error instanceof Error ? error.message : String(error);
      throw new ConnectionFailed("connection_failed", null, `no answer from the provider (${why})`, {}, {}, null, error);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (response.status !== 200 || !isObject(body)) throw errorFrom(response.status, body);
    return body;
  },

  /**
   * A client of the provider at `baseUrl` when its manifest says it serves the family, `null`
   * when it does not; rejects when no manifest could be read.
   */
  async probe(baseUrl: string, token: string, options: ClientOptions = {}): Promise<MemoryClient | null> {
    const manifest = await MemoryPorts.manifest(baseUrl, options.fetch ? { fetch: options.fetch } : {});
    return MemoryPorts.serves(manifest) ? new MemoryClient(baseUrl, token, options) : null;
  },
} as const;
