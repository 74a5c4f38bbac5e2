/**
 * End to end: a real `arrowgate serve` (temp database), the demo's story
 * through it, on a Unix socket and on a loopback port.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Arrowgate, ArrowgateError, type CardEvent, type EventsOptions } from "../src/client.js";
import { playStory, type Story } from "../src/demo.js";
import { serve, type Served } from "../src/serve.js";

describe("the demo's story over the Unix socket", () => {
  let served: Served;
  let operator: Arrowgate;
  let story: Story;
  const lines: string[] = [];

  before(async () => {
    served = await serve();
    operator = new Arrowgate(served.address, served.token);
    story = await playStory(operator, served.folder, (text) => lines.push(text));
  });
  after(async () => {
    await operator?.close();
    const code = await served?.stop();
    assert.equal(code, 0, `serve exited ${code}:\n${served?.output()}`);
  });

  it("runs a command on the wired terminal", () => {
    assert.equal(story.ran.outcome, "ok");
  });

  it("refuses a prompt to an agent the card has no arrow to", () => {
    assert.equal(story.refused.outcome, "denied");
    assert.equal(story.refused.code, "PERMISSION_DENIED");
    assert.equal(story.refused.reason, "not-connected");
  });

  it("accepts six prompts a minute and refuses the seventh with retry_after", () => {
    assert.deepEqual(story.accepted.map((d) => d.outcome),
      ["queued", "queued", "queued", "queued", "queued", "held"]);
    assert.equal(story.limited.outcome, "rate-limited");
    assert.equal(story.limited.code, "RATE_LIMITED");
    const retry = story.limited.retry_after;
    assert.ok(typeof retry === "number" && retry > 0 && retry <= 60, `retry_after ${retry}`);
  });

  it("holds the dangerous-mode prompt until the operator approves its digest", () => {
    assert.equal(story.held.text, "Deploy the release branch to production.\nThen post the changelog.");
    assert.equal(story.held.text_sha256,
      createHash("sha256").update(story.held.text, "utf8").digest("hex"));
    assert.equal((story.approved as { outcome: string }).outcome, "queued");
  });

  it("answers an agent's tool call from the card's event stream", () => {
    assert.ok(story.tool.event.type === "tool.call");
    assert.equal(story.tool.event.data.tool, "summarize_standup");
    assert.equal(story.tool.event.data.agent, "claude");
    assert.deepEqual(story.tool.event.data.args, { day: "yesterday" });
    assert.equal(story.tool.call.state, "answered");
    assert.deepEqual(story.tool.call.result, { day: "yesterday", commits: 3, reviews: 1 });
  });

  it("leaves no hold behind, and the prompt shows its state", async () => {
    assert.deepEqual(await operator.holds(), []);
    const prompt = await operator.prompt(story.held.id);
    assert.ok(["queued", "delivered"].includes(prompt.state), prompt.state);
  });

  it("played again on the same service, says what to do instead", async () => {
    // Round 34: a second run on a service said only "workspace 'demo' exists".
    await assert.rejects(playStory(operator, served.folder, () => undefined),
      (err: unknown) => {
        assert.ok(err instanceof Error && err.cause instanceof ArrowgateError, String(err));
        assert.match(err.message, /^INVALID_ARGUMENT: workspace 'demo' exists: /);
        assert.match(err.message, /a service of a new database, or give no options/);
        return true;
      });
  });

  it("narrates every step", () => {
    const text = lines.join("\n");
    for (const part of ["workspace demo", "not-connected", "RATE_LIMITED", "held", "approves"]) {
      assert.ok(text.includes(part), `${part} missing from:\n${text}`);
    }
  });

  it("refuses a stale digest with 409 and changes nothing", async () => {
    const card = operator.as((await operator.mintToken("card:standup")).token);
    // The rate window is full; a fresh card of the same package has its own.
    await operator.addNode("demo", { id: "standup2", type: "card", package: "demo.standup" });
    await operator.addArrow("demo", { id: "standup2-yolo", from: "standup2", to: "yolo" });
    const card2 = operator.as((await operator.mintToken("card:standup2")).token);
    const held = await card2.call({ card: "standup2", call: "agents.prompt", target: "yolo",
      args: { text: "rm -rf build/" } });
    assert.equal(held.outcome, "held");
    const wrong = createHash("sha256").update("something else").digest("hex");
    await assert.rejects(operator.approveHold(held.prompt ?? "", wrong),
      (err: unknown) => err instanceof ArrowgateError && err.status === 409
        && err.reason === "stale");
    assert.deepEqual((await operator.holds()).map((h) => h.id), [held.prompt]);
    // A card's token cannot approve, whatever it sends.
    await assert.rejects(card.approveHold(held.prompt ?? "", createHash("sha256")
      .update("rm -rf build/").digest("hex")),
      (err: unknown) => err instanceof ArrowgateError && err.status === 403);
  });
});

/** The events `client.events(options)` gives until `until` says stop (or 10 s pass). */
async function follow(client: Arrowgate, options: EventsOptions,
  until: (event: CardEvent, seen: CardEvent[]) => boolean): Promise<CardEvent[]> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), 10_000);
  const seen: CardEvent[] = [];
  try {
    for await (const event of client.events({ ...options, signal: stop.signal })) {
      seen.push(event);
      if (until(event, seen)) break;
    }
  } finally {
    clearTimeout(timer);
  }
  return seen;
}

describe("a card's event stream", () => {
  let served: Served;
  let operator: Arrowgate;
  let story: Story;

  before(async () => {
    served = await serve();
    operator = new Arrowgate(served.address, served.token);
    story = await playStory(operator, served.folder, () => undefined);
  });
  after(async () => {
    await operator?.close();
    assert.equal(await served?.stop(), 0, served?.output());
  });

  it("waits on a tool call for seconds String writes otherwise (1e-7, 0.1 + 0.2)", async () => {
    // The service takes seconds as plain decimals only: the client writes them so.
    const agent = operator.as((await operator.mintToken("agent:claude")).token);
    for (const seconds of [1e-7, 0.1 + 0.2, 0]) {
      const call = await agent.waitToolCall(story.tool.call.id, seconds);
      assert.equal(call.state, "answered", String(seconds));
    }
  });

  it("resumes after the last event seen: nothing again, nothing missed", async () => {
    // While nobody follows the card, its package loses a permission.
    await operator.revoke("demo.standup", "terminals.write");
    const card = operator.as((await operator.mintToken("card:standup")).token);
    const after = story.tool.event.id;
    const seen = await follow(card, { lastEventId: after },
      (event) => event.type === "permissions.changed");
    assert.ok(seen.length > 0);
    assert.ok(seen.every((e) => e.id !== undefined && BigInt(e.id) > BigInt(after ?? "0")),
      JSON.stringify(seen));
    // The first is the tool call's resolution, right after the call itself.
    const first = seen[0];
    assert.ok(first?.type === "tool.resolved", JSON.stringify(first));
    assert.equal(first.data.id, story.tool.event.data.id);
    assert.equal(first.data.state, "answered");
    const changed = seen.at(-1);
    assert.ok(changed?.type === "permissions.changed", JSON.stringify(changed));
    assert.equal(changed.data.package, "demo.standup");
    assert.ok(!changed.data.granted.includes("terminals.write"));
  });

  it("says events.dropped for an id the service never gave", async () => {
    const seen = await follow(operator, { card: "standup", lastEventId: "1" }, () => true);
    assert.equal(seen[0]?.type, "events.dropped");
  });

  it("ends with a 401 once the card's token is revoked", async () => {
    const minted = await operator.mintToken("card:standup");
    const card = operator.as(minted.token);
    let open: () => void = () => undefined;
    const isOpen = new Promise<void>((resolve) => { open = resolve; });
    const following = follow(card, { opened: open }, () => false);
    await isOpen;
    await operator.revokeToken(minted.id);
    await assert.rejects(following,
      (err: unknown) => err instanceof ArrowgateError && err.status === 401);
  });
});

describe("a card's event stream when the service freezes", () => {
  it("is taken for dead after idleMs of silence and opened again", async () => {
    // Heartbeats every 0.2 s; a stream silent for 2 s (ten of them missed) is given up.
    const served = await serve({ heartbeat: 0.2 });
    const operator = new Arrowgate(served.address, served.token);
    const stop = new AbortController();
    try {
      await operator.createWorkspace({ id: "w", folder: served.folder });
      const manifest = { name: "acme.watch", version: "1.0.0",
        permissions: { "agents.read": {} } };
      await operator.offer({ manifest, files: { "manifest.json": JSON.stringify(manifest) } });
      const review = await operator.review("acme.watch");
      await operator.install("acme.watch", { grant: "required", review_hash: review.hash });
      await operator.addNode("w", { id: "c", type: "card", package: "acme.watch" });
      let opens = 0;
      let reopened: () => void = () => undefined;
      const again = new Promise<void>((resolve) => { reopened = resolve; });
      let first: () => void = () => undefined;
      const isOpen = new Promise<void>((resolve) => { first = resolve; });
      const following = (async () => {
        for await (const _event of operator.events({ card: "c", idleMs: 2_000,
          signal: stop.signal, opened: () => {
            opens += 1;
            if (opens === 1) first(); else reopened();
          } })) {
          // no event is expected: the heartbeats keep the stream alive
        }
      })();
      await isOpen;
      // Heartbeats alone keep it open for longer than idleMs ...
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      assert.equal(opens, 1);
      // ... and a service that stops answering (frozen) is given up, then found again.
      served.signal("SIGSTOP");
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      served.signal("SIGCONT");
      await Promise.race([again, new Promise((_resolve, reject) => setTimeout(
        () => reject(new Error(`not opened again (${opens} opens)`)), 10_000))]);
      assert.equal(opens, 2);
      stop.abort();
      await following;
    } finally {
      stop.abort();
      served.signal("SIGCONT");
      await operator.close();
      assert.equal(await served.stop(), 0, served.output());
    }
  });
});

describe("the service on a loopback port", () => {
  it("answers health and a call's Decision over TCP", async () => {
    const served = await serve({ tcp: true });
    const operator = new Arrowgate(served.address, served.token);
    try {
      assert.equal((await operator.health()).status, "ok");
      const d = await operator.call({ card: "ghost", call: "agents.list" });
      assert.equal(d.outcome, "denied");
      assert.equal(d.code, "CARD_UNKNOWN");
      await assert.rejects(new Arrowgate(served.address).holds(),
        (err: unknown) => err instanceof ArrowgateError && err.status === 401);
      await assert.rejects(new Arrowgate(served.address, "not-a-token").holds(),
        (err: unknown) => err instanceof ArrowgateError && err.status === 401);
    } finally {
      await operator.close();
      assert.equal(await served.stop(), 0);
    }
  });
});
