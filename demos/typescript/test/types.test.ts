/** The committed `src/api.d.ts` is what openapi-typescript makes of `openapi.json` today. */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { it } from "node:test";
import { fileURLToPath } from "node:url";

// dist/test/types.test.js → the package folder is two up.
const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

it("src/api.d.ts is up to date with openapi.json (run `npm run gen`)", () => {
  const out = mkdtempSync(join(tmpdir(), "ag-types-"));
  try {
    const fresh = join(out, "api.d.ts");
    execFileSync(process.execPath, [
      join(pkg, "node_modules", "openapi-typescript", "bin", "cli.js"),
      join(pkg, "..", "..", "openapi.json"), "--output", fresh,
    ], { stdio: "pipe" });
    assert.equal(readFileSync(join(pkg, "src", "api.d.ts"), "utf8"), readFileSync(fresh, "utf8"),
      "src/api.d.ts differs from openapi.json: run `npm run gen` in demos/typescript");
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
