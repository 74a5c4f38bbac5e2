"""The engine against a small reference model of SPEC §4–§7, driven by hypothesis (on SQLite,
then on PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from fractions import Fraction
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from engine import Engine, World, file_digests
from engine.app.replay import VirtualClock

CARDS = ("c1", "c2")
AGENTS = ("a1", "a2")
RATE, WINDOW, QUEUE, HOLD = 6, 60.0, 20, 300.0


class Model:
    """SPEC §4–§7 for one package with agents.prompt, two cards, two working agents."""

    def __init__(self) -> None:
        self.granted = True
        self.arrows: dict[tuple[str, str], str] = {}
        self.dangerous = {a: False for a in AGENTS}
        self.times: dict[str, list[float]] = {c: [] for c in CARDS}
        self.prompts: dict[str, dict] = {}  # id -> {card, agent, arrow, state, deadline}
        self.t = 0.0

    def expire(self) -> None:
        for p in self.prompts.values():
            if p["state"] == "held" and p["deadline"] <= self.t:
                p["state"] = "expired"

    def cancel_where(self, pred) -> None:
        for p in self.prompts.values():
            if p["state"] in ("queued", "held") and pred(p):
                p["state"] = "cancelled"

    def undelivered(self, agent: str) -> int:
        """Queued and held: a held prompt is one of the agent's 20 (SPEC §6)."""
        return sum(1 for p in self.prompts.values() if p["agent"] == agent
                   and p["state"] in ("queued", "held"))

    def prompt(self, card: str, agent: str) -> tuple[str, str | None]:
        """(outcome, code) the spec gives."""
        if not self.granted:
            return "denied", "PERMISSION_DENIED"
        if (card, agent) not in self.arrows:
            return "denied", "PERMISSION_DENIED"
        # As the engine counts (`engine.core.limits._beyond`): an event leaves the window
        # once x + WINDOW <= t for the real numbers the floats stand for. Not in floats:
        # t - WINDOW < x is another test (79.8 - 60 < 19.8 holds), and the rounded sum
        # x + WINDOW may land on t while the real one is above it (79.2 + 60.0).
        t = Fraction(self.t)
        window = [x for x in self.times[card] if Fraction(x) <= t < Fraction(x) + Fraction(WINDOW)]
        if len(window) >= RATE:
            return "rate-limited", "RATE_LIMITED"
        if self.undelivered(agent) >= QUEUE:
            return "denied", "QUEUE_FULL"
        self.times[card].append(self.t)
        return ("held" if self.dangerous[agent] else "queued"), None


class EngineVsModel(RuleBasedStateMachine):
    """Every call decides the same in the engine and the model; prompt states agree."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.dir = Path(tempfile.mkdtemp(prefix="arrowgate-sm-"))
        self.clock = VirtualClock(0.0)
        self.model = Model()
        self.arrow_n = 0
        self.engine = self._open()
        self.run(self._setup())

    def _open(self) -> Engine:
        return Engine.open(self.dir / "sm.db", clock=self.clock, world=World(net=None, fs=None))

    def run(self, coro):
        return self.loop.run_until_complete(coro)

    async def _setup(self) -> None:
        e = self.engine
        (self.dir / "ws").mkdir(exist_ok=True)
        await e.create_workspace("w1", self.dir / "ws")
        raw = {"name": "acme.p", "version": "1.0.0", "permissions": {"agents.prompt": {}}}
        await e.offer("acme.p", raw, file_digests({"manifest.json": json.dumps(raw)}))
        await e.install("acme.p")
        for c in CARDS:
            await e.add_node({"id": c, "type": "card", "package": "acme.p"}, workspace="w1")
        for a in AGENTS:
            await e.add_node({"id": a, "type": "agent", "status": "working"}, workspace="w1")
        for c in CARDS:
            for a in AGENTS:
                self.arrow_n += 1
                await e.add_arrow({"id": f"e{self.arrow_n}", "from": c, "to": a})
                self.model.arrows[(c, a)] = f"e{self.arrow_n}"

    def teardown(self) -> None:
        self.engine.close()
        self.loop.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _advance(self) -> None:
        # The engine expires holds on each operation and, in an app, on its
        # timers (`run_timers`); the model expires them the moment time
        # passes. So before a rule compares, the engine's timers get their
        # turn too: a burst's last gap advanced the clock with no call after
        # it, and a rule that then changes nothing (an arrow already drawn)
        # would see the engine's hold still waiting for its timer.
        self.run(self.engine.expire_due())
        self.model.t = self.clock.t
        self.model.expire()

    @rule(dt=st.sampled_from([0.0, 0.5, 5.0, 30.0, 59.9, 60.0, 200.0, 301.0]))
    def advance(self, dt: float) -> None:
        self.clock.t += dt
        self.run(self.engine.expire_due())
        self._advance()

    @rule(card=st.sampled_from(CARDS), agent=st.sampled_from(AGENTS))
    def prompt(self, card: str, agent: str) -> None:
        self._advance()
        d = self.run(self.engine.call(card, "agents.prompt", agent, {"text": "x"}))
        outcome, code = self.model.prompt(card, agent)
        assert (d.outcome, d.code) == (outcome, code), d.message
        if d.prompt:
            self.model.prompts[d.prompt] = {"card": card, "agent": agent,
                                            "arrow": self.model.arrows[(card, agent)],
                                            "state": outcome,
                                            "deadline": self.model.t + HOLD}

    @rule(card=st.sampled_from(CARDS), agent=st.sampled_from(AGENTS), n=st.integers(2, 8),
          gap=st.sampled_from([0.0, 1.0, 9.9]))
    def burst(self, card: str, agent: str, n: int, gap: float) -> None:
        """Several prompts in a row, as cards make them: rate and queue edges."""
        for _ in range(n):
            self.prompt(card, agent)
            self.clock.t += gap

    @rule(card=st.sampled_from(CARDS), agent=st.sampled_from(AGENTS))
    def add_arrow(self, card: str, agent: str) -> None:
        self._advance()
        if (card, agent) in self.model.arrows:
            return
        self.arrow_n += 1
        arrow_id = f"e{self.arrow_n}"
        self.run(self.engine.add_arrow({"id": arrow_id, "from": card, "to": agent}))
        self.model.arrows[(card, agent)] = arrow_id

    @precondition(lambda self: bool(self.model.arrows))
    @rule(data=st.data())
    def remove_arrow(self, data) -> None:
        self._advance()
        pair = data.draw(st.sampled_from(sorted(self.model.arrows)))
        arrow_id = self.model.arrows.pop(pair)
        self.run(self.engine.remove_arrow(arrow_id, by="agent:a1"))
        self.model.cancel_where(lambda p: p["arrow"] == arrow_id)

    @rule()
    def revoke(self) -> None:
        self._advance()
        self.run(self.engine.revoke("acme.p", "agents.prompt"))
        self.model.granted = False
        self.model.cancel_where(lambda p: True)

    @rule()
    def grant(self) -> None:
        self._advance()
        self.run(self.engine.grant("acme.p", "agents.prompt"))
        self.model.granted = True

    @rule(agent=st.sampled_from(AGENTS), flag=st.booleans())
    def set_dangerous(self, agent: str, flag: bool) -> None:
        self._advance()
        self.run(self.engine.set_node(agent, {"dangerous": flag}))
        self.model.dangerous[agent] = flag

    @rule(approve=st.booleans())
    def answer_oldest_hold(self, approve: bool) -> None:
        self._advance()
        held = [pid for pid, p in self.model.prompts.items() if p["state"] == "held"]
        if not held:
            return
        pid = min(held, key=lambda x: int(x[1:]))
        p = self.model.prompts[pid]
        if approve:
            self.run(self.engine.approve_hold(pid, text_sha256=self.engine.prompt(pid).text_sha256))
            ok = self.model.granted and self.model.arrows.get((p["card"], p["agent"])) == p["arrow"]
            # Its place in the queue was kept while held: only the others count.
            if ok and self.model.undelivered(p["agent"]) - 1 < QUEUE:
                p["state"] = "queued"
            else:
                p["state"] = "cancelled"
        else:
            self.run(self.engine.reject_hold(pid))
            p["state"] = "rejected"

    @rule()
    def restart(self) -> None:
        self.engine.close()
        self.engine = self._open()
        self.run(self.engine.expire_due())
        self._advance()

    @invariant()
    def prompt_states_agree(self) -> None:
        engine_states = {p.id: p.state for p in self.engine.prompts()}
        model_states = {pid: p["state"] for pid, p in self.model.prompts.items()}
        assert engine_states == model_states

    @invariant()
    def open_prompt_index_agrees_with_a_scan(self) -> None:
        """The index every call reads (held, queued, delivered by agent) matches all prompts."""
        index = self.engine.state.open_prompts
        everything = list(self.engine.state.prompts.values())
        assert [p.id for p in index.held()] == [
            p.id for p in sorted(everything, key=lambda p: p.position) if p.state == "held"]
        for agent in AGENTS:
            for state in ("queued", "held", "delivered"):
                assert [p.id for p in index.of_agent(agent, state)] == [
                    p.id for p in sorted(everything, key=lambda p: p.position)
                    if p.agent == agent and p.state == state]

    @invariant()
    def log_verifies(self) -> None:
        assert self.engine.verify_log().ok


EngineVsModel.TestCase.settings = settings(max_examples=100, stateful_step_count=50,
                                           deadline=None)
TestEngineVsModel = EngineVsModel.TestCase


class EngineVsModelOnPostgres(EngineVsModel):
    """The same machine on the PostgreSQL store: a schema of its own per example.

    ``dsn`` is set by the test below (a state machine cannot take fixtures).
    A restart opens a new engine (a new connection) on the same schema.
    """

    dsn = ""

    def _open(self) -> Engine:
        from engine.store.pg.store import PGStore, create_schema

        if not getattr(self, "schema", None):
            self.schema = create_schema(self.dsn, prefix="arrowgate_sm")
        return Engine(PGStore.open(self.dsn, schema=self.schema), clock=self.clock,
                      world=World(net=None, fs=None))

    def teardown(self) -> None:
        from engine.store.pg.store import drop_schema

        try:
            super().teardown()
        finally:
            drop_schema(self.dsn, self.schema)


def test_engine_vs_model_on_postgres(pg_dsn: str) -> None:
    """The model's rules hold on PostgreSQL too (fewer examples: each step is a round trip
    to the server; the SQLite run above explores more)."""
    from hypothesis.stateful import run_state_machine_as_test

    machine = type("OnThisServer", (EngineVsModelOnPostgres,), {"dsn": pg_dsn})
    run_state_machine_as_test(machine, settings=settings(
        max_examples=50, stateful_step_count=50, deadline=None))


def test_the_model_reads_the_window_as_exactly_as_the_engine() -> None:
    """At a rounding edge the model and the engine's window agree (found by the machine:
    eight gaps of 9.9 s make 79.2, and 60.0 more make the float 139.2, which is 1.4e-14 s
    short of the real 79.2 + 60: the call at 79.2 is still inside its window, exactly as
    SPEC §6 reads it and `engine.core.limits` counts it)."""
    from engine.core.limits import RollingWindow

    x = 0.0
    for _ in range(8):
        x += 9.9
    model, window = Model(), RollingWindow(RATE, WINDOW)
    model.arrows[("c1", "a1")] = "e1"
    model.t = x
    for _ in range(RATE):
        model.prompt("c1", "a1")
        window.count(x)
    model.t = x + WINDOW
    assert window.retry_after(model.t) is not None  # the engine: still full
    assert model.prompt("c1", "a1") == ("rate-limited", "RATE_LIMITED")

