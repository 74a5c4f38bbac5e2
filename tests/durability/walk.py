"""Several programs on one store, driven at random against one model (SPEC §10 "Storage":
every rule holds across all engines on one database — one rolling window per card and
key however many processes admit calls, one hash chain, a revoke seen by every engine
on its next call). Not a test: `test_several_programs_agree_with_a_model` runs it for a
few seeded walks, ``bench/several_programs.py`` for long ones.

The programs (`tests.durability.programs`): in-process `Engine`s on the store, real
``arrowgate serve`` processes reached over their sockets with tokens, and (in the soak)
the command line's write verbs, as an app, a person's TUI, the servers of other machines
and scripts would be. Each step one or several of them act —
at once, where the step is a race — and the `Model` says what each must answer:

- a call's outcome and code (prompts to a plain and to a dangerous agent, clipboard
  writes, an agent's tool calls), rate windows bounded by the times each call was
  made between (the programs share the wall clock), so a call near a window's edge
  may go either way but a window never holds more than its limit;
- a consent change (revoke, a removed arrow or card, a new version offered) refuses
  every program's very next call, and cancels what it made impossible;
- a hold or a tool call answered once, whichever programs answer it at once: the
  others are told it is no longer open;
- a token revoked, or its node removed, is refused by every server at once;
- one log whose chain verifies, holding each answered call's row (by its unique
  payload) and each prompt's and tool call's resolutions in order.
"""

from __future__ import annotations

import asyncio
import bisect
import hashlib
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.durability.programs import (
    AGENTS,
    CARDS,
    PERMS,
    PKG,
    Answer,
    InProcess,
    Program,
    Served,
    manifest,
)

PROMPT_LIMIT, PROMPT_PERIOD = 6, 60.0
CLIP_LIMIT, CLIP_PERIOD = 1, 1.0
TOOL_LIMIT, TOOL_PERIOD = 4, 60.0  #: the workspace's tool_call_limit, set low to reach it
QUEUE = 20
#: Seconds of doubt at a window's edge: the engine's time is read inside the call.
EDGE = 0.002


@dataclass
class Made:
    """A call the model expects a log row of: its payload's outcome."""

    outcome: str
    code: str | None
    life: int  #: the card's life it was made in (`Model.lives`)
    lo: float = 0.0  #: the wall clock before the call was made
    hi: float = 0.0  #: and once it was answered
    by: str = ""  #: the program that made it


@dataclass
class Opened:
    """A prompt or tool call the store holds, and the log rows it should have."""

    card: str
    agent: str
    arrow: str
    state: str
    rows: list[str]
    life: int  #: the card's life it was made in (`Model.lives`)
    text: str = ""


@dataclass
class Model:
    """SPEC §4–§7 and §9 for the walk's canvas: package acme.m (agents.prompt,
    clipboard.write, tool ping) with cards c1 and c2, agent a1 and the dangerous y1."""

    granted: set[str] = field(default_factory=lambda: set(PERMS))
    pending: bool = False
    cards: set[str] = field(default_factory=lambda: set(CARDS))
    lives: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CARDS, 0))
    arrows: dict[tuple[str, str], str] = field(default_factory=dict)
    #: (card or agent, life, key) -> accepted calls as (made after, answered before)
    windows: dict[tuple[str, int, str], list[tuple[float, float]]] = field(default_factory=dict)
    prompts: dict[str, Opened] = field(default_factory=dict)
    tools: dict[str, Opened] = field(default_factory=dict)
    payloads: dict[str, Made] = field(default_factory=dict)

    def undelivered(self, agent: str) -> int:
        return sum(1 for p in self.prompts.values()
                   if p.agent == agent and p.state in ("queued", "held"))

    def waits_on_the_package(self, agent: str) -> bool:
        """Whether ``agent`` has a tool call open to a card of the walk's one package
        (every card is a ``PKG`` card): the loop guard holds all its cards to it."""
        return any(t.state == "open" and t.card in CARDS and t.agent == agent
                   for t in self.tools.values())

    def window(self, owner: str, key: str) -> list[tuple[float, float]]:
        life = self.lives.get(owner, 0)
        return self.windows.setdefault((owner, life, key), [])

    @staticmethod
    def room(times: list[tuple[float, float]], limit: int, period: float,
             lo: float, hi: float) -> tuple[int, int]:
        """The fewest and most calls a window ending between ``lo`` and ``hi`` has room
        for: calls surely inside it count against the most, calls perhaps inside it
        against the fewest."""
        surely = sum(1 for a, _b in times if a - EDGE + period > hi)
        perhaps = sum(1 for _a, b in times if b + EDGE + period > lo)
        return max(0, limit - perhaps), max(0, limit - surely)

    def consent(self, card: str, permission: str | None) -> tuple[str, str | None] | None:
        """The refusal of checks 1–5 for ``card`` (None: they pass)."""
        if card not in self.cards:
            return "CARD_UNKNOWN", None
        if self.pending:
            return "PACKAGE_PENDING", None
        if permission is not None and permission not in self.granted:
            return "PERMISSION_DENIED", "not-granted"
        return None

    def revalidate(self) -> None:
        """Cancel the prompts and tool calls a change made impossible (SPEC §4.3)."""
        for pid, p in self.prompts.items():
            if p.state in ("queued", "held") and (
                    self.consent(p.card, "agents.prompt") is not None
                    or p.life != self.lives[p.card]
                    or self.arrows.get((p.card, p.agent)) != p.arrow):
                p.state = "cancelled"
                p.rows.append("cancelled")
        for t in self.tools.values():
            if t.state == "open" and (self.consent(t.card, None) is not None
                                      or t.life != self.lives[t.card]
                                      or self.arrows.get((t.card, t.agent)) != t.arrow):
                t.state = "cancelled"
                t.rows.append("cancelled")


class Mismatch(AssertionError):
    """A program answered what the model does not allow."""


class Walk:
    """A seeded walk of ``steps`` steps by ``programs`` on one store."""

    def __init__(self, programs: list[Program], seed: int, *, log: Callable[[str], None]
                 | None = None) -> None:
        self.programs, self.rng, self.seed = programs, random.Random(seed), seed
        self.model = Model()
        self.n = 0  #: calls made (each payload names its number)
        self.steps = 0
        self.arrow_n = 0
        #: Ids of arrows removed, which a new arrow may be given again (of any pair).
        self.removed_ids: list[str] = []
        self.version = 0
        self.trace: list[str] = []
        self._log = log

    # -- bookkeeping

    def note(self, line: str) -> None:
        self.trace.append(line)
        if self._log is not None:
            self._log(line)

    def fail(self, what: str) -> Mismatch:
        tail = "\n  ".join(self.trace[-25:])
        return Mismatch(f"seed {self.seed}, step {self.steps} (call {self.n}): {what}\n"
                        f"  last steps:\n  {tail}")

    def pick(self, op: str) -> Program:
        return self.rng.choice(self.able(op))

    def able(self, op: str) -> list[Program]:
        return [p for p in self.programs if p.can(op)]

    def payload(self, what: str) -> str:
        self.n += 1
        return f"s{self.seed}.{self.n}.{what}"

    async def served_token(self, program: Program, principal: str) -> bool:
        """Give a server a token of ``principal`` (minted by a program the walk picks);
        False when its node is not on the canvas."""
        if not isinstance(program, Served) or principal in program.tokens:
            return True
        kind, _, node = principal.partition(":")
        if kind == "card" and node not in self.model.cards:
            return False
        minter = self.pick("mint")
        program.tokens[principal] = await minter.mint(principal)
        self.note(f"{minter.name} mints {principal} for {program.name}")
        return True

    # -- setup

    async def setup(self, folder: Path) -> None:
        """The canvas, made by the first in-process program."""
        first = next(p for p in self.programs if isinstance(p, InProcess))
        e = first.engine
        (folder / "ws").mkdir(parents=True, exist_ok=True)
        await e.create_workspace("w1", folder / "ws", settings={
            "tool_call_limit": TOOL_LIMIT, "denial_log_limit": 100_000})
        raw, digests = manifest("1.0.0")
        await e.offer(PKG, raw, digests)
        await e.install(PKG)
        for card in CARDS:
            await e.add_node({"id": card, "type": "card", "package": PKG}, workspace="w1")
        await e.add_node({"id": "a1", "type": "agent", "status": "working"}, workspace="w1")
        await e.add_node({"id": "y1", "type": "agent", "status": "working", "dangerous": True},
                         workspace="w1")
        for card in CARDS:
            for agent in AGENTS:
                await self._draw(first, card, agent)

    async def _draw(self, program: Program, card: str, agent: str) -> None:
        if self.removed_ids and self.rng.random() < 0.5:
            # A removed arrow's id again: what was made on the old arrow stays gone.
            arrow_id = self.removed_ids.pop(self.rng.randrange(len(self.removed_ids)))
            self.note(f"{arrow_id} is drawn again, an id used before")
        else:
            self.arrow_n += 1
            arrow_id = f"e{self.arrow_n}"
        await program.add_arrow(arrow_id, card, agent)
        self.model.arrows[(card, agent)] = arrow_id

    # -- calls

    def expect_prompt(self, card: str, agent: str, lo: float, hi: float
                      ) -> tuple[set[tuple[str, str | None]], int]:
        """The answers a prompt may get, and how much window room it has at most."""
        m = self.model
        refused = m.consent(card, "agents.prompt")
        if refused is not None:
            return {("denied", refused[0])}, 0
        if (card, agent) not in m.arrows:
            return {("denied", "PERMISSION_DENIED")}, 0
        if m.waits_on_the_package(agent):
            # SPEC §9: made while its package's tool calls are open, the prompt is
            # checked against their chains; one begun by the agent it would prompt
            # is a cycle.
            return {("denied", "LOOP_REFUSED")}, 0
        fewest, most = m.room(m.window(card, "prompt"), PROMPT_LIMIT, PROMPT_PERIOD, lo, hi)
        passed = ("denied", "QUEUE_FULL") if m.undelivered(agent) >= QUEUE else \
            ("held" if agent == "y1" else "queued", None)
        allowed: set[tuple[str, str | None]] = set()
        if most > 0:
            allowed.add(passed)
        if fewest == 0:
            allowed.add(("rate-limited", "RATE_LIMITED"))
        return allowed, most

    def expect_clip(self, card: str, lo: float, hi: float
                    ) -> set[tuple[str, str | None]]:
        m = self.model
        refused = m.consent(card, "clipboard.write")
        if refused is not None:
            return {("denied", refused[0])}
        fewest, most = m.room(m.window(card, "clipboard"), CLIP_LIMIT, CLIP_PERIOD, lo, hi)
        allowed: set[tuple[str, str | None]] = set()
        if most > 0:
            allowed.add(("ok", None))
        if fewest == 0:
            allowed.add(("rate-limited", "RATE_LIMITED"))
        return allowed

    def expect_tool(self, agent: str, card: str, lo: float, hi: float
                    ) -> set[tuple[str, str | None]]:
        m = self.model
        refused = m.consent(card, None)
        if refused is not None:
            return {("denied", refused[0])}
        if (card, agent) not in m.arrows:
            return {("denied", "PERMISSION_DENIED")}
        fewest, most = m.room(m.window(agent, "tool-call"), TOOL_LIMIT, TOOL_PERIOD, lo, hi)
        allowed: set[tuple[str, str | None]] = set()
        if most > 0:
            allowed.add(("ok", None))
        if fewest == 0:
            allowed.add(("rate-limited", "RATE_LIMITED"))
        return allowed

    async def one_call(self, program: Program, kind: str, card: str, agent: str
                       ) -> tuple[Answer, str, float, float, Program] | None:
        """``program`` makes one call; None when it cannot (a server with no token for
        a card not on the canvas)."""
        who = f"agent:{agent}" if kind == "tool" else f"card:{card}"
        if not await self.served_token(program, who):
            return None
        text = self.payload(kind)
        lo = time.time()
        if kind == "prompt":
            answer = await program.call(card, "agents.prompt", agent, text)
        elif kind == "clip":
            answer = await program.call(card, "clipboard.copyText", None, text)
        else:
            answer = await program.tool(agent, card, text)
        hi = time.time()
        if answer.outcome == "401":
            raise self.fail(f"{program.name} refused the token of {who}, which is live")
        return answer, text, lo, hi, program

    def judge(self, kind: str, card: str, agent: str, answer: Answer, text: str,
              lo: float, hi: float, program: Program) -> None:
        """Check one call's answer against the model, then apply it."""
        m = self.model
        if kind == "prompt":
            allowed, _ = self.expect_prompt(card, agent, lo, hi)
        elif kind == "clip":
            allowed = self.expect_clip(card, lo, hi)
        else:
            allowed = self.expect_tool(agent, card, lo, hi)
        got = (answer.outcome, answer.code)
        self.note(f"{program.name} {kind} {card}->{agent}: {got} {answer.reason or ''} "
                  f"[{text}]")
        if got not in allowed:
            raise self.fail(f"{program.name}: {kind} of {card} to {agent} answered {got} "
                            f"({answer.reason}), the model allows {sorted(allowed, key=str)}")
        m.payloads[text] = Made(answer.outcome, answer.code, m.lives.get(card, 0), lo, hi,
                                program.name)
        if answer.outcome in ("queued", "held"):
            assert answer.id is not None
            m.window(card, "prompt").append((lo, hi))
            m.prompts[answer.id] = Opened(card, agent, m.arrows[(card, agent)], answer.outcome,
                                          [answer.outcome], m.lives[card], text)
        elif answer.outcome == "ok" and kind == "clip":
            m.window(card, "clipboard").append((lo, hi))
        elif answer.outcome == "ok":
            assert answer.id is not None
            m.window(agent, "tool-call").append((lo, hi))
            m.tools[answer.id] = Opened(card, agent, m.arrows[(card, agent)], "open", ["ok"],
                                        m.lives[card])

    async def step_call(self) -> None:
        kind = self.rng.choice(("prompt", "prompt", "clip", "tool"))
        card, agent = self.rng.choice(CARDS), self.rng.choice(AGENTS)
        program = self.pick("tool" if kind == "tool" else "call")
        made = await self.one_call(program, kind, card, agent)
        if made is not None:
            self.judge(kind, card, agent, *made)

    async def step_race(self) -> None:
        """Every program makes the same kind of call at once: the window is one across
        them (never more accepted than it has room for)."""
        kind = self.rng.choice(("prompt", "clip", "tool"))
        card, agent = self.rng.choice(CARDS), self.rng.choice(AGENTS)
        racers = [p for p in self.able("tool" if kind == "tool" else "call")
                  if await self.served_token(p, f"agent:{agent}" if kind == "tool"
                                             else f"card:{card}")]
        racers = racers * self.rng.choice((1, 2))
        lo = time.time()
        made = await asyncio.gather(*(self.one_call(p, kind, card, agent) for p in racers))
        hi = time.time()
        answers = [x for x in made if x is not None]
        accepted = [a for a in answers if a[0].outcome in ("queued", "held", "ok")]
        owner, key, limit, period = {
            "prompt": (card, "prompt", PROMPT_LIMIT, PROMPT_PERIOD),
            "clip": (card, "clipboard", CLIP_LIMIT, CLIP_PERIOD),
            "tool": (agent, "tool-call", TOOL_LIMIT, TOOL_PERIOD)}[kind]
        _fewest, most = self.model.room(self.model.window(owner, key), limit, period, lo, hi)
        # A race longer than the window (a command line's process starting) is judged
        # call by call, and by the log's times at the end.
        if hi - lo < period and len(accepted) > most:
            raise self.fail(f"a race of {len(answers)} {kind} calls of {owner} let "
                            f"{len(accepted)} through; its window had room for {most}")
        # Judged one by one in the order the store took them (their own bounds), each
        # within the race's: a call refused for the window is judged after those accepted.
        for answer, text, a_lo, a_hi, program in sorted(
                answers, key=lambda x: x[0].outcome == "rate-limited"):
            self.judge(kind, card, agent, answer, text, a_lo, a_hi, program)

    # -- consent

    async def probe_all(self, why: str) -> None:
        """After a narrowing, every program's very next call is judged (SPEC §10: a
        revoke seen by every engine on its next call)."""
        self.note(f"probe after {why}")
        kind = self.rng.choice(("prompt", "clip", "tool"))
        card, agent = self.rng.choice(CARDS), self.rng.choice(AGENTS)
        for program in self.able("tool" if kind == "tool" else "call"):
            made = await self.one_call(program, kind, card, agent)
            if made is not None:
                self.judge(kind, card, agent, *made)

    async def step_arrow(self) -> None:
        card, agent = self.rng.choice(CARDS), self.rng.choice(AGENTS)
        m = self.model
        if card not in m.cards:
            return
        program = self.pick("remove_arrow" if (card, agent) in m.arrows else "add_arrow")
        if (card, agent) in m.arrows:
            arrow_id = m.arrows.pop((card, agent))
            self.removed_ids.append(arrow_id)
            self.note(f"{program.name} removes arrow {arrow_id} {card}-{agent}")
            await program.remove_arrow(arrow_id)
            m.revalidate()
            await self.probe_all("arrow removed")
        else:
            await self._draw(program, card, agent)
            self.note(f"{program.name} draws {m.arrows[(card, agent)]} {card}-{agent}")

    async def step_card(self) -> None:
        m = self.model
        program = self.pick("remove_card" if "c2" in m.cards else "add_card")
        if "c2" in m.cards:
            self.note(f"{program.name} removes card c2")
            await program.remove_card("c2")
            m.cards.discard("c2")
            for pair in [p for p in m.arrows if p[0] == "c2"]:
                self.removed_ids.append(m.arrows.pop(pair))
            m.revalidate()
            m.lives["c2"] += 1
            # Removing a node revokes its tokens: every server refuses them at once.
            for served in self.programs:
                if isinstance(served, Served) and "card:c2" in served.tokens:
                    r = await served._as("card:c2", "POST", "/v1/calls", {
                        "card": "c2", "call": "clipboard.copyText", "args": {"text": "x"}})
                    if r.status_code != 401:
                        raise self.fail(f"{served.name} took the token of the removed card c2: "
                                        f"{r.status_code} {r.text}")
                    del served.tokens["card:c2"]
            await self.probe_all("card removed")
        else:
            self.note(f"{program.name} adds card c2")
            await program.add_card("c2")
            m.cards.add("c2")

    async def step_grant(self) -> None:
        m = self.model
        permission = self.rng.choice(PERMS)
        if m.pending:
            return
        program = self.pick("revoke" if permission in m.granted else "grant")
        if permission in m.granted:
            self.note(f"{program.name} revokes {permission}")
            await program.revoke(permission)
            m.granted.discard(permission)
            m.revalidate()
            await self.probe_all(f"revoke of {permission}")
        else:
            self.note(f"{program.name} grants {permission}")
            await program.grant(permission)
            m.granted.add(permission)

    async def step_update(self) -> None:
        m = self.model
        program = self.pick("approve_update" if m.pending else "offer")
        if m.pending:
            self.note(f"{program.name} approves the pending version")
            await program.approve_update()
            m.pending = False
        else:
            self.version += 1
            self.note(f"{program.name} offers version 1.{self.version}.0")
            await program.offer(f"1.{self.version}.0")
            m.pending = True
            m.revalidate()
            await self.probe_all("a new version offered")

    # -- holds and tool calls

    async def step_hold(self) -> None:
        m = self.model
        held = [pid for pid, p in m.prompts.items() if p.state == "held"]
        if not held:
            return
        pid = self.rng.choice(held)
        p = m.prompts[pid]
        digest = hashlib.sha256(p.text.encode()).hexdigest()
        approve = self.rng.random() < 0.6
        deciders = self.rng.sample(self.able("approve"), self.rng.choice((1, 2)))
        self.note(f"{'+'.join(d.name for d in deciders)} "
                  f"{'approve' if approve else 'reject'} {pid}")
        answers = await asyncio.gather(*(
            d.approve(pid, digest) if approve else d.reject(pid) for d in deciders))
        won = [a for a in answers if a.outcome != "gone"]
        lost = [a for a in answers if a.outcome == "gone"]
        if len(won) != 1:
            raise self.fail(f"{pid} answered by {len(won)} of {len(deciders)}: {answers}")
        if any(a.reason not in ("queued", "rejected", "cancelled", "delivered") for a in lost):
            raise self.fail(f"the loser of {pid}'s answer was told {lost}")
        answer = won[0]
        if not approve:
            expected = {("denied", "PROMPT_REJECTED")}
            p.state = "rejected"
            p.rows.append("rejected")
        elif m.waits_on_the_package(p.agent):
            # SPEC §7: check 9 again at approval, against the open calls as they stand
            expected = {("denied", "LOOP_REFUSED")}
            p.state = "cancelled"
            p.rows.append("cancelled")
        elif m.undelivered(p.agent) - 1 < QUEUE:
            expected = {("queued", None)}
            p.state = "queued"
            p.rows.append("approved")
        else:
            expected = {("denied", "QUEUE_FULL")}
            p.state = "cancelled"
            p.rows.append("cancelled")
        if (answer.outcome, answer.code) not in expected:
            raise self.fail(f"{pid} answered {answer}, the model says {expected}")

    async def step_tool_answer(self) -> None:
        m = self.model
        open_ = [tid for tid, t in m.tools.items() if t.state == "open"]
        if not open_:
            return
        tid = self.rng.choice(open_)
        t = m.tools[tid]
        answerers = [p for p in self.rng.sample(self.able("answer_tool"),
                                                self.rng.choice((1, 2)))
                     if await self.served_token(p, f"card:{t.card}")]
        self.note(f"{'+'.join(a.name for a in answerers)} answer {tid}")
        answers = await asyncio.gather(*(a.answer_tool(tid, t.card) for a in answerers))
        won = [a for a in answers if a.outcome != "gone"]
        if len(won) != 1 or won[0].outcome != "answered":
            raise self.fail(f"{tid} answered by {len(won)} of {len(answerers)}: {answers}")
        if any(a.reason != "answered" for a in answers if a.outcome == "gone"):
            raise self.fail(f"the loser of {tid}'s answer was told {answers}")
        t.state = "answered"
        t.rows.append("answered")

    # -- tokens

    async def step_token(self) -> None:
        """A server's card or agent token is revoked by a program the walk picks: every
        server refuses it at once; then it is given another."""
        servers = [p for p in self.programs if isinstance(p, Served)]
        held = [(s, principal) for s in servers for principal in s.tokens]
        if not held:
            return
        server, principal = self.rng.choice(held)
        token_id, token = server.tokens.pop(principal)
        revoker = self.pick("revoke_token")
        self.note(f"{revoker.name} revokes {principal}'s token {token_id} of {server.name}")
        await revoker.revoke_token(token_id)
        for other in servers:
            r = await other.client(token).get("/v1/holds")
            if r.status_code != 401:
                raise self.fail(f"{other.name} took {principal}'s token after "
                                f"{revoker.name} revoked it: {r.status_code}")
        await self.served_token(server, principal)

    async def step_verify(self) -> None:
        program = self.pick("verify")
        if not await program.verify():
            raise self.fail(f"{program.name}: the log does not verify")

    # -- the walk

    async def run(self, steps: int) -> None:
        """``steps`` steps, then the log checked whole."""
        moves: list[tuple[int, Callable[[], Awaitable[None]]]] = [
            (30, self.step_call), (8, self.step_race), (6, self.step_arrow),
            (3, self.step_card), (5, self.step_grant), (3, self.step_update),
            (8, self.step_hold), (6, self.step_tool_answer), (3, self.step_token),
            (2, self.step_verify)]
        weights = [w for w, _ in moves]
        for self.steps in range(1, steps + 1):
            move = self.rng.choices([m for _, m in moves], weights)[0]
            try:
                await move()
            except httpx.TimeoutException as exc:
                raise self.fail(f"a server did not answer: {exc!r}") from exc
        await self.check_log()

    async def check_log(self) -> None:
        """One chain verifying on every program, with each answered call's row and each
        prompt's and tool call's rows in order; and no window over its limit."""
        for program in self.programs:
            if not await program.verify():
                raise self.fail(f"{program.name}: the log does not verify")
        engine = next(p for p in self.programs if isinstance(p, InProcess)).engine
        engine.catch_up()
        rows = engine.log_rows()
        by_payload: dict[str, list[dict[str, Any]]] = {}
        by_id: dict[str, list[str]] = {}
        for row in rows:
            payload = _payload(row)
            if payload in self.model.payloads and row["outcome"] in (
                    "ok", "queued", "held", "denied", "rate-limited"):
                by_payload.setdefault(payload, []).append(row)
            if row["prompt"] is not None:
                by_id.setdefault(row["prompt"], []).append(row["outcome"])
        for payload, made in self.model.payloads.items():
            found = [(r["outcome"], r["code"]) for r in by_payload.get(payload, [])]
            if found != [(made.outcome, made.code)]:
                raise self.fail(f"the call [{payload}] answered {made}; its log rows: {found}")
        for kind, opened in (("prompt", self.model.prompts), ("tool call", self.model.tools)):
            for oid, o in opened.items():
                if by_id.get(oid) != o.rows:
                    raise self.fail(f"{kind} {oid}'s rows are {by_id.get(oid)}, the model "
                                    f"says {o.rows}")
        self._check_windows(rows)

    def _check_windows(self, rows: list[dict[str, Any]]) -> None:
        """No window of the log's accepted calls ever held more than its limit (each card
        counted per life: a card made again under its id starts with no calls)."""
        life_of = {text: made.life for text, made in self.model.payloads.items()}
        kept: dict[tuple[str, Any, str], list[float]] = {}
        for row in rows:
            if row["outcome"] not in ("ok", "queued", "held"):
                continue
            payload = _payload(row)
            if row["call"] == "agents.prompt":
                key = (row["card"], life_of.get(payload), "prompt")
            elif row["call"] == "clipboard.copyText":
                key = (row["card"], life_of.get(payload), "clipboard")
            elif row["call"].startswith("tool:"):
                key = (row["target"], 0, "tool-call")
            else:
                continue
            bisect.insort(kept.setdefault(key, []), (row["t"], payload))
        limits = {"prompt": (PROMPT_LIMIT, PROMPT_PERIOD),
                  "clipboard": (CLIP_LIMIT, CLIP_PERIOD),
                  "tool-call": (TOOL_LIMIT, TOOL_PERIOD)}
        for (owner, _life, key), times in kept.items():
            limit, period = limits[key]
            for i in range(limit, len(times)):
                if times[i][0] < times[i - limit][0] + period:
                    told = [(t, p, self.model.payloads.get(p)) for t, p in times[i - limit:i + 1]]
                    raise self.fail(f"{owner}'s {key} window held {limit + 1} calls: {told}")


def _payload(row: dict[str, Any]) -> str | None:
    """The unique text a call of the walk sent, read from its log row."""
    payload = row["payload"]
    if row["call"].startswith("tool:") and payload:
        return str(json.loads(payload).get("n", payload))
    return payload if payload is None else str(payload)


async def walk(programs: list[Program], folder: Path, seed: int, steps: int, *,
               log: Callable[[str], None] | None = None) -> Walk:
    """Set up the canvas with the first in-process program, then walk."""
    w = Walk(programs, seed, log=log)
    await w.setup(folder)
    await w.run(steps)
    return w
