// What the live suite needs from the test that started the provider (tests/clients/test_typescript.py).
import { MemoryClient } from "spoke-memory-client";

export const live = {
  url: process.env["SPOKE_URL"] ?? "",
  token: process.env["SPOKE_TOKEN"] ?? "",
  /** A space the token administers (root grant). */
  space: process.env["SPOKE_SPACE"] ?? "",
  /** An empty space the token administers: imports land there. */
  importSpace: process.env["SPOKE_IMPORT_SPACE"] ?? "",
  /** A space the token administers, frozen and unfrozen by the spaces test. */
  freezeSpace: process.env["SPOKE_FREEZE_SPACE"] ?? "",
  /** Another principal, the grantee of the grants test. */
  grantee: process.env["SPOKE_GRANTEE"] ?? "",
};

/** Why the live tests are skipped (no provider given), or false. */
export const skip = live.url ? false : "no live provider (set SPOKE_URL, SPOKE_TOKEN, ...)";

let served: string[] | undefined;

/** A client negotiating every flag the provider serves. */
export async function connected(url = live.url, options = {}): Promise<MemoryClient> {
  if (served === undefined) {
    const plain = new MemoryClient(live.url, live.token);
    served = (await plain.describe()).provider.served_capabilities;
  }
  return new MemoryClient(url, live.token, { capabilities: served, ...options });
}
