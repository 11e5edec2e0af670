// The package as a user gets it: `npm pack` makes a tarball that installs into an empty folder
// (no dependency to fetch), imports in Node, and type-checks a consumer against its .d.ts;
// `npm install <folder>` of the checkout does the same.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", ".."); // .build/test -> the package
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const work = mkdtempSync(join(tmpdir(), "spoke-pack-"));
after(() => rmSync(work, { recursive: true, force: true }));

function npm(args: string[], cwd: string): string {
  return execFileSync("npm", [...args, "--no-audit", "--no-fund", "--offline"], { cwd, encoding: "utf8" });
}

const CONSUMER = `
import { MemoryClient, NotFound, RevisionConflict, SpokeError, OPS, type RecallResponse } from "spoke-memory-client";
const client = new MemoryClient("http://127.0.0.1:1", "tok", { capabilities: ["spoke-memory"] });
export async function recall(): Promise<RecallResponse> {
  return client.recall({ space_id: "demo", subject_id: "user:ada", query: { text: "tea" } });
}
export function wrong(): void {
  // @ts-expect-error query is required
  void client.recall({ space_id: "demo", subject_id: "user:ada" });
}
const checks: [boolean, boolean, number] = [new NotFound("NOT_FOUND", 404, "m") instanceof SpokeError, RevisionConflict.status === 409, Object.keys(OPS).length];
console.log(JSON.stringify(checks), typeof client.records.iter, String(client).includes("tok"));
`;

function consume(folder: string): void {
  writeFileSync(join(folder, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  writeFileSync(join(folder, "consumer.ts"), CONSUMER);
  const tsconfig = { compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, lib: ["ES2022", "DOM"], types: [] }, files: ["consumer.ts"] };
  writeFileSync(join(folder, "tsconfig.json"), JSON.stringify(tsconfig));
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: folder, encoding: "utf8" });
  const out = execFileSync(process.execPath, ["consumer.js"], { cwd: folder, encoding: "utf8" });
  assert.equal(out.trim(), "[true,true,33] function false");
}

test("npm pack: the tarball installs into an empty folder, imports and type-checks", () => {
  const packed = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", work], { cwd: root, encoding: "utf8" }));
  const files: string[] = packed[0].files.map((f: { path: string }) => f.path);
  assert.ok(files.includes("dist/index.js") && files.includes("dist/index.d.ts"), files.join(" "));
  assert.ok(!files.some((f) => f.startsWith("src/") || f.startsWith("test/")), files.join(" "));
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  assert.equal(manifest.name, "spoke-memory-client");
  assert.deepEqual(manifest.dependencies ?? {}, {}, "no runtime dependency");
  const app = join(work, "app");
  execFileSync("mkdir", ["-p", app]);
  npm(["install", join(work, packed[0].filename)], app);
  consume(app);
});

test("npm install of the checkout's folder gives the same typed client", () => {
  const app = join(work, "from-folder");
  execFileSync("mkdir", ["-p", app]);
  npm(["install", root], app);
  consume(app);
});
