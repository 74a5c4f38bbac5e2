/**
 * A tiny typed client of `arrowgate serve` (SPEC §10.1) over fetch.
 *
 * Every request and answer type comes from `api.d.ts`, which openapi-typescript
 * generates from the service's committed `openapi.json` (`npm run gen`); a test
 * fails when the two drift apart. Node's own fetch cannot reach a Unix socket,
 * so requests go through undici's fetch with an `Agent` that connects to the
 * socket (or, for `http://127.0.0.1:PORT`, a plain keep-alive `Agent`).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { EventSourceParserStream } from "eventsource-parser/stream";
import { Agent, fetch } from "undici";
import type { components, paths } from "./api.js";

type Method = "get" | "post" | "patch" | "delete";
type Op<P extends keyof paths, M extends Method> = NonNullable<paths[P][M & keyof paths[P]]>;
type Json<C> = C extends { content: { "application/json": infer T } } ? T : undefined;

/** The JSON body an operation takes (`undefined` when it takes none). */
export type RequestBody<P extends keyof paths, M extends Method> =
  Op<P, M> extends { requestBody: infer B } ? Json<B>
    : Op<P, M> extends { requestBody?: infer B } ? Json<NonNullable<B>> | undefined
      : undefined;

/** The JSON an operation answers on success (200 or 201). */
export type Answer<P extends keyof paths, M extends Method> =
  Op<P, M> extends { responses: infer R }
    ? R extends { 200: infer A } ? Json<A>
      : R extends { 201: infer A } ? Json<A>
        : undefined
    : never;

/** A card's call, as `POST /v1/calls` takes it. */
export type CallBody = RequestBody<"/v1/calls", "post">;
/** The Decision on a call: a refusal is a value (outcome `denied` or `rate-limited`), not an error. */
export type Decision = Answer<"/v1/calls", "post">;
/** A held prompt: the whole text and its SHA-256. */
export type Hold = Answer<"/v1/holds", "get"> extends (infer H)[] ? H : never;
/** A node of SPEC §1. */
export type NodeBody = RequestBody<"/v1/workspaces/{ws}/nodes", "post">;
/** An arrow of SPEC §1. */
export type ArrowBody = RequestBody<"/v1/workspaces/{ws}/arrows", "post">;

/** An agent's call of a card's tool, as `POST /v1/tool-calls` takes it. */
export type ToolCallBody = RequestBody<"/v1/tool-calls", "post">;
/** A tool call: `open`, then `answered` (with `result`), `failed`, `expired` or `cancelled`. */
export type ToolCall = Answer<"/v1/tool-calls/{call_id}", "get">;

/**
 * One event of a card's stream (SPEC §3), typed by `openapi.json`'s `CardEvent` (a
 * union told apart by `type`: narrowing on `event.type === "tool.call"` types
 * `event.data`), with its number in the card's feed: resume after it with
 * `lastEventId` (none on `events.dropped`).
 */
export type CardEvent = components["schemas"]["CardEvent"] & { id: string | undefined };

/** How `Arrowgate.events` follows a card's stream. */
export interface EventsOptions {
  /** The card (the operator's token names one; a card's token is its own card). */
  card?: string;
  /** Resume after this event (the service keeps the last 1,000 of a card). */
  lastEventId?: string;
  /** Stop following: the iteration then ends. */
  signal?: AbortSignal;
  /**
   * Called each time the stream is open (at first, and after each reconnection): from
   * then on every event of the card reaches this iteration. Without `lastEventId` a
   * stream starts at the moment it opens, so a program that then makes something happen
   * (an agent's tool call) waits for this first.
   */
  opened?: () => void;
  /**
   * Milliseconds of silence (no event, not even the service's heartbeat, every 15 s by
   * default) after which the connection is taken for dead and opened again (default
   * 45,000: three heartbeats missed).
   */
  idleMs?: number;
}

/** `EventsOptions.idleMs`'s default: three of the service's default heartbeats missed. */
const IDLE_MS = 45_000;

/** Characters one event may hold before the stream is given up (the service's are far smaller). */
const EVENT_BUFFER = 16 * 1024 * 1024;

/** The install review, with the lines a person reads (its `hash` is what install names). */
export type Review = Answer<"/v1/packages/{name}/review", "get">;

/** An `application/problem+json` answer (RFC 9457) with the engine's `code` and `reason`. */
export interface Problem {
  status: number;
  title?: string;
  detail?: string;
  code?: string;
  reason?: string | null;
  permission?: string | null;
  message?: string;
  [key: string]: unknown;
}

/** An HTTP error of the service (a refused *call* is not one: it is a 200 Decision). */
export class ArrowgateError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly reason: string | null | undefined;
  readonly problem: Problem;

  constructor(problem: Problem) {
    super(problem.message ?? problem.detail ?? problem.title ?? `HTTP ${problem.status}`);
    this.name = "ArrowgateError";
    this.status = problem.status;
    this.code = problem.code;
    this.reason = problem.reason;
    this.problem = problem;
  }
}

/**
 * Where the service listens: a Unix socket path, or `http://` on this machine's loopback
 * (`127.0.0.0/8`, `[::1]`, `localhost`). The token goes with every request, so any other
 * address is refused here, before any connection, naming it and why: plain http to
 * another host would carry it across a network in clear, and a user name, a query or a
 * fragment is no part of an address (the README's decision on service addresses).
 * Hosts are judged as the URL parser normalises them (`127.1` is `127.0.0.1`), which is
 * the host connected to; no name but `localhost` is resolved to see where it leads.
 */
export function dispatcherFor(address: string): { base: string; agent: Agent } {
  if (address.includes("://")) {
    const refuse = (why: string): Error => new Error(
      `the service address ${JSON.stringify(address)}: ${why}; give the service's socket `
      + "path or http://127.0.0.1:PORT");
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      throw refuse("it is no URL");
    }
    if (url.protocol !== "http:") {
      throw refuse(`its scheme ${JSON.stringify(url.protocol.replace(/:$/, ""))} is not http`);
    }
    if (url.username !== "" || url.password !== "" || /^[a-z]+:\/\/[^/?#]*@/i.test(address)) {
      throw refuse("it holds a user name or password (…@host), which is not part of an "
        + "address (the token is given to the client)");
    }
    if (address.includes("?")) throw refuse("it has a query (?…), which is not part of an address");
    if (address.includes("#")) {
      throw refuse("it has a fragment (#…), which is not part of an address");
    }
    if (!isLoopback(url.hostname)) {
      throw refuse(`plain http to ${url.hostname.replace(/^\[|\]$/g, "")}, which is not this `
        + "machine's loopback (127.0.0.0/8, ::1, localhost): the token would cross the "
        + "network in clear");
    }
    const base = `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`;
    return { base, agent: new Agent({ keepAliveTimeout: 10_000 }) };
  }
  // The host name is never resolved: the Agent connects to the socket.
  return { base: "http://arrowgate", agent: new Agent({ connect: { socketPath: address } }) };
}

/** `localhost`, an address of 127.0.0.0/8 or `[::1]`, as the URL parser writes them. */
function isLoopback(hostname: string): boolean {
  if (hostname === "localhost" || hostname === "[::1]") return true;
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(hostname);
  return v4 !== null && v4[1] === "127";
}

type Params = Record<string, string>;

/** Seconds as the service's query takes them: a plain decimal to the millisecond, `2` or
 * `0.5` (`String` writes `1e-7`, or `0.30000000000000004`, which it refuses). A value
 * that is no finite number is sent as it is, for the service to refuse by name. */
function seconds(value: number): string {
  if (!Number.isFinite(value) || value < 0 || value >= 1e15) return String(value);
  return value.toFixed(3).replace(/\.?0+$/, "");
}

/** A connection to one service, acting as one principal (the token's). */
export class Arrowgate {
  readonly address: string;
  private readonly base: string;
  private readonly agent: Agent;
  private readonly token: string | undefined;
  private readonly owner: boolean;

  constructor(address: string, token?: string, shared?: { base: string; agent: Agent }) {
    this.address = address;
    const d = shared ?? dispatcherFor(address);
    this.base = d.base;
    this.agent = d.agent;
    this.token = token;
    this.owner = shared === undefined;
  }

  /** The same service, with another principal's token (sharing the connection pool). */
  as(token: string): Arrowgate {
    return new Arrowgate(this.address, token, { base: this.base, agent: this.agent });
  }

  /** Close the connections (only the client that opened them does). */
  async close(): Promise<void> {
    if (this.owner) await this.agent.close();
  }

  /**
   * One typed request: `path` is a route of the OpenAPI document, `{name}`
   * parts filled from `params` (escaped, so an id never walks to another route).
   */
  async request<P extends keyof paths, M extends Method>(
    method: M, path: P,
    options: { params?: Params; query?: Params; body?: RequestBody<P, M> } = {},
  ): Promise<Answer<P, M>> {
    const filled = String(path).replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = options.params?.[name];
      if (value === undefined) throw new Error(`${String(path)}: no value for {${name}}`);
      return encodeURIComponent(value);
    });
    const query = options.query ? `?${new URLSearchParams(options.query).toString()}` : "";
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.body);
    }
    let response: Awaited<ReturnType<typeof fetch>>;
    try {
      response = await fetch(`${this.base}${filled}${query}`, {
        method: method.toUpperCase(), headers, body, dispatcher: this.agent,
      });
    } catch (err: unknown) {
      // undici says only "fetch failed"; its cause says why (ENOENT: no socket there,
      // ECONNREFUSED: nothing listening), and the person needs the address they gave.
      const cause = err instanceof Error ? err.cause : undefined;
      const why = (cause as { code?: unknown } | undefined)?.code
        ?? (cause instanceof Error ? cause.message : undefined)
        ?? (err instanceof Error ? err.message : String(err));
      // Not connected at all: most often no service runs there (the command line and
      // `arrowgate mcp` ask the same).
      const running = why === "ENOENT" || why === "ECONNREFUSED"
        ? " (is `arrowgate serve` running there?)" : "";
      throw new Error(`cannot reach the service at ${this.address}${running}: ${String(why)}`,
        { cause: err });
    }
    const text = await response.text();
    let data: unknown = undefined;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch {
        data = undefined;
      }
    }
    if (!response.ok) {
      const problem = (typeof data === "object" && data !== null ? data : {}) as Problem;
      throw new ArrowgateError({ ...problem, status: response.status });
    }
    return data as Answer<P, M>;
  }

  /** `GET /v1/health` (needs no token). */
  health(): Promise<Answer<"/v1/health", "get">> {
    return this.request("get", "/v1/health");
  }

  /** Mint a token for `card:<id>` or `agent:<id>` (operator). */
  mintToken(principal: string): Promise<Answer<"/v1/tokens", "post">> {
    return this.request("post", "/v1/tokens", { body: { principal } });
  }

  /** Revoke a minted token by its id: its requests are 401 from then on, its streams end. */
  revokeToken(id: string): Promise<Answer<"/v1/tokens/{token_id}", "delete">> {
    return this.request("delete", "/v1/tokens/{token_id}", { params: { token_id: id } });
  }

  /** Create a workspace with its absolute project folder (operator). */
  createWorkspace(body: RequestBody<"/v1/workspaces", "post">):
      Promise<Answer<"/v1/workspaces", "post">> {
    return this.request("post", "/v1/workspaces", { body });
  }

  /** Put a node on a workspace's canvas (operator). */
  addNode(ws: string, node: NodeBody): Promise<Answer<"/v1/workspaces/{ws}/nodes", "post">> {
    return this.request("post", "/v1/workspaces/{ws}/nodes", { params: { ws }, body: node });
  }

  /** Draw an arrow: consent for data between two nodes (operator). */
  addArrow(ws: string, arrow: ArrowBody): Promise<Answer<"/v1/workspaces/{ws}/arrows", "post">> {
    return this.request("post", "/v1/workspaces/{ws}/arrows", { params: { ws }, body: arrow });
  }

  /** Offer a package: its manifest and files (path → text). */
  offer(body: RequestBody<"/v1/packages", "post">): Promise<Answer<"/v1/packages", "post">> {
    return this.request("post", "/v1/packages", { body });
  }

  /** The install review a person reads before installing (its `hash` is what install names). */
  review(name: string): Promise<Review> {
    return this.request("get", "/v1/packages/{name}/review", { params: { name } });
  }

  /** Install with the hash of the review the person saw (operator). */
  install(name: string, body: RequestBody<"/v1/packages/{name}/install", "post">):
      Promise<Answer<"/v1/packages/{name}/install", "post">> {
    return this.request("post", "/v1/packages/{name}/install", { params: { name }, body });
  }

  /** Revoke one permission of a package: every card of it is told (`permissions.changed`). */
  revoke(name: string, permission: string):
      Promise<Answer<"/v1/packages/{name}/revoke", "post">> {
    return this.request("post", "/v1/packages/{name}/revoke",
      { params: { name }, body: { permission } });
  }

  /** A card's call; the Decision (a refusal is a value, never thrown). */
  call(body: CallBody): Promise<Decision> {
    return this.request("post", "/v1/calls", { body });
  }

  /** Held prompts, each with its whole text and SHA-256. */
  holds(): Promise<Answer<"/v1/holds", "get">> {
    return this.request("get", "/v1/holds");
  }

  /** Approve a held prompt by the SHA-256 of the text the person was shown (operator). */
  approveHold(id: string, textSha256: string):
      Promise<Answer<"/v1/holds/{prompt_id}/approve", "post">> {
    return this.request("post", "/v1/holds/{prompt_id}/approve",
      { params: { prompt_id: id }, body: { text_sha256: textSha256 } });
  }

  /**
   * A card's events as they come (`GET /v1/events`, Server-Sent Events read with
   * eventsource-parser), for as long as `signal` lets it run.
   *
   * A connection that drops (a restart of the service, the network) is opened again
   * with `Last-Event-ID`, after a pause that grows from 0.25 s to 5 s, so no event is
   * seen twice and none is missed that the service still holds; one it no longer holds
   * arrives as `events.dropped`. A refusal is thrown as an `ArrowgateError` (401 once
   * the token is revoked: the service then ends the stream).
   */
  async *events(options: EventsOptions = {}): AsyncGenerator<CardEvent> {
    const { signal } = options;
    // A function, not the property read in line: TypeScript would narrow it to false
    // for the whole loop, but an abort may come at any await.
    const stopped = (): boolean => signal?.aborted === true;
    const query = options.card !== undefined
      ? `?${new URLSearchParams({ card: options.card }).toString()}` : "";
    let last = options.lastEventId;
    let pause = 250;
    const idleMs = options.idleMs ?? IDLE_MS;
    while (!stopped()) {
      const headers: Record<string, string> = { accept: "text/event-stream" };
      if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
      if (last !== undefined) headers["last-event-id"] = last;
      // One connection's own abort: the caller's `signal`, or nothing heard for `idleMs`
      // (not even the service's heartbeat) while we wait on the service — a service that
      // froze, or a connection gone dead without a word, is given up and opened again.
      const connection = new AbortController();
      const stop = (): void => connection.abort();
      signal?.addEventListener("abort", stop, { once: true });
      let idle: ReturnType<typeof setTimeout> | undefined;
      const heard = (): void => {
        clearTimeout(idle);
        idle = setTimeout(stop, idleMs);
      };
      try {
        heard();
        let response: Awaited<ReturnType<typeof fetch>>;
        try {
          response = await fetch(`${this.base}/v1/events${query}`, {
            headers, dispatcher: this.agent, signal: connection.signal,
          });
        } catch {
          if (stopped()) return;
          clearTimeout(idle);
          await sleep(pause, undefined, { signal }).catch(() => undefined);
          pause = Math.min(pause * 2, 5_000);
          continue;  // the service is away for now (restarting, or frozen): ask again
        }
        if (!response.ok || response.body === null) {
          const text = await response.text();
          let problem: Problem = { status: response.status };
          try {
            problem = { ...JSON.parse(text) as Problem, status: response.status };
          } catch {
            // not JSON: the status says it
          }
          throw new ArrowgateError(problem);
        }
        pause = 250;
        options.opened?.();
        const messages = (response.body as unknown as ReadableStream<BufferSource>)
          .pipeThrough(new TransformStream<BufferSource, BufferSource>({
            transform(chunk, out) {
              heard();  // any bytes, a heartbeat's comment too
              out.enqueue(chunk);
            },
          }))
          .pipeThrough(new TextDecoderStream())
          .pipeThrough(new EventSourceParserStream({ maxBufferSize: EVENT_BUFFER }));
        try {
          for await (const message of messages) {
            // The message's data is the event as openapi.json's CardEvent describes it
            // (the service's tests check every event against that schema).
            const event = JSON.parse(message.data) as components["schemas"]["CardEvent"];
            if (message.id !== undefined) last = message.id;
            // The caller's time with the event is not the service's silence.
            clearTimeout(idle);
            yield { ...event, id: message.id };
            heard();
          }
        } catch {
          if (stopped()) return;
          // The connection broke, or went quiet, mid-stream: open it again after the
          // last event seen.
        }
      } finally {
        clearTimeout(idle);
        signal?.removeEventListener("abort", stop);
        connection.abort();  // whatever is left of this connection goes
      }
    }
  }

  /** An agent calls a card's tool (the agent's token); `wait` seconds for the answer. */
  callTool(body: ToolCallBody, wait?: number): Promise<Answer<"/v1/tool-calls", "post">> {
    return this.request("post", "/v1/tool-calls",
      wait === undefined ? { body } : { body, query: { wait: seconds(wait) } });
  }

  /** The card answers a tool call once: a JSON `result`, or an `error` text. */
  answerToolCall(id: string, answer: RequestBody<"/v1/tool-calls/{call_id}/result", "post">):
      Promise<Answer<"/v1/tool-calls/{call_id}/result", "post">> {
    return this.request("post", "/v1/tool-calls/{call_id}/result",
      { params: { call_id: id }, body: answer });
  }

  /** Wait up to `timeout` seconds for a tool call to end; it is answered as it then stands. */
  waitToolCall(id: string, timeout: number): Promise<ToolCall> {
    return this.request("get", "/v1/tool-calls/{call_id}/wait",
      { params: { call_id: id }, query: { timeout: seconds(timeout) } });
  }

  /** A prompt and its state on the arrow. */
  prompt(id: string): Promise<Answer<"/v1/prompts/{prompt_id}", "get">> {
    return this.request("get", "/v1/prompts/{prompt_id}", { params: { prompt_id: id } });
  }
}
