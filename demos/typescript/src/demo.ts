/**
 * The demo's story, played through `arrowgate serve` by a TypeScript app.
 *
 *   node dist/src/demo.js                      start a fresh service and play
 *   node dist/src/demo.js --service ADDRESS --token-file PATH   use a running one
 *   node dist/src/demo.js --help               say so
 */
import { createHash } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Arrowgate, ArrowgateError, type CardEvent, type Decision, type ToolCall }
  from "./client.js";

/** The `tool.call` event the card answered. */
type ToolCallEvent = Extract<CardEvent, { type: "tool.call" }>;
import { serve } from "./serve.js";

/** What the story saw, for the tests. */
export interface Story {
  refused: Decision; //: the prompt to an agent with no arrow from the card
  accepted: Decision[]; //: the prompts inside the rate limit (the last one held)
  limited: Decision; //: the 7th prompt of the minute
  held: { id: string; text: string; text_sha256: string };
  approved: unknown; //: the held prompt's decision after the operator's approval
  ran: Decision; //: a command on the terminal
  tool: { event: ToolCallEvent; call: ToolCall }; //: the agent's tool call, as the card saw and answered it
}

const MANIFEST = {
  name: "demo.standup",
  version: "1.0.0",
  permissions: { "agents.prompt": {}, "agents.output": {}, "terminals.write": {} },
  tools: [{ name: "summarize_standup", description: "What changed since a day",
    input: { type: "object", properties: { day: { type: "string" } },
      additionalProperties: false } }],
  ports: { inputs: [], outputs: ["out"] },
};

function line(d: Decision): string {
  const extra = d.retry_after != null ? ` (retry_after ${d.retry_after.toFixed(1)} s)` : "";
  return d.code ? `${d.outcome}: ${d.code} ${d.reason ?? ""}${extra}`.trimEnd()
    : `${d.outcome}${d.prompt ? ` (prompt ${d.prompt})` : ""}`;
}

/**
 * Play the story: a workspace; the card `standup` wired to the agent `claude`
 * and the terminal `shell`; a refusal for want of an arrow (to `codex`); the
 * rate limit (6 prompts a minute, the 7th RATE_LIMITED with retry_after);
 * a prompt to the dangerous-mode agent `yolo` held, then approved by the
 * operator with the SHA-256 of the text shown.
 */
export async function playStory(operator: Arrowgate, folder: string,
  say: (text: string) => void = console.log): Promise<Story> {
  const health = await operator.health();
  say(`service: ${operator.address} (${JSON.stringify(health)})`);

  const project = join(folder, "project");
  await mkdir(project, { recursive: true });
  try {
    await operator.createWorkspace({ id: "demo", folder: project });
  } catch (err: unknown) {
    // A service the demo ran on before: say what to do, not only that "demo" exists.
    if (err instanceof ArrowgateError && err.reason === "workspace") {
      throw new Error(`${err.message}: the demo builds its canvas anew, and this service's `
        + "canvas has it already (an earlier run of the demo on it?); give it a service "
        + "of a new database, or give no options (it starts a service of its own)",
        { cause: err });
    }
    throw err;
  }
  say("workspace demo");

  const files = { "manifest.json": JSON.stringify(MANIFEST), "index.js": "// the stand-up card\n" };
  await operator.offer({ manifest: MANIFEST, files });
  const review = await operator.review("demo.standup");
  say(`review of demo.standup (${review.hash}):`);
  for (const text of review.lines) say(`  ${text}`);
  await operator.install("demo.standup", { grant: "required", review_hash: review.hash });
  say("installed demo.standup with its required permissions");

  for (const node of [
    { id: "standup", type: "card", package: "demo.standup" },
    { id: "claude", type: "agent", name: "Claude", tool: "claude-code" },
    { id: "codex", type: "agent", name: "Codex", tool: "codex" },
    { id: "yolo", type: "agent", name: "YOLO", tool: "claude-code", dangerous: true },
    { id: "shell", type: "terminal", name: "shell", shell: "bash" },
  ] as const) {
    await operator.addNode("demo", { ...node });
  }
  for (const [id, to] of [["standup-claude", "claude"], ["standup-shell", "shell"],
    ["standup-yolo", "yolo"]] as const) {
    await operator.addArrow("demo", { id, from: "standup", to });
  }
  say("canvas: standup -> claude, standup -> shell, standup -> yolo (dangerous); codex unwired");

  // From here on the app acts as the card: its token can do nothing else.
  const minted = await operator.mintToken("card:standup");
  const card = operator.as(minted.token);

  // The card follows its events, as a canvas app does for each card it hosts, and
  // answers the tool calls agents make of it.
  const following = new AbortController();
  let toolEvent: ToolCallEvent | undefined;
  let open: () => void = () => undefined;
  const isOpen = new Promise<void>((resolve) => { open = resolve; });
  const follower = (async () => {
    for await (const event of card.events({ signal: following.signal, opened: open })) {
      if (event.type !== "tool.call") continue;
      toolEvent = event;
      const args = event.data.args as { day?: string } | null;
      await card.answerToolCall(event.data.id, {
        result: { day: args?.day ?? "today", commits: 3, reviews: 1 } });
    }
  })();
  let tool: Story["tool"];
  try {
    // A stream that fails before it opens (a refused token) ends the wait too.
    await Promise.race([isOpen, follower.then(() => {
      throw new Error("the card's event stream ended before it opened");
    })]);
    const agent = operator.as((await operator.mintToken("agent:claude")).token);
    const opened = await agent.callTool({ agent: "claude", card: "standup",
      tool: "summarize_standup", args: { day: "yesterday" } }, 10);
    if (opened.call == null || toolEvent === undefined) {
      throw new Error(`the tool call was not answered: ${opened.decision.message}`);
    }
    say(`claude calls standup's tool summarize_standup: ${opened.call.state}, `
      + `${JSON.stringify(opened.call.result)} (the card saw event ${toolEvent.id} and `
      + "answered it)");
    tool = { event: toolEvent, call: opened.call };
  } finally {
    following.abort();  // the stream's connection closes: nothing is left open
    await follower.catch(() => undefined);
  }

  const ran = await card.call({ card: "standup", call: "terminals.run", target: "shell",
    args: { command: "echo stand-up at 10:00" } });
  say(`standup runs a command on shell: ${line(ran)}`);

  const refused = await card.call({ card: "standup", call: "agents.prompt", target: "codex",
    args: { text: "Summarise yesterday's commits." } });
  say(`standup prompts codex (no arrow): ${line(refused)}`);
  say(`  ${refused.message}`);

  const accepted: Decision[] = [];
  for (let i = 1; i <= 5; i++) {
    const d = await card.call({ card: "standup", call: "agents.prompt", target: "claude",
      args: { text: `Stand-up question ${i}: what changed?` } });
    accepted.push(d);
    say(`standup prompts claude #${i}: ${line(d)}`);
  }
  const text = "Deploy the release branch to production.\nThen post the changelog.";
  const held = await card.call({ card: "standup", call: "agents.prompt", target: "yolo",
    args: { text } });
  accepted.push(held);
  say(`standup prompts yolo #6 (dangerous mode): ${line(held)}`);
  const limited = await card.call({ card: "standup", call: "agents.prompt", target: "claude",
    args: { text: "One more?" } });
  say(`standup prompts claude #7: ${line(limited)}`);

  const holds = await operator.holds();
  const hold = holds.find((h) => h.id === held.prompt);
  if (!hold) throw new Error(`the prompt ${held.prompt} is not among the holds`);
  say(`held for a person: prompt ${hold.id} from ${hold.card} to ${hold.agent}; the whole text:`);
  for (const text of hold.text.split("\n")) say(`  | ${JSON.stringify(text).slice(1, -1)}`);
  // The digest of the text shown to the person, computed here, not taken from the service.
  const digest = createHash("sha256").update(hold.text, "utf8").digest("hex");
  const approved = await operator.approveHold(hold.id, digest);
  say(`operator approves with sha256 ${digest.slice(0, 16)}…: ${line(approved as Decision)}`);
  return { refused, accepted, limited, held: hold, approved, ran, tool };
}

const USAGE = "usage: node dist/src/demo.js [--service ADDRESS --token-file PATH] "
  + "[--folder DIR]\n\n"
  + "Plays the demo's story through `arrowgate serve`. With no options it starts a service\n"
  + "of its own on a temporary database (the repository's .venv/bin/arrowgate, or\n"
  + "$ARROWGATE_BIN). --service (a socket path or http://127.0.0.1:PORT) and --token-file\n"
  + "(the operator token it wrote, <db>.operator-token) name a running one, whose canvas\n"
  + "must not have the workspace \"demo\" yet; --folder is where its project folder goes\n"
  + "(default: the current folder).\n\n"
  + "Exit codes: 0 played; 1 the service refused or failed; 2 usage or invalid input.";

async function main(argv: string[]): Promise<number> {
  let options: { service?: string; "token-file"?: string; folder?: string; help?: boolean };
  try {
    // Strict: a misspelt option is said, never ignored (the demo would start a service
    // of its own and play the story there instead of on the one named).
    options = parseArgs({ args: argv, strict: true, allowPositionals: false, options: {
      service: { type: "string" }, "token-file": { type: "string" }, folder: { type: "string" },
      help: { type: "boolean", short: "h" },
    } }).values;
    if ((options.service === undefined) !== (options["token-file"] === undefined)) {
      throw new Error("--service and --token-file (the operator token) go together");
    }
  } catch (err: unknown) {
    const why = (err instanceof Error ? err.message : String(err)).split("\n")[0];
    console.error(`demo: ${why} (it takes --service ADDRESS --token-file PATH [--folder DIR],`
      + " or nothing)");
    return 2;
  }
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  const address = options.service;
  const tokenFile = options["token-file"];
  if (address && tokenFile) {
    let token: string;
    try {
      token = (await readFile(tokenFile, "utf8")).trim();
    } catch (err: unknown) {
      // Named as the option it came from (Node's own words name only the file).
      const why = (err as { code?: unknown }).code ?? (err instanceof Error ? err.message : err);
      console.error(`demo: --token-file ${tokenFile}: cannot read it (${String(why)}); give `
        + "the operator token file `arrowgate serve` wrote, <db>.operator-token");
      return 2;
    }
    const operator = new Arrowgate(address, token);
    try {
      await playStory(operator, options.folder ?? process.cwd());
    } finally {
      await operator.close();
    }
    return 0;
  }
  const served = await serve();
  const operator = new Arrowgate(served.address, served.token);
  try {
    await playStory(operator, served.folder);
  } finally {
    await operator.close();
    await served.stop();
  }
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
