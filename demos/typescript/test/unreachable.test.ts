/**
 * A service that is not there: the client's error names the address it was given and
 * why it could not reach it, not undici's bare "fetch failed".
 *
 * (Found in round 28: `node dist/src/demo.js --service WRONG.sock --token-file FILE`
 * said only "fetch failed", naming neither the socket nor what was wrong. Round 34: it
 * asks whether `arrowgate serve` runs there, as the command line does.)
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import { Arrowgate } from "../src/client.js";

/** A loopback port nothing listens on: one just let go of. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

it("names the socket or address it could not reach, and why", async () => {
  const folder = await mkdtemp(join(tmpdir(), "ag-ts-"));
  try {
    // No socket at that path; nothing listening on that loopback port.
    for (const [address, why] of [[join(folder, "no.sock"), "ENOENT"],
      [`http://127.0.0.1:${await freePort()}`, "ECONNREFUSED"]] as const) {
      const client = new Arrowgate(address, "a-token");
      try {
        await assert.rejects(client.health(), (err: unknown) => {
          assert.ok(err instanceof Error);
          assert.equal(err.message, `cannot reach the service at ${address} `
            + `(is \`arrowgate serve\` running there?): ${why}`);
          return true;
        });
      } finally {
        await client.close();
      }
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});
