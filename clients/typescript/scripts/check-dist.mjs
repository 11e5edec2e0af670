// dist/ is committed (so `npm install ./clients/typescript` works from a fresh clone, with no
// build step): this check (in `npm run lint`, hence `make lint`) compiles src/ afresh into a
// temporary folder and fails when any file of dist/ differs, is missing or is extra.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const fresh = mkdtempSync(join(tmpdir(), "spoke-dist-"));

function files(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath ?? entry.path, entry.name)))
    .sort();
}

try {
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", fresh], {
    cwd: root,
    stdio: "inherit",
  });
  const want = files(fresh);
  const have = files(join(root, "dist"));
  const stale = [...new Set([...want, ...have])].filter(
    (name) =>
      !want.includes(name) ||
      !have.includes(name) ||
      readFileSync(join(fresh, name), "utf8") !== readFileSync(join(root, "dist", name), "utf8"),
  );
  if (stale.length) {
    console.error(`dist/ is out of date (${stale.join(", ")}): run npm run build in clients/typescript`);
    process.exit(1);
  }
  console.log(`dist/ matches src/ (${want.length} files)`);
} finally {
  rmSync(fresh, { recursive: true, force: true });
}
