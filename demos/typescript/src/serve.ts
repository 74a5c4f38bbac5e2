/**
 * Start a real `arrowgate serve` for the demo and the tests: a temporary
 * database, on a Unix socket or a free loopback port, and wait for `ready`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's `.venv/bin/arrowgate`, or `$ARROWGATE_BIN`. */
export function arrowgateBin(): string {
  if (process.env.ARROWGATE_BIN) return process.env.ARROWGATE_BIN;
  // dist/src/serve.js → the repository root is four folders up.
  const here = dirname(fileURLToPath(import.meta.url));
  return resolve(here, "..", "..", "..", "..", ".venv", "bin", "arrowgate");
}

/** A running service and how to reach it as the operator. */
export interface Served {
  address: string; //: the socket path or http://127.0.0.1:PORT
  token: string; //: the operator token the service wrote
  folder: string; //: a temporary folder: the database, the socket, a project folder
  output: () => string; //: what the service printed so far
  stop: () => Promise<number | null>; //: SIGTERM, wait, clean up; the exit code
  signal: (name: NodeJS.Signals) => void; //: send the service a signal (SIGSTOP: freeze it)
}

/** A loopback port nobody listens on now. */
export async function freePort(): Promise<number> {
  return await new Promise((ok, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => ok(port));
    });
  });
}

/**
 * Start `arrowgate serve --db TMP/arrowgate.db` on a socket (default) or on
 * `--listen 127.0.0.1:PORT` (`tcp: true`), and wait for its `ready` line.
 */
export async function serve(
  options: { tcp?: boolean; timeoutMs?: number; heartbeat?: number } = {},
): Promise<Served> {
  const folder = await mkdtemp(join(tmpdir(), "ag-ts-"));
  const db = join(folder, "arrowgate.db");
  const tokenFile = join(folder, "operator-token");
  const args = ["serve", "--db", db, "--token-file", tokenFile];
  if (options.heartbeat !== undefined) args.push("--heartbeat", String(options.heartbeat));
  let address: string;
  if (options.tcp) {
    const port = await freePort();
    address = `http://127.0.0.1:${port}`;
    args.push("--listen", `127.0.0.1:${port}`);
  } else {
    address = join(folder, "sock", "serve.sock");
    args.push("--socket", address);
  }
  const bin = arrowgateBin();
  const child: ChildProcess = spawn(bin, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PYTHONUNBUFFERED: "1" },
  });
  let out = "";
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  const exited = new Promise<number | null>((ok) => child.once("exit", (code) => ok(code)));
  const started = new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`arrowgate serve did not say ready in time:\n${out}`));
    }, options.timeoutMs ?? 180_000);
    const seen = (chunk: string): void => {
      out += chunk;
      if (/^ready$/m.test(out)) {
        clearTimeout(timer);
        ok();
      }
    };
    child.stdout?.on("data", seen);
    child.stderr?.on("data", (chunk: string) => { out += chunk; });
    child.once("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      // Node says only "spawn PATH ENOENT": say what the program is and how to have it
      // (a newcomer who ran the demo before making the repository's .venv).
      const how = process.env.ARROWGATE_BIN
        ? "$ARROWGATE_BIN names it; give it an arrowgate command"
        : "install arrowgate in the repository's .venv first (README \"Set-up\"), or set "
          + "$ARROWGATE_BIN to an arrowgate command";
      fail(new Error(`cannot start arrowgate serve: ${bin}: ${err.code ?? err.message}; ${how}`,
        { cause: err }));
    });
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`arrowgate serve exited (${code}) before ready:\n${out}`));
    });
  });
  try {
    await started;
  } catch (err: unknown) {
    // Nothing is left behind by a start that failed: the temporary folder goes too.
    await rm(folder, { recursive: true, force: true });
    throw err;
  }
  const token = (await readFile(tokenFile, "utf8")).trim();
  return {
    address, token, folder,
    output: () => out,
    signal: (name) => { child.kill(name); },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const code = await exited;
      await rm(folder, { recursive: true, force: true });
      return code;
    },
  };
}
