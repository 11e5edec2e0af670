/**
 * The availability probe of the memory family: `MemoryPorts.asMemory(adapter)` answers the adapter
 * as the typed `MemoryPort` when it serves spoke-memory, else `null` (as `MemoryPorts.as_memory`
 * in the Python client and `MemoryPorts::as_memory()` in the Rust crate). An adapter serves the
 * family when its manifest (the `HostCapabilityManifest` of `GET /v1/manifest`) has the role
 * `memory-provider` and the `spoke-memory` capability, and it has every method of the port
 * (`records.get`, `recall`, ... one per op).
 */
import { type ClientOptions, MemoryClient } from "./client.js";
import { type CallOptions, type MemoryPort } from "./types.js";
/** The probes of the memory family. */
export declare const MemoryPorts: {
    /** The capability flag of the family. */
    readonly CAPABILITY: "spoke-memory";
    /** The role of a memory provider's manifest. */
    readonly ROLE: "memory-provider";
    /**
     * Whether a manifest (`{ manifest: {...} }` as /v1/manifest answers, or the inner object) names
     * the role `memory-provider` and the `spoke-memory` capability.
     */
    readonly serves: (manifest: unknown) => boolean;
    /**
     * `adapter` as a `MemoryPort` when it serves the family, else `null`. Its manifest is `manifest`
     * when given, else the adapter's own `manifest` (a property, or a method taking no argument);
     * an adapter without one does not serve the family. It must also have every method of the port.
     */
    readonly asMemory: (adapter: unknown, manifest?: unknown) => MemoryPort | null;
    /** The provider's manifest (`GET /v1/manifest`, no token): `{ manifest: {...} }`. */
    readonly manifest: (baseUrl: string, options?: CallOptions & {
        fetch?: typeof globalThis.fetch;
    }) => Promise<{
        [key: string]: unknown;
    }>;
    /**
     * A client of the provider at `baseUrl` when its manifest says it serves the family, `null`
     * when it does not; rejects when no manifest could be read.
     */
    readonly probe: (baseUrl: string, token: string, options?: ClientOptions) => Promise<MemoryClient | null>;
};
