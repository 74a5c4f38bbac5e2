"""Agents calling cards' tools: the round trip of SPEC §9.

An agent calls a tool a connected card offers, with arguments; the engine
checks the card (checks 1–2), the arrow (``not-connected``), the tool
(``UNKNOWN_TOOL``) and the arguments against the tool's ``input`` schema
(``INVALID_ARGUMENT`` naming the argument's path), logs the call on the arrow
(call ``tool:<name>``) and hands it to the card as a ``tool.call`` event. The
tool call is then *open* until exactly one of:

- the card answers it, once, with a result (``answered``) or an error
  (``failed``, code ``TOOL_ERROR``);
- ``tool_timeout`` seconds pass on the engine's clock (``expired``,
  ``TOOL_TIMEOUT``) — expiry is driven by the clock like hold expiry, so a
  replay's virtual time drives it too;
- the arrow it was made on (even while another still joins the two), the
  agent or the card goes away, the card is made a card of
  another package (``not-connected``: the agent called this package's tool),
  or the card's package stops being installed and approved (``cancelled``
  with the code of the rule that no longer holds), or the agent gives up on it (``cancelled``,
  ``TOOL_CANCELLED``).

Each resolution is one row on the arrow's log. Open tool calls are kept in
the store (table ``tool_calls``), so they survive a restart as open or, when
their deadline passed meanwhile, as expired — never as answered.

While a tool call is open, the calls its card makes naming it as their
``context`` carry its causal chain (`engine.services.calls`). The open tool calls of a
card and their chains are `State.open_tool_calls`, for the loop guard, which
checks every prompt the card makes against all of them, whether it names a
context or not.
"""

from __future__ import annotations

import time
from typing import Any

from engine.core.checks import (
    check_card,
    denial,
    malformed,
    not_connected,
    rate_limited,
    window_limit,
)
from engine.core.decision import Decision
from engine.core.errors import InvalidArgument, NotFound, with_code
from engine.core.manifest import check_json
from engine.core.principal import Principal
from engine.core.prompts import Prompt
from engine.core.standing import ClockRun
from engine.core.text import as_sent, is_unicode, named, shown
from engine.core.tools import (
    MAX_OPEN_TOOL_CALLS,
    ToolCall,
    agent_side,
    tool_args_problem,
    tool_chain,
)
from engine.services.context import Context, operation
from engine.services.record import Recorder
from engine.services.waiters import Waiters
from engine.store.encoding import dumps_sorted

__all__ = ["MISSING", "Tools"]

#: "No result given" (a result may be None itself).
MISSING: Any = object()

#: The most committed resolutions kept for their waiters (`Tools.committed`):
#: each is taken by its wait within a turn or two of the loop; one whose
#: wait went away meanwhile is dropped, oldest first, past this many.
HANDED_KEPT = 64


def _args_text(args: Any) -> str | None:
    """A tool call's arguments as the JSON its log row keeps, or None when they have none.

    Checked only after the card and the arrow, so they may be anything a caller
    sent: what is not JSON (a set, a cycle, nesting past the recursion limit)
    leaves its refusal's row without a payload rather than the refusal unlogged.
    """
    if args is None:
        return None
    try:
        return dumps_sorted(args)
    except (TypeError, ValueError, RecursionError):
        return None


class Tools:
    """Agents' tool calls to cards (SPEC §9): open, answer, expire, cancel, wait."""

    def __init__(self, ctx: Context, record: Recorder) -> None:
        self.ctx = ctx
        self.record = record
        self._waiters = Waiters()
        # Closing wakes them: each finds the engine closed (`EngineClosed`).
        ctx.on_close(self._waiters.wake_all)
        #: Tool calls resolved since the last commit: in memory, not yet durable.
        #: Not keyed on the state: a reload inside the open batch (another
        #: operation failed in its write) reads this connection's uncommitted
        #: rows, so the call still looks resolved there. After a failed commit
        #: the reloaded call is open again, and a new resolution is added anew.
        #: Each with `Context.reloads` as it was when resolved (see `committed`).
        self._unsettled: dict[str, tuple[ToolCall, int]] = {}
        #: Resolutions committed by this engine that a caller was waiting for, newest
        #: last (at most `HANDED_KEPT`): the woken wait finds its call here rather
        #: than reading it back from the store (a resolved call never changes).
        self._handed: dict[str, ToolCall] = {}
        #: While the engine's time stands still ahead of the clock (SPEC §6), how long
        #: the clock has run for each open tool call: it times out once that is its
        #: tool_timeout (`engine.core.standing`), as a hold does.
        self._on_clock = ClockRun()
        ctx.on_tick(self.expire_due)

    # ------------------------------------------------------------ the call
    @operation
    async def tool(self, agent: str, card: str, tool: str,
                   args: dict[str, Any] | None = None) -> Decision:
        """An agent calls a card's tool (SPEC §9).

        Returns the decision (never raises for a refusal). Allowed, its
        ``value`` is the open tool call ``{"id", "state": "open"}``; the card
        gets a ``tool.call`` event, and `wait_tool` gives the answer. Calls
        the card makes with ``context=`` that id carry the causal chain.
        """
        # The tool's name as the agent sent it, when it is text (`as_sent`; a log row
        # cuts it); an odd one is then UNKNOWN_TOOL.
        call = f"tool:{as_sent(tool)}"
        # A refusal's row keeps the arguments as the ok row does (SPEC §8 "Bounds"):
        # `Recorder.refusal` has `_args_text` encode them only if it writes a row --
        # not for a refusal counted toward a `suppressed` row, nor before knowing
        # the call is refused (an accepted call encodes them once, for its ok row).
        if not (type(card) is str and type(agent) is str and str.isascii(card)
                and str.isascii(agent)):
            # From a hostile caller: a card or agent id that is not plain text is a
            # clean, logged refusal (CARD_UNKNOWN, INVALID_ARGUMENT target), never a crash.
            refusal = malformed(self.ctx.state, card, call, agent)
            if refusal is not None:
                return self.record.refusal(refusal, None, args, encode=_args_text)
        found = check_card(self.ctx.state, card, call, agent)
        if isinstance(found, Decision):
            return self.record.refusal(found, None, args, encode=_args_text)
        card_node, pkg = found
        agent_node = self.ctx.state.canvas.node(agent)
        arrow = self.ctx.state.canvas.arrow_between(agent, card) if agent_node else None
        if agent_node is None or agent_node.type != "agent" or arrow is None:
            why, fix = not_connected(self.ctx.state.canvas, agent, card)
            return self.record.refusal(agent_side(denial(
                call, card, "PERMISSION_DENIED", package=pkg.name, target=agent,
                reason="not-connected", why=why, fix=fix), agent, tool), None, args,
                encode=_args_text)
        assert pkg.manifest is not None
        spec = pkg.manifest.tool(tool) if type(tool) is str else None
        if spec is None:
            return self.record.refusal(agent_side(denial(
                call, card, "UNKNOWN_TOOL", package=pkg.name, target=agent, arrow=arrow.id,
                reason=shown(tool)[:64], why=f"{pkg.name} offers no tool {named(tool)!r} "
                f"(it offers: {', '.join(pkg.manifest.tools) or 'none'})"), agent, tool),
                None, args, encode=_args_text)
        limit = self.ctx.state.workspaces[card_node.workspace].settings.max_payload
        problem = tool_args_problem(spec.input, args, limit)
        if problem is not None:
            where, what = problem
            return self.record.refusal(agent_side(denial(
                call, card, "INVALID_ARGUMENT", package=pkg.name, target=agent, arrow=arrow.id,
                reason=where, why=f"{where} {what}"), agent, tool), None, args,
                encode=_args_text)
        # Check 10: the agent's window (SPEC §8 "Bounds": each call is logged with its
        # arguments, and a call ended at once frees its place among the open ones).
        now = self.ctx.now()
        limit = window_limit(self.ctx.state, agent_node, "tool-call")
        wait = self.ctx.state.counters.retry_after(agent, "tool-call", now, limit)
        if wait is not None:
            return self.record.refusal(agent_side(rate_limited(
                call, card, "tool-call", wait, package=pkg.name, target=agent, permission=None,
                arrow=arrow.id, limit=limit), agent, tool), None, args, now, encode=_args_text)
        if self.ctx.state.open_tool_calls_of_agent(agent) >= MAX_OPEN_TOOL_CALLS:
            return self.record.refusal(agent_side(denial(
                call, card, "QUEUE_FULL", package=pkg.name, target=agent, arrow=arrow.id,
                reason="tool-calls", why=f"{agent} has {MAX_OPEN_TOOL_CALLS} tool calls open",
                fix="wait for an answer, or cancel one"), agent, tool), None, args,
                encode=_args_text)
        args = dict(args or {})
        chain = tool_chain(agent_node.data.get("chain"), agent, card)
        settings = self.ctx.state.workspaces[card_node.workspace].settings
        # The tool call's row is the write's one statement, made last (`_lone`), where
        # its rate event waits for the commit as its log row does.
        with self.ctx.write(one_statement=self._lone(card) and self.ctx.store.rows_at_commit):
            position = self.ctx.store.next_tool_call_position()
            tc = ToolCall(f"tc{position}", position, card_node.workspace, agent, card, pkg.name,
                          tool, arrow.id, args, chain, "open", now,
                          now + float(settings.tool_timeout))
            decision = Decision("ok", call, card, pkg.name, agent, None, arrow=arrow.id,
                                value={"id": tc.id, "state": "open"},
                                message=f"ok: {agent} calls {card}.{tool} (tool call {tc.id})")
            # At the decision's time, as its rate event (the write may have waited).
            self.record.log_row(decision.with_(prompt=tc.id), outcome="ok",
                          payload=dumps_sorted(args), chain=chain, t=now)
            self.ctx.emit("tool.call", card, id=tc.id, agent=agent, tool=tool, args=args,
                       chain=list(chain))
            # Counted before its row, the write's last statement: a rate event waits for
            # the commit where that row is one statement (`_lone`).
            self.record.count(agent, "tool-call", now)
            self._save_tool_call(tc)
        self._on_clock.begun(tc.id, self.ctx.clock)
        return decision

    # ---------------------------------------------------------- answers
    @operation
    async def answer_tool(self, call_id: str, *, result: Any = MISSING,
                          error: str | None = None, by: object) -> ToolCall:
        """The card answers its open tool call, once: a ``result`` or an ``error`` text.

        Args:
            by: who answers; only ``card:<id>`` of the called card may.

        Raises:
            InvalidRequest: ``NOT_FOUND`` for no such tool call (or one of
                another card), reason = its state when it is no longer open;
                ``INVALID_ARGUMENT`` for neither or both of result and error, a
                result that is not JSON or is larger than ``max_payload``.
                Nothing changes.
        """
        tc = self.tool_call(call_id)
        principal = Principal.parse(by)
        if tc is None or principal.kind != "card" or principal.node != tc.card:
            # A card learns nothing about other cards' tool calls.
            raise NotFound(f"{named(str(by))} has no tool call {named(call_id)!r}")
        if not tc.is_open:
            raise NotFound(f"tool call {named(call_id)} is not open (it is {tc.state})",
                           reason=tc.state)
        if (result is MISSING) == (error is None):
            raise InvalidArgument("answer a tool call with a result or an "
                                  "error, not both and not neither", reason="answer")
        limit = self.ctx.state.workspaces[tc.workspace].settings.max_payload
        if error is not None:
            if not isinstance(error, str):
                raise InvalidArgument("error must be text", reason="error")
            payload = error
        else:
            bad = check_json(result)
            if bad is not None:
                raise InvalidArgument(f"result{bad[0].removeprefix('$')} "
                                      f"{bad[1]}", reason="result")
            payload = dumps_sorted(result)
        try:
            size = len(payload.encode("utf-8"))
        except UnicodeEncodeError:
            raise InvalidArgument("the answer is not valid Unicode", reason="answer") from None
        if size > limit:
            raise InvalidArgument(f"the answer is {size} bytes, more than "
                                  f"max_payload ({limit})", reason="answer")
        with self.ctx.write(one_statement=self._lone(tc.card)):
            if error is not None:
                self._resolve_tool(tc, "failed", "TOOL_ERROR", None,
                                   why=f"{tc.card}.{tc.tool} answered with an error: "
                                   f"{error}", payload=error)
            else:
                self._resolve_tool(tc, "answered", None, None, "", payload=payload,
                                   result=result)
        return tc

    @operation
    async def cancel_tool(self, call_id: str, *, by: object) -> ToolCall:
        """The calling agent (or the operator) gives up on an open tool call: ``cancelled``.

        The card is told with a ``tool.resolved`` event. Cancelling one that
        is no longer open changes nothing and returns it as it is.

        Raises:
            InvalidRequest: ``NOT_FOUND`` for no such tool call of that agent.
        """
        tc = self.tool_call(call_id)
        principal = Principal.parse(by)
        if tc is None or not (principal.is_operator or (principal.kind == "agent"
                                                        and principal.node == tc.agent)):
            raise NotFound(f"{named(str(by))} has no tool call {named(call_id)!r}")
        if tc.is_open:
            with self.ctx.write():
                self._resolve_tool(tc, "cancelled", "TOOL_CANCELLED", "by-caller",
                                   why=f"{principal} cancelled tool call {tc.id}")
        return tc

    # ----------------------------------------------------------- reading
    def left(self, tc: ToolCall) -> float | None:
        """Seconds of the clock before an open tool call times out (None: not open): its
        deadline less the engine's time, or while that time stands still ahead of the
        clock, until the clock reaches the deadline or has run its timeout since it
        opened (`expire_due`), whichever comes first."""
        if not tc.is_open:
            return None
        return self._on_clock.remaining(tc.id, tc.deadline - tc.t, tc.deadline, self.ctx.clock)

    def tool_call(self, call_id: str) -> ToolCall | None:
        """A tool call (open or resolved) by id, or None (an id that is not text names none)."""
        if not isinstance(call_id, str):
            # Checked first: an unhashable id (a list) cannot even be looked up.
            return None
        tc = self.ctx.state.tool_calls.get(call_id)
        if tc is not None:
            return tc
        tc = self._handed.get(call_id)
        if tc is not None:
            return tc
        if not is_unicode(call_id):  # a lone surrogate: no store can even be asked
            return None
        return self.ctx.store.tool_call(call_id)

    def tool_call_holds(self, tc: ToolCall) -> list[Prompt]:
        """Held prompts the cards of the called card's package on its canvas made since
        the tool call opened.

        An agent waiting for a tool call learns of them at once (SPEC §10.2: a
        tool call never blocks for a person). Not only those in the call's own
        chain: a prompt naming no context carries the longest of the open chains
        (SPEC §9), and another card of the package may do the work (the loop guard
        holds them together, `State.open_tool_calls`); the engine cannot tell which
        call a prompt serves, so every call it may serve is told.
        """
        return [p for p in self.ctx.state.open_prompts.held()
                if p.package == tc.package and p.workspace == tc.workspace and p.t >= tc.t]

    def tells_agent(self, prompt: Prompt, agent: str) -> bool:
        """Whether ``prompt`` was made since a tool call ``agent`` still has open to a
        card of its package on its canvas (told to that call when held,
        `tool_call_holds`): the agent may follow it (``arrowgate__prompt_status``)
        until the call ends."""
        return any(
            tc.agent == agent and tc.is_open and tc.package == prompt.package
            and tc.workspace == prompt.workspace and prompt.t >= tc.t
            for tc in self.ctx.state.tool_calls.values())

    async def wait_tool(self, call_id: str, *, timeout: float | None = None,
                        until_held: bool = False) -> ToolCall:
        """Wait until the tool call is resolved (or ``timeout`` real seconds pass); return it.

        A resolution is returned only once its batch has committed (`settled`).

        With ``until_held``, also return as soon as a prompt the card made in
        the call's chain is held for a person (`tool_call_holds`).

        Raises:
            InvalidRequest: ``NOT_FOUND`` for no such tool call.
        """
        end = None if timeout is None else time.monotonic() + max(0.0, timeout)
        while True:
            handed = self._handed.pop(call_id, None)
            if handed is not None:
                # Resolved by a commit of this engine since the wait began (the
                # commit woke it): final and durable, so nothing is left to catch
                # up with or expire for it before it is told.
                return handed
            # Still racing other processes: judged again after the nap.
            self.ctx.tick_outside()
            tc = self.tool_call(call_id)
            if tc is None:
                raise NotFound(f"no tool call {named(call_id)!r}")
            if not tc.is_open:
                if self.settled(tc.id):
                    self._handed.pop(tc.id, None)  # taken: later readers read the store
                    return tc
                # Resolved in memory only: the waiter is told once the batch
                # commits (moments away; woken then), whatever its timeout — a
                # resolution is never told before it is durable.
                await self._waiters.nap(call_id, 0.2)
                continue
            if until_held and self.tool_call_holds(tc):
                return tc
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                return tc
            # Wake at the deadline, and now and then for answers given by
            # another process on the same store.
            nap = min(max(0.0, tc.deadline - self.ctx.now()) + 0.01, 0.2)
            await self._waiters.nap(call_id, nap if left is None else min(nap, left))

    def settled(self, call_id: str) -> bool:
        """False while the call's resolution is in memory only: its batch has not
        committed (the resolution must be durable before its waiter is told)."""
        return call_id not in self._unsettled

    # ---------------------------------------------------------- internals
    def _lone(self, card: str) -> bool:
        """True when an operation on ``card``'s tool call that writes its row and one log
        row is a one-statement write (`Store.write`), so needs no savepoint.

        Such an operation makes the row's statement its last step that can
        fail: what it did before (its log row, its event, the tool call in
        memory) goes with the write's undo. A card with suppressed refusals
        waiting has their summary row written first, which deletes their pending
        summary too: that write keeps its savepoint, as a refusal's does. So does
        every such write on a store that inserts a log row when it is made
        (PostgreSQL): the log row is a statement of its own there, which a
        failing tool-call row would otherwise leave in the batch.
        """
        return self.ctx.store.log_rows_at_commit and self.record.writes_alone(card)

    def _save_tool_call(self, tc: ToolCall) -> None:
        # The store first: memory changes only once the row is in.
        self.ctx.store.save_tool_call(tc)
        if tc.is_open:
            self.ctx.state.tool_calls[tc.id] = tc
        else:
            self.ctx.state.tool_calls.pop(tc.id, None)

    def _resolve_tool(self, tc: ToolCall, state: str, code: str | None,
                      reason: str | None, message: str = "", *, why: str | None = None,
                      payload: str | None = None, t: float | None = None,
                      result: Any = None) -> None:
        """End an open tool call: its state, its resolution row, the card told (in a write).

        ``message`` is said whole; ``why`` is said after the code (`with_code`).
        The tool call's row is written last, so that this is a one-statement
        write when nothing else in the operation writes (`_lone`): a failure
        before it leaves no row, and the write's undo rebuilds the state.
        """
        if why is not None and code is not None:
            message = with_code(code, why)
        decision = Decision("denied" if code else "ok", f"tool:{tc.tool}", tc.card, tc.package,
                            tc.agent, None, code=code, reason=reason, arrow=tc.arrow,
                            prompt=tc.id, message=message)
        self.record.log_row(decision, outcome=state, payload=payload, chain=tc.chain, t=t)
        self.ctx.emit("tool.resolved", tc.card, id=tc.id, state=state, code=code)
        tc.state, tc.code, tc.reason, tc.message = state, code, reason, message
        tc.result = result
        tc.ended = self.ctx.now() if t is None else t
        self._unsettled[tc.id] = (tc, self.ctx.reloads)
        self._save_tool_call(tc)

    def expire_due(self) -> None:
        """Time out every open tool call whose deadline has passed (from `_tick`), and,
        while time stands still, every one the clock has run its tool_timeout for."""
        if not self.ctx.state.tool_calls:
            return  # what `_on_clock` counts for calls gone is dropped at its next look
        now = self.ctx.now()
        open_calls = [tc for tc in self.ctx.state.tool_calls.values() if tc.is_open]
        due = sorted((tc for tc in open_calls if tc.deadline <= now),
                     key=lambda tc: tc.deadline)
        # Its timeout is the one it was opened with: its deadline less its start.
        late = set(self._on_clock.late(
            ((tc.id, tc.deadline - tc.t, tc.deadline) for tc in open_calls), self.ctx.clock))
        if not due and not late:
            return
        with self.ctx.write():
            for tc in due:
                self._resolve_tool(tc, "expired", "TOOL_TIMEOUT", None,
                                   why=f"{tc.card} did not answer tool call {tc.id} "
                                   f"({tc.tool}) in time", t=tc.deadline)
            for tc in open_calls:
                if tc.id in late and tc.is_open:  # else also due, and expired just now
                    # Stamped now: its deadline is on a time that does not move.
                    self._resolve_tool(
                        tc, "expired", "TOOL_TIMEOUT", None,
                        why=f"{tc.card} did not answer tool call {tc.id} ({tc.tool}) in "
                        f"time ({tc.deadline - tc.t:g} s of this computer's clock; the "
                        "engine's time stands still ahead of it)")

    def revalidate(self) -> None:
        """Cancel every open tool call a change has made impossible (inside a write)."""
        for tc in sorted(self.ctx.state.tool_calls.values(), key=lambda tc: tc.position):
            if not tc.is_open:
                continue
            found = check_card(self.ctx.state, tc.card, f"tool:{tc.tool}", tc.agent)
            if isinstance(found, Decision):
                if found.code == "CARD_UNKNOWN":
                    self._resolve_tool(tc, "cancelled", "PERMISSION_DENIED", "not-connected",
                                       f"cancelled: card {tc.card} was removed while tool call "
                                       f"{tc.id} was open")
                else:
                    self._resolve_tool(tc, "cancelled", found.code, found.reason,
                                       f"cancelled: {found.message}")
                continue
            canvas = self.ctx.state.canvas
            agent = canvas.node(tc.agent)
            if agent is None or canvas.arrow_between(tc.agent, tc.card) is None:
                gone = f"agent {tc.agent} was removed" if agent is None else \
                    f"{not_connected(canvas, tc.agent, tc.card)[0]} now"
                self._resolve_tool(tc, "cancelled", "PERMISSION_DENIED", "not-connected",
                                   f"cancelled: {gone} (tool call {tc.id})")
                continue
            made_on = canvas.arrow(tc.arrow) if tc.arrow is not None else None
            if tc.arrow is not None and (made_on is None or made_on.is_port
                                         or {made_on.src, made_on.dst} != {tc.agent, tc.card}):
                # The arrow the call was made (and logged) on went (its id may even be
                # another arrow's now): the call goes with it, as a prompt queued on a
                # removed arrow does (SPEC §4.3), though another arrow still joins the
                # two; the agent may call again over that one.
                self._resolve_tool(tc, "cancelled", "PERMISSION_DENIED", "not-connected",
                                   f"cancelled: arrow {tc.arrow}, which tool call {tc.id} "
                                   "was made on, was removed")
                continue
            if found[1].name != tc.package:
                # The agent called this package's tool, its arguments checked against
                # this package's schema: the card of another package now is not the
                # card it called, whatever tools that package offers (as a prompt goes
                # with its card's package: `Prompts.recheck`).
                self._resolve_tool(tc, "cancelled", "PERMISSION_DENIED", "not-connected",
                                   f"cancelled: card {tc.card} is now a card of "
                                   f"{found[1].name}, not of {tc.package}, whose tool "
                                   f"{tc.tool} was called (tool call {tc.id})")
                continue
            manifest = found[1].manifest
            if manifest is None or manifest.tool(tc.tool) is None:
                self._resolve_tool(tc, "cancelled", "UNKNOWN_TOOL", tc.tool,
                                   f"cancelled: {found[1].name} no longer offers {tc.tool}")

    def committed(self) -> None:
        """A batch committed: every resolution made until now is durable.

        Called before anything the commit's events start (`Engine`): a call
        resolved by such a reaction is in the next batch, not this one.

        A resolution a caller waits for is handed to its wait (`_handed`),
        unless the state was rebuilt since it was made: a failed write or
        commit reloads the state, and a resolution made before that may have
        been rolled back (the call open again, or never opened at all) —
        its wait reads the store, as any other reader does.
        """
        reloads, waited = self.ctx.reloads, self._waiters
        for call_id, (tc, resolved_in) in self._unsettled.items():
            if resolved_in == reloads and call_id in waited:
                self._handed[call_id] = tc
        self._unsettled.clear()
        handed = self._handed
        while len(handed) > HANDED_KEPT:
            del handed[next(iter(handed))]

    def wake_waiters(self) -> None:
        """A batch committed: wake those waiting on a tool call that ended or met a hold."""
        calls = self.ctx.state.tool_calls
        self._waiters.wake(lambda cid: (tc := calls.get(cid)) is None or not tc.is_open
                           or bool(self.tool_call_holds(tc)))

