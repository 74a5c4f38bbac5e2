/**
 * `node dist/src/demo.js` takes only the options it documents (`--service ADDRESS`,
 * `--token-file PATH`, `--folder DIR`): anything else is refused at once with one line
 * naming it, exit 2, and no service is started or reached.
 *
 * `--service` and `--token-file` go together.
 *
 * (Found in round 28: an unknown option, or a misspelt one such as `--servcie`, was
 * ignored: the demo started a service of its own and played the whole story on it; so
 * was `--token-file` alone, and `--service` alone was exit 1. Round 34: `--help` was
 * refused as an unknown option, and a token file it could not read was Node's bare
 * "ENOENT: no such file or directory, open 'x'", exit 1.)
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { it } from "node:test";
import { fileURLToPath } from "node:url";

const DEMO = join(dirname(fileURLToPath(import.meta.url)), "..", "src", "demo.js");

it("refuses an option it does not take, naming it", () => {
  for (const args of [["--bogus"], ["--servcie", "/tmp/x.sock"], ["extra"],
    ["--service"], ["--service", "/tmp/x.sock"], ["--token-file", "/tmp/x.token"]]) {
    // ARROWGATE_BIN: a program that fails, were a service started after all.
    const done = spawnSync(process.execPath, [DEMO, ...args], {
      encoding: "utf8", timeout: 30_000, env: { ...process.env, ARROWGATE_BIN: "/bin/false" },
    });
    assert.equal(done.status, 2, `${args.join(" ")}: exit ${done.status}\n${done.stderr}`);
    assert.equal(done.stdout, "", args.join(" "));
    const lines = done.stderr.trim().split("\n");
    assert.equal(lines.length, 1, done.stderr);
    assert.ok(lines[0]?.includes(args[0] ?? ""), done.stderr);
  }
});

/** The demo run with `args`, and a service it would start failing at once. */
function demo(...args: string[]) {
  return spawnSync(process.execPath, [DEMO, ...args], {
    encoding: "utf8", timeout: 30_000, env: { ...process.env, ARROWGATE_BIN: "/bin/false" },
  });
}

it("says how it is used with --help, and starts nothing", () => {
  for (const flag of ["--help", "-h"]) {
    const done = demo(flag);
    assert.equal(done.status, 0, done.stderr);
    assert.equal(done.stderr, "");
    assert.match(done.stdout, /^usage: node dist\/src\/demo.js \[--service ADDRESS --token-file PATH\]/);
    assert.match(done.stdout, /Exit codes: 0 played; 1 /);
  }
});

it("names --token-file and its path when it cannot read the token, exit 2", () => {
  const done = demo("--service", "/tmp/no-such.sock", "--token-file", "/nonexistent/op.token");
  assert.equal(done.status, 2, done.stderr);
  assert.equal(done.stdout, "");
  assert.equal(done.stderr, "demo: --token-file /nonexistent/op.token: cannot read it (ENOENT); "
    + "give the operator token file `arrowgate serve` wrote, <db>.operator-token\n");
});

it("names the arrowgate it could not start and how to have one, leaving nothing behind", () => {
  // Round 34: the demo run before the repository's .venv was made said only
  // "spawn …/.venv/bin/arrowgate ENOENT", and left its temporary folder.
  const tmp = mkdtempSync(join(tmpdir(), "ag-ts-opt-"));
  try {
    const done = spawnSync(process.execPath, [DEMO], {
      encoding: "utf8", timeout: 30_000,
      env: { ...process.env, ARROWGATE_BIN: "/nonexistent/arrowgate", TMPDIR: tmp },
    });
    assert.equal(done.status, 1, done.stderr);
    assert.equal(done.stdout, "");
    assert.equal(done.stderr, "cannot start arrowgate serve: /nonexistent/arrowgate: ENOENT; "
      + "$ARROWGATE_BIN names it; give it an arrowgate command\n");
    assert.deepEqual(readdirSync(tmp), []);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
