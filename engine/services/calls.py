"""Calls a card makes (SPEC §5): decide, carry out, log; port data and tool calls."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Awaitable, Coroutine, Iterable
from typing import Any

from canvas import Arrow, Node
from engine.core.catalogue import PORT_INPUTS, waits
from engine.core.checks import (
    Passed,
    check_card,
    data_problem,
    decide,
    denial,
    malformed,
    rate_limited,
    window_limit,
)
from engine.core.decision import Decision
from engine.core.limits import UNDER_WAY_PER_CARD, rate_owner
from engine.core.plans import CountRate, plan_call, plan_prompt
from engine.core.text import as_sent, named
from engine.effects.threadwork import STARTED
from engine.effects.world import World
from engine.services import claims
from engine.services.apply import Applier
from engine.services.context import Context, operation
from engine.services.prompts import Prompts
from engine.services.record import Recorder
from engine.services.underway import Underway, close_deadline
from engine.store.transactions import run_each_durably, run_eagerly

__all__ = ["CallArgs", "Calls"]

#: The keywords `Calls.call` passes: none (never changed; `run_eagerly` only unpacks it).
_NO_KEYWORDS: dict[str, Any] = {}

#: The calls that type into a terminal (`Calls._typed_elsewhere`).
_TERMINAL_INPUT = frozenset({"terminals.run", "terminals.write"})

#: The refusals of the checks after the loop guard (SPEC §5: rate limits and caps, 10;
#: the prompt queue, 11), which another open tool call's loop refusal (9) comes before.
#: Checks 1–8 do not depend on the chain: every open call's gives the same.
_AFTER_THE_GUARD = frozenset({"RATE_LIMITED", "CARD_LIMIT", "QUEUE_FULL"})

#: One call of `Calls.call_many`: card, call, target, args, context.
CallArgs = tuple[str, str, "str | None", "dict[str, Any] | None", "str | None"]


def _in_context(passed: Passed, chain: tuple[str, ...] | None) -> Passed:
    """What passed, carrying ``chain``, the chain of the tool call the card named as the
    call's context (SPEC §9): logged on its row, allowed or refused later (SPEC §8).

    A prompt's chain is its own (its hop added, `decide`); any other call made in a
    tool call carries that call's chain as it is, as its refusal's row does.
    """
    if chain is None or passed.chain is not None:
        return passed
    return dataclasses.replace(passed, chain=chain)


def _port_text(data: Any) -> str | None:
    """Port data as the log row of its refusal keeps it: text as it is, other data as
    JSON (as an accepted delivery's row keeps it), None only when it is not JSON at all.

    SPEC §8: every prompt and command, accepted or not, is logged with its payload, a
    refused one's first 4 KiB with its length and digest (`Recorder.refusal` cuts it);
    data refused before it reached an arrow is no exception. Not JSON (a set, a cycle,
    nesting past the recursion limit): the refusal is still logged, without it.
    """
    if type(data) is str:
        return data
    try:
        return json.dumps(data)
    except (TypeError, ValueError, RecursionError):
        return None


class Calls:
    """Cards' calls and port data: decide (`engine.core.checks.decide`), carry out, log.

    Args:
        ctx: the shared store, state and time.
        record: writes log rows, refusals and rate events.
        prompts: takes accepted prompts (queue or hold).
        applier: records what a plan asks for.
        world: carries out allowed calls.
        engine: the engine's name in the store's terminal claims (`Engine.name`).
    """

    def __init__(self, ctx: Context, record: Recorder, prompts: Prompts, applier: Applier,
                 world: World, engine: str) -> None:
        self.ctx = ctx
        self.engine = engine
        self.record = record
        self.prompts = prompts
        self.applier = applier
        self.world = world
        #: Allowed fetches and file work under way, each with its log row to come
        #: (`_carry_out`): kept here so that a caller cancelled meanwhile cannot
        #: leave one unreferenced, and so that `effects_done` can wait for them.
        self._effects: set[asyncio.Task[Decision]] = set()
        #: The same calls until their rows are written, in the order they began:
        #: for `settle_at_close`, which logs those still under way. One whose task
        #: the loop's teardown cancelled (``asyncio.run`` ending) stays here.
        self._underway: dict[Underway, None] = {}

    async def effects_done(self) -> None:
        """Wait until every fetch and file work under way has ended and its row is written.

        For closing: an effect whose caller was cancelled goes on to its end
        (`_carry_out`); closing the store first would lose its log row.
        """
        while self._effects:
            await asyncio.wait(set(self._effects))

    def settle_at_close(self) -> None:
        """Log every fetch and file call still under way, in one write (`Engine.close`,
        which cannot run the loop, then commits it): file work is waited for, at most
        `underway.CLOSE_WAIT` seconds in all, and logged as it ended; a fetch is abandoned and
        logged ``cancelled`` (`engine.services.underway`). Their tasks write nothing
        more: each answers its caller with the decision logged here.

        Raises:
            StoreFailed: the store could not take the rows (nothing was logged, and
                the calls' tasks are left as they were).
        """
        if not self._underway:
            return
        deadline = close_deadline()
        settled = [(underway, *underway.at_close(deadline)) for underway in self._underway]
        # These calls were allowed and begun: their rows are written whatever another
        # process committed meanwhile (caught up with, never `Stale`).
        with self.ctx.write_settled():
            for underway, decision, outcome in settled:
                chain = underway.passed.chain
                if outcome is None:
                    self.record.refused_or_counted(decision, underway.payload, chain=chain)
                else:
                    self.record.log_row(decision, outcome=outcome,
                                        payload=underway.payload, chain=chain)
                    self._counted(underway.passed, underway.t)
        self._underway.clear()
        for underway, decision, _outcome in settled:
            underway.abandon(decision)

    def _context_chain(self, context: object, card: object) -> tuple[str, ...] | None:
        """The causal chain of the card's open tool call ``context`` names, or None."""
        tc = self.ctx.state.tool_calls.get(context) if type(context) is str else None
        if tc is None or not tc.is_open or tc.card != card:
            return None
        return tuple(tc.chain)

    def call(self, card: str, call: str, target: str | None = None,
             args: dict[str, Any] | None = None, *, context: str | None = None
             ) -> Awaitable[Decision]:
        """A card makes a call; returns the decision (never raises for a refusal).

        An operation (`engine.services.context.operation`) that starts at
        once (`run_eagerly`): the call is decided and written when this is
        called, and the awaitable returned gives its decision once durable.
        Almost every call is done without waiting on anything but its
        commit, and then costs no coroutine or task of its own while it
        waits (thousands of calls wait for each commit).

        Whatever the arguments hold (any type, any size, lone surrogates), the
        answer is a logged `Decision`: bad input is ``INVALID_ARGUMENT`` (or
        ``CARD_UNKNOWN``, ``UNKNOWN_CALL``) in the order of SPEC §5.

        Args:
            context: the id of the tool call this call runs in (SPEC §9);
                the engine keeps its causal chain, the card only names it.
                A prompt made while the card, or another card of its package on
                its canvas, has tool calls open is checked against the chain of
                each of them, whether it names one or not.
        """
        # Every argument by position (`_at_once` takes them so): no dict of
        # keywords built and matched for each call.
        return run_eagerly(self.ctx.store, self._begin_call, (card, call, target, args, context),
                           _NO_KEYWORDS, at_once=self._at_once)

    def _begin_call(self, card: str, call: str, target: str | None,
                    args: dict[str, Any] | None, context: str | None
                    ) -> Coroutine[Any, Any, Decision]:
        # The prologue every operation begins with (`Context.tick`), then the call.
        self.ctx.tick()
        return self._call(card, call, target, args, context=context)

    async def _call(self, card: str, call: str, target: str | None,
                    args: dict[str, Any] | None, *, context: str | None) -> Decision:
        now = self.ctx.now()
        result = self._decided(card, call, target, args, context, now)
        if isinstance(result, Decision):
            return result
        if result.spec.name == "agents.prompt":
            # Most allowed calls: done here, without a coroutine of `_carry_out`'s.
            return self._prompted(result, args or {}, now)
        return await self._carry_out(result, args or {}, now)

    def _decided(self, card: str, call: str, target: str | None,
                 args: dict[str, Any] | None, context: str | None, now: float
                 ) -> Decision | Passed:
        """Checks 1–11 of a call at ``now`` (SPEC §5): a refusal, recorded (its log row,
        or counted toward a `suppressed` one); or what passed, for `_carry_out`.

        Synchronous: a refused call (most calls in a batch) is done here, with
        no coroutine of its own.
        """
        if not (type(card) is str and type(call) is str and card.isascii() and call.isascii()
                and (target is None or type(target) is str and target.isascii())):
            refusal = malformed(self.ctx.state, card, call, target)
            if refusal is not None:
                return self.record.refusal(refusal, None, args, now)
        chain: tuple[str, ...] | None = None
        if context is not None:
            chain = self._context_chain(context, card)
            if chain is None:
                decision = denial(call, card, "INVALID_ARGUMENT", target=target,
                                  reason="context", why="no tool call of this card has that id")
                return self.record.refusal(decision, None, args, now)
        if args is not None and type(args) is not dict:
            found = check_card(self.ctx.state, card, call, target)
            if isinstance(found, Decision):
                return self.record.refusal(found, None, None, now)
            return self.record.refusal(denial(call, card, "INVALID_ARGUMENT", target=target,
                                            package=found[1].name, reason="args",
                                            why="args must be an object"), None, None, now)
        if call == "agents.prompt" and self.ctx.state.tool_calls:
            chains = self._open_chains(card)
            if chains:
                result, chain = self._decide_in_chains(chains, card, call, target, args, now,
                                                       named=chain)
                if isinstance(result, Decision):
                    return self.record.refusal(result, chain, args, now)
                return result
        result = decide(self.ctx.state, card, call, target, args, now=now, chain=chain)
        if isinstance(result, Decision):
            return self.record.refusal(result, chain, args, now)
        # (A call in no tool call, the usual one, pays no function call for it.)
        return result if chain is None else _in_context(result, chain)

    def _at_once(self, card: str, call: str, target: str | None,
                 args: dict[str, Any] | None, context: str | None
                 ) -> Decision | Coroutine[Any, Any, Decision]:
        # A call started at once (`call`, through `run_eagerly`), or one call of
        # `call_many`: the whole prologue of an operation first
        # (`Context.tick`: catch up, then expire what is due), then the call is
        # decided — a refusal returned as it is, an allowed call as the coroutine
        # that carries it out. Catching up is a no-op while the batch holds the
        # write lock; but until a call of the batch has written (every refusal
        # writes, its row or its budget's pending summary; an allowed fetch or
        # file call acts before it writes), another process may commit a revoke
        # between two calls: the next must be decided on that revoke.
        ctx = self.ctx
        ctx.tick()
        now = ctx.clock()  # `Context.now`, without its frame
        result = self._decided(card, call, target, args, context, now)
        if isinstance(result, Decision):
            return result
        if result.spec.name == "agents.prompt":
            return self._prompted(result, args or {}, now)
        return self._carry_out(result, args or {}, now)

    def _alone(self, card: str, call: str, target: str | None, args: dict[str, Any] | None,
               context: str | None) -> Awaitable[Decision]:
        # One call of `call_many` made again on its own (its decision raced another
        # process): `call` as ever, under the write lock.
        return self.call(card, call, target, args, context=context)

    async def call_many(self, calls: Iterable[CallArgs]) -> list[Decision | Exception]:
        """Many calls, decided one after another in the order given; durable on return.

        Each call is decided exactly as `call` would decide it alone at that
        point (its rate window, queue, holds, log row and events, in order),
        in this one task: the calls share one group commit, and this returns
        once every batch they wrote in has committed.

        ``calls`` are ``(card, call, target, args, context)`` tuples. Each
        fails alone: at its place in the answer is its `Decision`, or the
        exception it raised (`StoreFailed` when its write, or the commit of
        the batch it wrote in, failed: that call did not happen; the others
        did). A call that awaits (a fetch, file work, a prompt's delivery)
        awaits in its place, so the next call is decided after it.

        A batch is one operation's loop (`run_each_durably`): each call runs
        the prologue a call alone would (catching up with other processes,
        which costs nothing while the batch holds the write lock, and expiring
        what is due) and reads the clock once; a refused call costs no
        coroutine, task or future.
        """
        return await run_each_durably(self._at_once, calls, alone=self._alone)

    def _open_chains(self, card: str) -> list[tuple[str, ...]]:
        """The causal chains of the open tool calls of the card's package on its canvas
        (the card's own, its copies', a second card's: `State.open_tool_calls`), oldest
        first.

        Open means what it means for answering the call or naming it as a
        context: its state is ``open`` (`State.open_tool_calls`). Its stored
        deadline closes it (`Tools.expire_due`, in every operation's prologue),
        never the workspace's current ``tool_timeout``: lowered after the call
        began, that would hide a call the card can still answer from the loop
        guard, which must not depend on the card naming its context (SPEC §9).
        """
        return [tuple(tc.chain) for tc in self.ctx.state.open_tool_calls(card)]

    def _decide_in_chains(self, chains: list[tuple[str, ...]], card: str, call: str,
                          target: str | None, args: dict[str, Any] | None, now: float, *,
                          port_arrow: Arrow | None = None,
                          named: tuple[str, ...] | None = None
                          ) -> tuple[Decision | Passed, tuple[str, ...]]:
        """A prompt made while the card's package has tool calls open on its canvas (SPEC §9).

        Checked against the chain of every open tool call and refused if any
        would refuse it. It goes on (and is logged) with the chain of the call
        it names as its context, ``named``, or when it names none with the
        longest chain, the newest of equally long ones (the card's own before
        another card's of its package). That chain is checked
        first, so its own refusal is the one told; then the others, longest
        first. A refusal of its chain for a check after the loop guard (a full
        window, a full queue) is told only when no other chain refuses the
        prompt as a loop: the checks run in order (SPEC §5), and a card told to
        retry later would then be refused as a loop. Returns the decision and
        the chain it goes on with.

        A named context gives the chain the prompt carries, never a way out of
        the guard: the engine cannot tell which of its open calls a card is
        really serving, so naming the call of an agent further from the target
        must not pass a prompt another open call would refuse (the loop guard
        does not depend on the card's honesty).
        """
        carried = named
        if carried is None:
            # The longest; of equally long ones the card's own call before another
            # card's of its package (a person reads the chain as the card's), then
            # the newest.
            best = (len(chains[0]), chains[0][-1] == card)
            carried = chains[0]
            for chain in chains:
                if (mine := (len(chain), chain[-1] == card)) >= best:
                    carried, best = chain, mine
        passed = decide(self.ctx.state, card, call, target, args, now=now, chain=carried,
                        port_arrow=port_arrow)
        refused = isinstance(passed, Decision)
        if isinstance(passed, Decision) and passed.code not in _AFTER_THE_GUARD:
            return passed, carried
        for chain in sorted(chains, key=len, reverse=True):
            if chain == carried:
                continue
            result = decide(self.ctx.state, card, call, target, args, now=now, chain=chain,
                            port_arrow=port_arrow)
            if isinstance(result, Decision) and (not refused or result.code == "LOOP_REFUSED"):
                return result, carried
        return passed, carried

    def _prompted(self, passed: Passed, args: dict[str, Any], now: float) -> Decision:
        """An allowed ``agents.prompt``: accepted (it never waits, so no coroutine)."""
        # Its row keeps the prompt's text (`_accept_prompt`): no payload to work out,
        # and its decision is built once, by the plan.
        assert passed.target is not None
        return self._accept_prompt(
            passed, str(args["text"]), now, arrow=passed.arrow.id if passed.arrow else None,
            message=f"ok: card {passed.card.id} ({passed.package.name}) agents.prompt")

    async def _carry_out(self, passed: Passed, args: dict[str, Any], now: float) -> Decision:
        spec = passed.spec
        card = passed.card
        # (An allowed agents.prompt never comes here: every caller accepts it first.)
        decision = Decision("ok", spec.name, card.id, passed.package.name,
                            passed.target.id if passed.target else None, passed.permission,
                            arrow=passed.arrow.id if passed.arrow else None,
                            message=f"ok: card {card.id} ({passed.package.name}) {spec.name}")
        payload = self.record.payload(spec.name, args)
        if waits(spec.name):
            busy = self._under_way_of(passed, payload)
            if busy is None and passed.rate_key is not None:
                busy = self._window_full(passed, args, now)
            if busy is not None:
                return busy
            # A request may take seconds and file work runs in a thread (a
            # slow disk must not stall other calls): never hold the write
            # lock for either. Once begun, the effect goes on to its end and
            # its row is written even if the caller is cancelled meanwhile (a
            # pool thread's write cannot be stopped, nor a request unsent):
            # nothing a card was allowed to do goes unlogged (SPEC §8). The
            # task shares this context, so its row joins the caller's batches.
            underway = Underway(passed, decision, payload, now)
            effect = asyncio.get_running_loop().create_task(
                self._effect_logged(passed, args, decision, payload, underway))
            underway.task = effect
            self._underway[underway] = None
            self._effects.add(effect)
            effect.add_done_callback(self._effects.discard)
            try:
                return await asyncio.shield(effect)
            except asyncio.CancelledError:
                if underway.closed is not None and effect.cancelled():
                    # `Engine.close` logged it before its task began, and cancelled that.
                    return underway.closed
                raise
        rate = CountRate(card.id, passed.rate_key, now) if passed.rate_key is not None else None
        with self.ctx.write():
            if spec.name in _TERMINAL_INPUT:
                refusal = self._typed_elsewhere(passed)
                if refusal is not None:
                    self.record.refused_or_counted(refusal, payload, chain=passed.chain)
                    return refusal
            performed = self.world.perform(self.ctx.state, passed, args)
            if isinstance(performed, Decision):
                # Refused in the carrying out (a built-in card's content full), on the
                # state as it stands under the write lock: logged, nothing counted.
                self.record.refused_or_counted(performed, payload, chain=passed.chain)
                return performed
            # The row's time is the decision's, as its rate event's: the write may
            # have waited for the store (another program's), and a second reading of
            # the clock would log the call later than its window counted it.
            plan = plan_call(decision, performed, rate, payload, passed.chain, t=now)
            self.applier.do(plan.effects)
        return plan.decision

    def _typed_elsewhere(self, passed: Passed) -> Decision | None:
        """None when this engine may carry out a terminal input: it drives the terminal
        (or claimed it, its driver starting), or no engine does (a simulated terminal,
        echoed on its node; a claim that lapsed is dropped, `engine.services.claims`).
        Else the refusal: another process drives it, and only that process can type
        into it; echoing it here would tell the card its command ran when nothing ran.

        Read in the write (under the store's write lock), where claims are written.
        """
        target = passed.target
        assert target is not None
        if target.id in self.world.drivers:
            return None
        store = self.ctx.store
        claim = store.terminal_driver(target.id)
        if claim is None or claim.engine == self.engine:
            # Its own claim, its driver still starting (or not started after all,
            # its claim about to go): the input is this engine's to carry out.
            return None
        if claims.lapsed(claim):
            # Its process was killed before it closed its engine, or — elsewhere —
            # its lease ran out unrenewed: no one drives the terminal now (its own
            # processes ended with their driver's).
            store.drop_terminal_claim(target.id)
            return None
        return denial(passed.spec.name, passed.card.id, "SCOPE_REFUSED",
                      package=passed.package.name, target=target.id,
                      permission=passed.permission, reason="elsewhere",
                      arrow=passed.arrow.id if passed.arrow else None,
                      why=f"terminal {target.id} is run by another process on this store "
                          f"({claim.engine}), which alone types into it",
                      fix="make the call through that process, or start the terminal's "
                          "driver here once it has stopped")

    def _under_way_of(self, passed: Passed, payload: str | None) -> Decision | None:
        """None while the card has fewer than `UNDER_WAY_PER_CARD` calls of this one's
        kind (fetches, or file calls) under way; else the refusal of this one more,
        logged (``CARD_LIMIT``, ``under-way``) with its payload.

        Counted over the calls under way (at most that many a card and kind, so the
        count is bounded by the cards' number), where a fetch holds a connection and
        any call a task and its arguments until it ends. The kinds apart: a card
        waiting on slow servers can still read its files.
        """
        card = passed.card.id
        fetch = passed.spec.name == "net.fetch"
        under_way = sum(1 for underway in self._underway if underway.passed.card.id == card
                        and (underway.passed.spec.name == "net.fetch") == fetch)
        if under_way < UNDER_WAY_PER_CARD:
            return None
        kind = "fetches" if fetch else "file calls"
        refusal = denial(passed.spec.name, card, "CARD_LIMIT", package=passed.package.name,
                         permission=passed.permission, reason="under-way",
                         why=f"card {card} has {under_way} {kind} under way, "
                             f"at most {UNDER_WAY_PER_CARD} at once",
                         fix="call again once one of them has ended")
        with self.ctx.write():
            self.record.refused_or_counted(refusal, payload, chain=passed.chain)
        return refusal

    def _window_full(self, passed: Passed, args: dict[str, Any], now: float) -> Decision | None:
        """None when the fetch or file call ``passed`` still fits its rate window beside
        the calls of that window this engine has under way; else its refusal, logged
        (``RATE_LIMITED``, with ``retry_after``).

        Such a call counts once it has ended (a refusal met in its scope never counts,
        SPEC §5), at the time it was allowed; until then it holds its place here, so that
        calls allowed while others are in flight never pass the window's count. Check 10
        has counted only those already ended; nothing is looked at again when none is
        under way (the usual case).
        """
        card, key = passed.card, passed.rate_key
        assert key is not None
        state = self.ctx.state
        owner = rate_owner(state.canvas, card.id)
        pending = [u.t for u in self._underway if u.passed.rate_key == key
                   and rate_owner(state.canvas, u.passed.card.id) == owner]
        if not pending:
            return None
        limit = window_limit(state, card, key)
        wait = state.counters.retry_after_beside(owner, key, now, limit, pending)
        if wait is None:
            return None
        refusal = rate_limited(passed.spec.name, card.id, key, wait,
                               package=passed.package.name, target=None,
                               permission=passed.permission, arrow=None, limit=limit)
        return self.record.refusal(refusal, passed.chain, args, now)

    async def _effect_logged(self, passed: Passed, args: dict[str, Any], decision: Decision,
                             payload: str | None, underway: Underway) -> Decision:
        """Carry out an allowed fetch or file call, then write its log row (`_carry_out`).

        If the engine closes meanwhile, `settle_at_close` logs it instead: then
        this answers the decision logged there and writes nothing.
        """
        try:
            value = await self._performed(passed, args, underway)
        except asyncio.CancelledError:
            if underway.closed is not None:
                return underway.closed
            # The loop's teardown: the work may go on in its thread; the call stays
            # under way for `settle_at_close` to log.
            raise
        except BaseException:
            self._underway.pop(underway, None)
            raise
        if underway.closed is not None:
            return underway.closed
        try:
            # The write lock another program or session holds is waited for off the
            # loop (a settled write waits on it otherwise, up to the store's bound).
            # Still under way meanwhile: a close logs it (`settle_at_close`).
            await self.ctx.settle_off_loop()
        except asyncio.CancelledError:
            if underway.closed is not None:
                return underway.closed
            raise  # the loop's teardown, as above: left for `settle_at_close`
        except BaseException:
            if underway.closed is not None:
                return underway.closed  # the engine closed meanwhile: logged there
            self._underway.pop(underway, None)
            raise
        self._underway.pop(underway, None)
        # Done: its row is written whatever another process committed meanwhile.
        with self.ctx.write_settled():
            if isinstance(value, Decision):
                if "logged" in value.extra:
                    # A fetch abandoned in flight was allowed, then consent went:
                    # it is logged `cancelled` (SPEC §8.1), never suppressed.
                    self.record.log_row(value, outcome=value.extra["logged"],
                                        payload=payload, chain=passed.chain, card=passed.card)
                    self._counted(passed, underway.t)
                else:
                    self.record.refused_or_counted(value, payload, chain=passed.chain)
                return value
            decision = decision.with_(value=value)
            # The card as it acted: another process may have removed it since.
            self.record.log_row(decision, outcome="ok", payload=payload, chain=passed.chain,
                                card=passed.card)
            self._counted(passed, underway.t)
        return decision

    def _counted(self, passed: Passed, t: float) -> None:
        """Inside a write: a fetch or file call that was allowed at ``t`` and has ended with
        a row of its own counts in its window then (`_window_full`) — unless its card is
        gone meanwhile (its windows went with it)."""
        if passed.rate_key is not None and self.ctx.state.canvas.has_node(passed.card.id):
            self.record.count(passed.card.id, passed.rate_key, t)

    async def _performed(self, passed: Passed, args: dict[str, Any], underway: Underway) -> Any:
        """The fetch or file call done: its value, or a refusal."""
        if passed.spec.name == "net.fetch":
            return await self.world.fetch(self.ctx, passed, args)
        # Set in this task's own context (a copy): its file work alone reports here.
        STARTED.set(underway.ran)
        return await self.world.files(self.ctx, passed, args)

    def _accept_prompt(self, passed: Passed, text: str, now: float, *, arrow: str | None,
                       message: str, call: str = "agents.prompt") -> Decision:
        """An accepted prompt: numbered by the store, then planned and carried out in one write.

        The plan's effects are always the same few (`PromptPlan`), done here
        in its order without a dispatch per effect: count, (announce a hold,)
        save, log, and for a queued prompt pump the agent's queue. Nothing
        here waits (the pump never does), so it is no coroutine of its own.
        """
        agent, rate_key = passed.target, passed.rate_key
        assert agent is not None and rate_key is not None
        settings = self.ctx.state.workspaces[passed.card.workspace].settings
        # Where the store leaves every row it writes (rate event, prompt, agent's
        # node, log rows) to the commit, no savepoint: a failure forgets them (and
        # a statement run meanwhile all the same fails the whole batch:
        # `Transactions.undo`). A summary of the card's suppressed refusals,
        # written first, takes them out of memory: that write keeps its savepoint.
        store = self.ctx.store
        with self.ctx.write(one_statement=store.rows_at_commit
                            and self.record.writes_alone(passed.card.id)):
            plan = plan_prompt(self.prompts.new(passed, text, now, call=call), agent,
                               passed.permission, arrow, message, settings, now)
            decision, prompt = plan.decision, plan.prompt
            self.record.count(prompt.card, rate_key, now)
            if plan.held is not None:
                self.prompts.held_now(prompt)
                self.ctx.store.emit(self.prompts.told_held(plan.held, prompt))
                self.applier.prompt_in_memory(prompt)
                self.ctx.store.save_prompt(prompt)
                self.record.log_row(decision, outcome="held", payload=prompt.text,
                                    chain=prompt.chain, t=now, card=passed.card)
                return decision
            # The queued row waits until the pump has run: a prompt delivered
            # (or held) at once is written by the pump as it then stands, so
            # the queued row would be replaced in the same write — one row
            # write instead of two.
            self.applier.prompt_in_memory(prompt)
            # The row's time is the decision's (as a refusal's is, and the prompt's
            # and its rate event's): no second reading of the clock.
            self.record.log_row(decision, outcome="queued", payload=prompt.text,
                                chain=prompt.chain, t=now, card=passed.card)
            self.prompts.pump(agent.id)
            if prompt.state == "queued":
                self.ctx.store.save_prompt(prompt)
            else:
                # Delivered at once, perhaps: the value says where the prompt
                # stands now. The decision is this call's own until it returns.
                decision.value["state"] = prompt.state
        return decision

    @operation
    async def emit(self, card: str, port: str, data: Any, *,
                   context: str | None = None) -> dict[str, Decision]:
        """A card puts data on an output port; it travels every port arrow from it.

        Returns the decision for each port arrow, by arrow id. When the emit
        itself is refused (unknown card, package not installed or pending, no
        such output port) the one refusal is under the key ``""``.
        """
        now = self.ctx.now()
        # The port's name as the caller sent it, when it is text (`as_sent`).
        call = f"port:{as_sent(port)}"
        if not (type(card) is str and card.isascii()):
            refusal = malformed(self.ctx.state, card, call, None)
            if refusal is not None:
                return {"": self.record.refusal(refusal, None, data, encode=_port_text)}
        found = check_card(self.ctx.state, card, call)
        if isinstance(found, Decision):
            return {"": self.record.refusal(found, None, data, encode=_port_text)}
        node = found[0]
        _inputs, outputs = self.ctx.state.canvas.ports(node)
        if type(port) is not str or port not in outputs:
            refusal = denial(call, card, "INVALID_ARGUMENT", package=node.data["package"],
                             reason="port", why=f"{card} has no output port {named(port)!r}")
            return {"": self.record.refusal(refusal, None, data, encode=_port_text)}
        limit = self.ctx.state.workspace_of(node).settings.max_payload
        problem = data_problem(data, limit)
        if problem is None and type(data) is not str and len(json.dumps(data)) > limit:
            problem = f"is more than max_payload ({limit}) bytes as JSON"
        if problem is not None:
            refusal = denial(call, card, "INVALID_ARGUMENT", package=node.data["package"],
                             reason="data", why=f"the data {problem}")
            return {"": self.record.refusal(refusal, None, data, encode=_port_text)}
        chain = None
        if context is not None:
            chain = self._context_chain(context, card)
            if chain is None:
                # As `call` refuses it (SPEC §5 check 3): a context that names no open
                # tool call of this card is not dropped, which would let the data
                # travel outside the chain it claims.
                refusal = denial(call, card, "INVALID_ARGUMENT", package=node.data["package"],
                                 reason="context", why="no tool call of this card has that id")
                return {"": self.record.refusal(refusal, None, data, encode=_port_text)}
        results: dict[str, Decision] = {}
        for arrow in self.ctx.state.canvas.port_arrows_from(card, port):
            results[arrow.id] = await self._deliver_port(node, arrow, data, now, chain)
        return results

    async def _deliver_port(self, card: Node, arrow: Arrow, data: Any, now: float,
                            chain: tuple[str, ...] | None) -> Decision:
        target = self.ctx.state.canvas.node(arrow.dst)
        assert target is not None and arrow.to_port is not None
        if target.type == "card":
            # Card to card: both declared the ports and a person drew the
            # arrow, which is the consent for this data (SPEC §1). Each delivery
            # is a row holding the data whole, so it counts in a window (SPEC §8
            # "Bounds"), the spawn tree root's as every window (SPEC §6). Sent in a
            # tool call's context, its row keeps that call's chain (SPEC §8, §9).
            owner = rate_owner(self.ctx.state.canvas, card.id)
            wait = self.ctx.state.counters.retry_after(owner, "port-data", now)
            if wait is not None:
                return self.record.refusal(rate_limited(
                    f"port:{arrow.from_port}", card.id, "port-data", wait,
                    package=card.data["package"], target=target.id, permission=None,
                    arrow=arrow.id), chain, data, encode=_port_text)
            decision = Decision("ok", f"port:{arrow.from_port}", card.id, card.data["package"],
                                target.id, None, arrow=arrow.id,
                                message=f"ok: {card.id}.{arrow.from_port} -> "
                                        f"{target.id}.{arrow.to_port}")
            with self.ctx.write():
                self.ctx.emit("port.data", target.id, port=arrow.to_port, data=data,
                           source=card.id, arrow=arrow.id)
                self.record.log_row(decision, outcome="ok",
                              payload=data if isinstance(data, str) else json.dumps(data),
                              chain=chain, t=now)
                self.record.count(card.id, "port-data", now)
            return decision
        spec = PORT_INPUTS[(target.type, arrow.to_port)]
        arg = "command" if spec.action == "terminals.run" else "text"
        if not isinstance(data, str):
            return self.record.refusal(denial(spec.action, card.id, "INVALID_ARGUMENT",
                                            package=card.data["package"], target=target.id,
                                            reason="data", arrow=arrow.id,
                                            why="port data for this input must be text"),
                                     chain, data, encode=_port_text)
        chains = self._open_chains(card.id) if (
            spec.action == "agents.prompt" and self.ctx.state.tool_calls) else []
        result: Decision | Passed
        if chains:
            result, chain = self._decide_in_chains(chains, card.id, spec.action, target.id,
                                                   {arg: data}, now, port_arrow=arrow,
                                                   named=chain)
        else:
            result = decide(self.ctx.state, card.id, spec.action, target.id, {arg: data}, now=now,
                            chain=chain, port_arrow=arrow)
        if isinstance(result, Decision):
            return self.record.refusal(result.with_(arrow=arrow.id), chain, {arg: data})
        if spec.action == "agents.prompt":
            return self._accept_prompt(result, data, now, arrow=arrow.id, message="ok",
                                       call="port:prompt")
        return await self._carry_out(_in_context(result, chain), {arg: data}, now)
