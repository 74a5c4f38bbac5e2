/**
 * The client sends its bearer token only where the service is (SPEC §10.1, §10.2: "the
 * socket path or `http://127.0.0.1:PORT`"): plain http to this machine's loopback
 * (127.0.0.0/8, ::1, localhost), never with a user name, a query or a fragment. Any other
 * address is refused when the client is made, naming it and why, before any connection.
 *
 * (Found in round 29: `new Arrowgate("http://HOST:PORT", token)` took any host, and its
 * first request sent `Authorization: Bearer <the operator's token>` there in clear;
 * `http://u:p@127.0.0.1:PORT`, `…?x` and `…#y` were taken too.)
 */
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { it } from "node:test";
import { Arrowgate } from "../src/client.js";

it("refuses an address off this machine's loopback, naming it and why", async () => {
  const connections: number[] = [];
  const server = createServer((socket) => { connections.push(1); socket.destroy(); });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  try {
    for (const [address, why] of [
      ["http://example.com:8000", "plain http to example.com"],
      ["http://10.0.0.1:80", "plain http to 10.0.0.1"],
      [`http://0.0.0.0:${port}`, "plain http to 0.0.0.0"],
      [`http://localhost.:${port}`, "plain http to localhost."],
      [`http://user:secret@127.0.0.1:${port}`, "user name or password"],
      [`http://127.0.0.1:${port}/?token=x`, "query"],
      [`http://127.0.0.1:${port}#frag`, "fragment"],
      [`https://127.0.0.1:${port}`, "scheme"],
      ["http://", "no URL"],
    ] as const) {
      assert.throws(() => new Arrowgate(address, "op_secret"), (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.ok(err.message.includes(JSON.stringify(address)), err.message);
        assert.ok(err.message.includes(why), `${address}: ${err.message}`);
        return true;
      });
    }
    // Nothing reached this machine's listener (0.0.0.0 would have).
    assert.deepEqual(connections, []);
  } finally {
    await new Promise<void>((done) => server.close(() => done()));
  }
});

it("takes the socket path and http on loopback", async () => {
  for (const address of ["/run/ag/serve.sock", "http://127.0.0.1:8123", "http://127.9.9.9:1/",
    "http://localhost:8123", "http://[::1]:8123"]) {
    await new Arrowgate(address, "op_secret").close();
  }
});
