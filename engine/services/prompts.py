"""Prompts after the decision (SPEC §6, §7): queue, budget pacing, holds, resolutions."""

from __future__ import annotations

import asyncio
import heapq
import math
from collections.abc import Iterable
from contextvars import Context as _TaskContext
from typing import TypeGuard

from canvas import Node
from engine.core.budget import due, short_by, take
from engine.core.checks import Passed, decide, denial
from engine.core.decision import Decision
from engine.core.errors import (
    ApprovalRefused,
    InvalidArgument,
    NotFound,
    StoreFailed,
    with_code,
)
from engine.core.events import Event
from engine.core.holds import (
    RESOLUTIONS,
    approves_text,
    held_for,
    hold_deadline,
    outcome_of,
    prompt_decision,
    resolution_of,
)
from engine.core.principal import OPERATOR
from engine.core.prompts import IN_PLAY, QUEUE_LIMIT, Prompt
from engine.core.standing import ClockRun, RunSince
from engine.core.text import bounded, is_unicode, named
from engine.effects.world import World
from engine.services.apply import Applier
from engine.services.context import Context, operation
from engine.services.guard import Guard
from engine.services.nodes import Nodes
from engine.services.record import Recorder
from engine.services.waiters import Waiters

__all__ = ["TURN_ENDS", "Prompts"]

#: The statuses an agent's turn may leave it in.
TURN_ENDS = ("waiting", "finished")


#: The longest a wait for budget sleeps before it looks at the engine's clock again:
#: the time a unit is due is the engine's (SPEC §6), which need not run as the
#: loop's does (a clock stepped, or a test's that moves when told).
_NAP = 0.2


class Prompts:
    """The prompt queue, dangerous-mode holds and agents' turns.

    Args:
        ctx: the shared store, state and time.
        record: writes the prompts' log rows and rate events.
        guard: principal checks and history for answering holds.
        nodes: agents and terminals as they change.
        applier: records what delivering a prompt did.
        world: hands prompts to agents and takes their turns' ends.
    """

    def __init__(self, ctx: Context, record: Recorder, guard: Guard, nodes: Nodes,
                 applier: Applier, world: World) -> None:
        self.ctx = ctx
        self.record = record
        self.guard = guard
        self.nodes = nodes
        self.applier = applier
        self.world = world
        #: Each workspace short of budget, with the task waiting for its next unit.
        self._waiting_budget: dict[str, asyncio.Task[None]] = {}
        #: When a short workspace's next unit is due, as its bucket last said, and the
        #: budget that said so (`_caught_up`). Another engine may take the unit
        #: first: the wait then finds none under the write lock, and waits again.
        self._due: dict[str, float] = {}
        #: While the engine's time stands still, how long the clock must have run since
        #: a short workspace's bucket stood as it is before its next unit is due
        #: (`_budget_run`); absent while the clock leads.
        self._due_run: dict[str, float] = {}
        #: While the engine's time stands still ahead of the clock (SPEC §6), how long
        #: the clock has run since each workspace's bucket stood as it is: it leaks for
        #: that long at the least, so prompts go on at the budget's rate on the clock.
        self._budget_run = RunSince()
        self._budgets: dict[str, tuple[int, float]] = {}
        # Strong references: the loop keeps only weak ones to a task, and a wait
        # still delivers after its workspace's mark is gone.
        self._budget_tasks: set[asyncio.Task[None]] = set()
        self._waiters = Waiters()
        #: While the engine's time stands still ahead of the clock (SPEC §6), how long
        #: the clock has run for each held prompt: it expires once that is its hold
        #: timeout (`engine.core.standing`).
        self._on_clock = ClockRun()
        # Closing wakes them: each finds the engine closed (`EngineClosed`).
        ctx.on_close(self._waiters.wake_all)
        ctx.on_tick(self.expire_due)
        ctx.on_caught_up(self._caught_up)

    def expire_due(self) -> None:
        """Expire every hold whose deadline has passed (part of each operation's prologue),
        and, while time stands still, every hold the clock has run its timeout for."""
        holds = self.ctx.state.open_prompts
        if not holds.any_held():
            # Almost every operation: nothing held, no clock to read (what `_on_clock`
            # still counts for holds gone is dropped at its next look).
            return
        due = holds.due(self.ctx.now())
        late = self._late()
        if not due and not late:
            return
        with self.ctx.write():
            for prompt in due:
                assert prompt.deadline is not None
                self.resolve(prompt, "expired", "HOLD_EXPIRED", None,
                             why=f"nobody answered the held prompt {prompt.id} "
                             f"to {prompt.agent} in time", t=prompt.deadline)
            for prompt in late:
                if prompt.state != "held":
                    continue  # also due, and expired just now
                timeout = held_for(prompt)
                # Stamped now: its deadline is on a time that does not move.
                self.resolve(prompt, "expired", "HOLD_EXPIRED", None,
                             why=f"nobody answered the held prompt {prompt.id} to "
                             f"{prompt.agent} in time (its deadline was {timeout:g} s "
                             f"after it was made, counted on this computer's clock; the "
                             f"engine's time stands still ahead of it)")

    def _late(self) -> list[Prompt]:
        """Held prompts the clock has run their hold timeout for while the engine's time
        stood still ahead of it (SPEC §6, §7; `engine.core.standing`): silence is
        never consent, even while a far-future time keeps the engine's time still."""
        held = {p.id: p for p in self.ctx.state.open_prompts.in_state("held")}
        late = self._on_clock.late(
            ((pid, held_for(p), math.inf if p.deadline is None else p.deadline)
             for pid, p in held.items()), self.ctx.clock)
        return [held[pid] for pid in late]

    def held_now(self, prompt: Prompt) -> None:
        """``prompt`` is held from now: while time stands still ahead of the clock, its
        timeout runs on the clock from this reading (`_late`)."""
        self._on_clock.begun(prompt.id, self.ctx.clock)

    def hold_left(self, prompt: Prompt) -> float | None:
        """Seconds of the clock before a held prompt expires unanswered (None: not held).

        Its deadline less the engine's time; while that time stands still ahead of
        the clock, until the clock reaches the deadline or has run the timeout since
        the prompt was held (`_late`), whichever comes first, so a countdown shown to
        a person moves as it expires, and reaches 0 when it does.
        """
        if prompt.state != "held" or prompt.deadline is None:
            return None
        return self._on_clock.remaining(prompt.id, held_for(prompt), prompt.deadline,
                                        self.ctx.clock)

    def hold_ends(self, prompt: Prompt) -> float | None:
        """When a held prompt expires unanswered, as a reading of the clock (None: not
        held): its deadline, or while the engine's time stands still ahead of the
        clock, the clock's reading now plus `hold_left` — what a deadline shown to a
        person says, so it is when the hold really expires by the clock they have."""
        if prompt.state != "held" or prompt.deadline is None:
            return None
        return self._on_clock.ends_at(prompt.id, held_for(prompt), prompt.deadline,
                                      self.ctx.clock)

    def told_held(self, told: Event, prompt: Prompt | None = None) -> Event:
        """``told`` with a ``prompt.held`` event's deadline as `hold_ends` has it (the
        plan's and another engine's say the stored one, on the engine's time): its
        readers compare it with the clock they have. Any other event as it is.

        ``prompt``: the held prompt, when it is not in memory yet (its own decision).
        """
        if told.type != "prompt.held":
            return told
        if prompt is None:
            prompt = self.ctx.state.prompts.get(told.data.get("prompt"))  # type: ignore[arg-type]
        ends = None if prompt is None else self.hold_ends(prompt)
        if ends is None or ends == told.data.get("deadline"):
            return told
        return Event(told.type, told.card, {**told.data, "deadline": ends})

    def forget_budget(self, workspace: str) -> None:
        """The workspace's budget setting changed: it takes effect at once (inside the
        write that changed it).

        A wait timed by the old budget is cancelled (with [1, 3600] raised to
        [100, 1] it would keep every prompt queued for up to an hour), and the
        workspace's queued prompts go as the new budget allows, longest waiting
        first: the stored bucket keeps its level (never above the new budget),
        leaking at the new rate (`engine.core.budget.leak`).
        """
        self._stop_waiting(workspace)
        self._pump_workspace(workspace, self.ctx.state.open_prompts.agents())

    def _stop_waiting(self, workspace: str) -> bool:
        """Cancel the workspace's wait for budget; whether there was one."""
        self._due.pop(workspace, None)
        self._due_run.pop(workspace, None)
        self._budgets.pop(workspace, None)
        wait = self._waiting_budget.pop(workspace, None)
        if wait is None or wait.done():
            return False  # (a done one: ended, or cancelled by a loop's teardown)
        wait.cancel()
        return True

    def _caught_up(self) -> None:
        """The state took in other processes' changes: a workspace whose budget one of
        them changed starts its pacing afresh, as `forget_budget` has it for a change
        made here (SPEC §10: every engine on the store paces by the budget set now).

        Outside any write (the prologue's catch-up), so nothing is delivered here: a
        wait timed by the old budget gives way to a delivery of its own
        (`deliver_queued`).
        """
        workspaces = self.ctx.state.workspaces
        for workspace, budget in list(self._budgets.items()):
            ws = workspaces.get(workspace)
            if ws is not None and ws.settings.budget == budget:
                continue
            if self._stop_waiting(workspace):
                self._deliver_soon()

    def _deliver_soon(self) -> None:
        """Deliver what the budgets allow in an operation of its own, soon."""
        async def deliver() -> None:
            try:
                await self.deliver_queued()
            except StoreFailed:
                pass  # the prompts stay queued; the next operation pumps again

        task = asyncio.get_running_loop().create_task(deliver(), context=_TaskContext())
        self._budget_tasks.add(task)
        task.add_done_callback(self._budget_tasks.discard)

    def new(self, passed: Passed, text: str, now: float, *,
                    call: str = "agents.prompt") -> Prompt:
        assert passed.target is not None
        # From the store, inside the write transaction: unique across processes.
        position = self.ctx.store.next_prompt_position()
        return Prompt(f"p{position}", position, passed.card.workspace, passed.card.id,
                      passed.package.name, passed.target.id,
                      passed.arrow.id if passed.arrow else None, call, text,
                      list(passed.chain or ()), "queued", now)

    def _hold(self, prompt: Prompt, now: float) -> None:
        settings = self.ctx.state.workspaces[prompt.workspace].settings
        prompt.state, prompt.deadline = "held", hold_deadline(now, settings)
        self.held_now(prompt)
        self.ctx.emit("prompt.held", prompt.card, prompt=prompt.id, agent=prompt.agent,
                   arrow=prompt.arrow, text=prompt.text, deadline=self.hold_ends(prompt))

    def _hold_queued(self, prompt: Prompt) -> None:
        """Hold a queued prompt for a person: its agent went into dangerous mode after it
        was queued, so it still waits for one."""
        self._hold(prompt, self.ctx.now())
        self.record.save_prompt(prompt)
        self.record.log_row(prompt_decision(prompt), outcome="held", payload=prompt.text,
                            chain=prompt.chain)

    def _hold_for_person(self, agent: Node) -> None:
        """Hold each queued prompt to a dangerous ``agent`` that no person approved yet.

        Before any budget is looked at: a hold delivers nothing, so it never
        waits for budget, and the person sees the prompt as soon as the agent
        could take it, however short the workspace is.
        """
        if not agent.data.get("dangerous"):
            return
        for prompt in self.ctx.state.open_prompts.of_agent(agent.id, "queued"):
            # A person is asked only about a prompt that could still go (`_still_accepted`).
            if prompt.approver is None and self._still_accepted(prompt):
                self._hold_queued(prompt)

    def _still_accepted(self, prompt: Prompt) -> bool:
        """Whether a queued prompt would be accepted now (checks 1–9, `recheck`); if not,
        it is cancelled with the error a new prompt would get (SPEC §4.3, §8).

        A consent change made here re-checks the open prompts there and then
        (`revalidate`); this is for what no re-check followed: a change made while no
        engine ran, or by one that did not re-check it. Nothing is delivered, or shown
        a person to approve, that would not be accepted now.
        """
        result = self.recheck(prompt)
        if isinstance(result, Decision):
            self.resolve(prompt, "cancelled", result.code, result.reason, result.message)
            return False
        return True

    def pump(self, agent_id: str) -> None:
        """Deliver queued prompts to a waiting agent, in order, as the budget allows.

        The budget is the workspace's. While it has room, nothing waits for it,
        and this agent's prompts go at once. Once it is short, the prompts wait,
        and each unit of budget that frees goes to the prompt that has waited
        longest across the workspace's agents (`_pump_workspace`), so an agent
        kept busy cannot starve an earlier prompt to another.
        """
        agent = self.ctx.state.canvas.node(agent_id)
        if not _waiting_agent(agent):
            return
        self._hold_for_person(agent)
        workspace = agent.workspace
        if workspace in self._waiting_budget:
            # Short: each unit that frees is the longest-waiting prompt's. Due
            # already (the wait has not woken yet): it goes now.
            if self._budget_due(workspace):
                self._pump_workspace(workspace, self.ctx.state.open_prompts.agents())
            return
        while (prompt := self.ctx.state.open_prompts.first(agent_id, "queued")) is not None:
            if not self._deliver(prompt, agent):
                return
            agent = self.ctx.state.canvas.node(agent_id)
            if not _waiting_agent(agent):
                return

    def _pump_workspace(self, workspace: str, agent_ids: Iterable[str]) -> None:
        """Deliver the workspace's queued prompts, longest waiting first, as the budget allows.

        ``agent_ids``: the agents with open prompts (others are skipped). A heap of
        each waiting agent's first queued prompt, so a pump costs a heap
        operation a delivery, not a scan of every agent (2,000 prompts at once
        to 2,000 agents made that quadratic). Never waits: a prompt the budget
        has no room for stays queued, and `_wait_for_budget` delivers it later.
        """
        canvas, open_prompts = self.ctx.state.canvas, self.ctx.state.open_prompts
        heap: list[tuple[int, str]] = []
        for agent_id in agent_ids:
            agent = canvas.node(agent_id)
            if _waiting_agent(agent) and agent.workspace == workspace:
                self._hold_for_person(agent)
                first = open_prompts.first(agent_id, "queued")
                if first is not None:
                    heap.append((first.position, agent_id))
        heapq.heapify(heap)
        while heap:
            _, agent_id = heapq.heappop(heap)
            agent = canvas.node(agent_id)
            prompt = open_prompts.first(agent_id, "queued") if _waiting_agent(agent) else None
            if agent is None or prompt is None:
                continue
            if not self._deliver(prompt, agent):
                return
            agent = canvas.node(agent_id)
            following = open_prompts.first(agent_id, "queued") if _waiting_agent(agent) else None
            if following is not None:
                heapq.heappush(heap, (following.position, agent_id))

    def _deliver(self, prompt: Prompt, agent: Node) -> bool:
        """Deliver one queued prompt to its waiting agent, hold it for a person, or cancel
        it when it would not be accepted now (`_still_accepted`); False when the budget
        has no room (a waiter is started, the prompt stays)."""
        if not self._still_accepted(prompt):
            return True  # the next prompt goes in its place
        if agent.data.get("dangerous") and prompt.approver is None:
            # Every pump runs `_hold_for_person` first, so no unapproved prompt to a
            # dangerous agent should reach here; should one (a path that skipped
            # it), it is held now, not delivered (fail closed).
            self._hold_queued(prompt)
            return True
        workspace = agent.workspace
        budget = self.ctx.state.workspaces[workspace].settings.budget
        # The store's bucket, under the write lock: every engine on the store
        # takes from this one (SPEC §10). Read once a batch and written at its
        # commit, so a batch of prompts delivered at once costs no statement each.
        bucket = self.ctx.store.budget_bucket(workspace)
        now = self.ctx.now()
        if not take(bucket, budget, now):
            # While the engine's time stands still, the bucket leaks on the clock.
            clock = self.ctx.clock
            ran = self._budget_run.ran(workspace, (bucket.level, bucket.at), clock)
            if not (ran > 0 and take(bucket, budget, now, ran)):
                counted = workspace in self._budget_run.marks
                self._wait_for_budget(workspace, budget, due(bucket, budget, now),
                                      ran + short_by(bucket, budget) if counted else None)
                return False
        self.ctx.store.save_budget_bucket(workspace, bucket)
        if self._budget_run.marks:  # (an attribute read: the usual delivery pays no more)
            self._budget_run.left(workspace, (bucket.level, bucket.at), self.ctx.clock)
        self.applier.do(self.world.deliver(prompt, agent).effects)
        prompt.state = "delivered"
        self.record.save_prompt(prompt)
        self.ctx.emit("agents.turn", None, agent=agent.id, workspace=agent.workspace,
                      prompt=prompt.id, state="delivered")
        return True

    def _budget_due(self, workspace: str) -> bool:
        """Whether a short workspace's next unit is due: at its time on the engine's
        clock, or, while that time stands still, once the clock has run long enough."""
        if self.ctx.now() >= self._due.get(workspace, 0.0):
            return True
        ran_due = self._due_run.get(workspace)
        if ran_due is None:
            # Timed on the engine's time alone: once that stands still, a try now
            # starts counting on the clock (`_deliver`), and times the wait by it.
            return self.ctx.clock.behind() > 0
        ran = self._budget_run.look(workspace, self.ctx.clock)
        return ran is not None and ran >= ran_due

    def _wait_for_budget(self, workspace: str, budget: tuple[int, float], at: float,
                         ran_due: float | None = None) -> None:
        """Deliver the workspace's queued prompts once its next unit is due at ``at``
        (engine time) — or, while that time stands still, once the clock has run
        ``ran_due`` seconds since the bucket stood as it is (`RunSince`) — trying
        again under the write lock then: another engine may have taken the unit
        meanwhile, and then this waits for the next one."""
        self._due[workspace], self._budgets[workspace] = at, budget
        if ran_due is None:
            self._due_run.pop(workspace, None)
        else:
            self._due_run[workspace] = ran_due
        if workspace in self._waiting_budget:
            return

        async def wait() -> None:
            try:
                while not self.ctx.closed and not self._budget_due(workspace):
                    left = self._due.get(workspace, 0.0) - self.ctx.now()
                    await asyncio.sleep(min(left, _NAP))
            finally:
                # Only this wait's own marks: a budget change cancels it and may
                # start the next wait before this one unwinds.
                if self._waiting_budget.get(workspace) is asyncio.current_task():
                    del self._waiting_budget[workspace]
                    self._due.pop(workspace, None)
                    self._due_run.pop(workspace, None)
                    self._budgets.pop(workspace, None)
            if self.ctx.closed:
                return
            try:
                await self.deliver_queued()
            except StoreFailed:
                pass  # the prompts stay queued; the next operation pumps again

        # A fresh context: this task outlives the operation that started it.
        task = asyncio.get_running_loop().create_task(wait(), context=_TaskContext())
        self._waiting_budget[workspace] = task
        self._budget_tasks.add(task)
        task.add_done_callback(self._budget_tasks.discard)

    def stalled(self) -> bool:
        """Whether a waiting agent has a queued prompt that nothing here waits to deliver:
        no wait for its workspace's budget runs in this engine (`_wait_for_budget`).

        What a stopped engine left: the wait that would have delivered it was that
        engine's task, and nothing else pumps the queue until the agent's status or a
        new prompt to it does. The timers look (`Engine.run_timers`), and
        `deliver_queued` then delivers it, or starts this engine's wait for budget.
        """
        canvas, open_prompts = self.ctx.state.canvas, self.ctx.state.open_prompts
        for agent_id in open_prompts.agents():
            agent = canvas.node(agent_id)
            if _waiting_agent(agent) and agent.workspace not in self._waiting_budget and \
                    open_prompts.first(agent_id, "queued") is not None:
                return True
        return False

    @operation
    async def deliver_queued(self) -> None:
        """Deliver what the budget now allows (a durable operation of its own)."""
        with self.ctx.write():
            self.pump_all()

    def pump_all(self) -> None:
        """Deliver what every workspace's budget allows (see `_pump_workspace`)."""
        canvas = self.ctx.state.canvas
        by_workspace: dict[str, list[str]] = {}
        for agent_id in self.ctx.state.open_prompts.agents():
            node = canvas.node(agent_id)
            if node is not None:
                by_workspace.setdefault(node.workspace, []).append(agent_id)
        for workspace in sorted(by_workspace):
            self._pump_workspace(workspace, by_workspace[workspace])

    def resolve(self, prompt: Prompt, state: str, code: str | None, reason: str | None,
                message: str = "", *, why: str | None = None, t: float | None = None,
                approver: str | None = None) -> None:
        """End an open prompt: its state, its resolution row, its waiters.

        ``message`` is said whole (a refusal's, which has its code); ``why`` is
        said after the code (`with_code`).
        """
        if why is not None and code is not None:
            message = with_code(code, why)
        outcome = RESOLUTIONS[state]
        prompt.state = state
        prompt.code, prompt.reason, prompt.message = code, reason, message
        if approver:
            prompt.approver = approver
        self.record.save_prompt(prompt)
        self.record.log_row(prompt_decision(prompt).with_(code=code, reason=reason),
                      outcome=outcome, payload=prompt.text, chain=prompt.chain, t=t,
                      approver=approver)
        self.ctx.emit("prompt.resolved", prompt.card, prompt=prompt.id, state=state, code=code,
                      reason=reason)

    def recheck(self, prompt: Prompt, *, count_limits: bool = False,
                open_calls: bool = False) -> Decision | Passed:
        """Checks 1–9 again for an open prompt, with its real target and arrow.

        With ``open_calls`` (at a hold's approval, SPEC §7), check 9 is the loop guard
        as it stands now: the prompt's own chain, then the chain of every tool call its
        card's package has open (`State.open_tool_calls`), refused if any would refuse
        it, as a prompt the card made now would be (SPEC §9). The prompt keeps its own
        chain. Without it (a consent change's `revalidate`), its own chain alone: an
        accepted prompt is not cancelled by a tool call opened after it.

        A prompt whose card or agent was removed, or the arrow it is queued or
        held on, or whose card is now a card of another package than the one that
        made it, is ``not-connected`` (SPEC §4.3, §7), whatever check 1 would
        say about a card that is gone — even when another arrow joins the same
        pair: the person sees a hold on one arrow, and removing that arrow is
        how they cancel it. Otherwise a method prompt is re-checked like the
        call it was; a port prompt on its port arrow (the consent for port data).
        """
        chain = tuple(prompt.chain[:-1]) if prompt.chain else None
        canvas = self.ctx.state.canvas
        port = prompt.call == "port:prompt"
        arrow = canvas.arrow(prompt.arrow) if prompt.arrow is not None else None
        card = canvas.node(prompt.card)
        gone = next((f"{what} {ident} was removed" for what, ident, there in (
            ("card", prompt.card, card is not None),
            ("agent", prompt.agent, canvas.node(prompt.agent) is not None),
            ("port arrow" if port else "arrow", prompt.arrow,
             prompt.arrow is None or arrow is not None),
        ) if not there), None)
        if gone is None and card is not None and card.data.get("package") != prompt.package:
            # The card that made the prompt, as the person is shown it (card and
            # package), is gone: judged with its new package, the prompt would go
            # out under that package's grant and outlive a revoke of its own.
            gone = (f"card {prompt.card} is now a card of {card.data.get('package')}, not of "
                    f"{prompt.package}, which made the prompt")
        if gone is not None:
            return denial("agents.prompt", prompt.card, "PERMISSION_DENIED",
                          package=prompt.package, target=prompt.agent,
                          permission="agents.prompt", reason="not-connected",
                          arrow=prompt.arrow, why=f"{gone} while the prompt waited")
        # Port data is checked on the arrow it travels, to the agent that arrow
        # leads to: the same target the emit was decided with.
        port_arrow = arrow if port else None
        now = self.ctx.now()
        result = decide(self.ctx.state, prompt.card, "agents.prompt", prompt.agent,
                        {"text": prompt.text}, now=now,
                        chain=chain if port or chain and len(chain) > 1 else None,
                        port_arrow=port_arrow, count_limits=count_limits)
        if not open_calls or isinstance(result, Decision):
            return result
        for tc in self.ctx.state.open_tool_calls(prompt.card):
            refused = decide(self.ctx.state, prompt.card, "agents.prompt", prompt.agent,
                             {"text": prompt.text}, now=now, chain=tuple(tc.chain),
                             port_arrow=port_arrow, count_limits=False)
            if isinstance(refused, Decision):
                return refused
        return result

    def agent_removed(self, agent: str) -> None:
        """End the removed agent's turn: its delivered prompts are cancelled (``not-connected``).

        Logged as a resolution, like its queued ones (`revalidate`): no answer
        will come, and a new agent that takes the id later is not the one that
        was asked, so its reply must not land on them.
        """
        for prompt in self.ctx.state.open_prompts.of_agent(agent, "delivered"):
            result = denial("agents.prompt", prompt.card, "PERMISSION_DENIED",
                            package=prompt.package, target=prompt.agent,
                            permission="agents.prompt", reason="not-connected",
                            arrow=prompt.arrow,
                            why=f"agent {agent} was removed before it answered")
            self.resolve(prompt, "cancelled", result.code, result.reason, result.message)

    def revalidate(self) -> None:
        """Cancel every open prompt a consent change has made impossible (SPEC §4.3)."""
        for prompt in self.ctx.state.open_prompts.open():
            result = self.recheck(prompt)
            if isinstance(result, Decision):
                self.resolve(prompt, "cancelled", result.code, result.reason, result.message)

    async def approve_hold(self, prompt_id: str, *, text_sha256: str,
                           by: object = OPERATOR) -> Decision:
        """A person approves a held prompt whose text they were shown (SPEC §7).

        Args:
            prompt_id: the held prompt.
            text_sha256: the hex SHA-256 of the prompt text the person saw
                (``Prompt.text_sha256``); nobody approves text they did not see.
            by: who approves; only ``operator`` may.

        Returns:
            The prompt's decision now: queued or delivered, or the error of the
            first rule that no longer holds (the prompt is then cancelled).

        Raises:
            ApprovalRefused: not an operator, or reason ``stale`` when the digest
                is not the held text's; nothing changes.
        """
        return await self._answer_hold(prompt_id, approve=True, by=by, text_sha256=text_sha256)

    async def reject_hold(self, prompt_id: str, *, by: object = OPERATOR) -> Decision:
        """A person rejects a held prompt (PROMPT_REJECTED); no digest is needed to say no."""
        return await self._answer_hold(prompt_id, approve=False, by=by, text_sha256=None)

    @operation
    async def _answer_hold(self, prompt_id: str, *, approve: bool, by: object,
                           text_sha256: str | None) -> Decision:
        action = "hold.approve" if approve else "hold.reject"
        # A held prompt is in memory; one that is not says its state in the refusal.
        prompt = self.prompt(prompt_id)
        subject = {"prompt": prompt_id, "package": prompt.package if prompt else None}
        principal = self.guard.require_operator(by, action, subject)
        if prompt is None or prompt.state != "held":
            state = prompt.state if prompt else "unknown"
            raise NotFound(f"prompt {named(prompt_id)} is not held (it is {state})", reason=state)
        if approve and not approves_text(prompt, text_sha256):
            raise self.guard.refuse(principal, action, subject, ApprovalRefused(
                f"the text approved is not the text of held prompt "
                f"{prompt.id}: stale — show the whole prompt again",
                reason="stale", package=prompt.package))
        with self.ctx.write():
            self.guard.history(principal, action, subject)
            if not approve:
                self.resolve(prompt, "rejected", "PROMPT_REJECTED", None,
                              why=f"a person rejected prompt {prompt.id}",
                              approver=str(principal))
                return self.outcome(prompt_id)
            result = self.recheck(prompt, open_calls=True)
            if isinstance(result, Decision):
                self.resolve(prompt, "cancelled", result.code, result.reason, result.message,
                              approver=str(principal))
                return self.outcome(prompt_id)
            if self.ctx.state.undelivered(prompt.agent) - 1 >= QUEUE_LIMIT:
                # Never queued past the 20 (SPEC §6): cancelled as check 11 refuses a
                # new prompt, and said so — the person's yes did not send it. A held
                # prompt is one of the 20 (it keeps its place), so only a queue an
                # older arrowgate filled behind it (held prompts not counted) is full.
                self.resolve(prompt, "cancelled", "QUEUE_FULL", None,
                              why=f"{prompt.agent} already has {QUEUE_LIMIT} undelivered "
                              f"prompts: prompt {prompt.id} is cancelled at its approval, "
                              f"not queued past them (card {prompt.card} may send it again "
                              f"once {prompt.agent} has taken some)",
                              approver=str(principal))
                return self.outcome(prompt_id)
            self.resolve(prompt, "approved", None, None, "", approver=str(principal))
            prompt.state = "queued"
            self.record.save_prompt(prompt)
            self.pump(prompt.agent)
        return self.outcome(prompt_id)

    def prompt(self, prompt_id: str) -> Prompt | None:
        """A prompt and its state on the arrow, or None.

        Memory answers for the prompts in play and the newest finished ones;
        an older one (or one another engine made since this one caught up) is
        read from its row in the store. An id that is not text names no prompt.
        """
        if not isinstance(prompt_id, str):
            # Checked first: an unhashable id (a list) cannot even be looked up.
            return None
        prompt = self.ctx.state.prompts.get(prompt_id)
        if prompt is None and is_unicode(prompt_id):  # a lone surrogate names none
            prompt = self.ctx.store.prompt(prompt_id)
        return prompt

    def prompts(self, *, state: str | None = None, arrow: str | None = None,
                newest: int | None = None) -> list[Prompt]:
        """Prompts in order of arrival, optionally by state or arrow, and only the
        ``newest`` of them (a positive int) when given.

        Those in play (queued, held, delivered) are all in memory, and memory
        answers for them; any other listing is the store's rows in order, each
        prompt memory holds shown as memory has it (the newest).

        Raises:
            ValueError: ``newest`` is not a positive int.
        """
        if newest is not None and (type(newest) is not int or newest < 1):
            raise ValueError(f"newest must be a positive whole number of prompts, "
                             f"not {newest!r}")
        if state in IN_PLAY:
            playing = [p for p in self.ctx.state.open_prompts.in_state(state)
                       if arrow is None or p.arrow == arrow]
            return playing if newest is None else playing[-newest:]
        kept = self.ctx.state.prompts
        listed = []
        for stored in self.ctx.store.prompts(state=state, arrow=arrow, newest=newest):
            prompt = kept.get(stored.id, stored)
            if state is None or prompt.state == state:
                listed.append(prompt)
        return listed

    def outcome(self, prompt_id: str) -> Decision:
        """Where a prompt stands, as a decision: ``queued``, ``held`` or its error."""
        prompt = self.prompt(prompt_id)
        if prompt is None:
            raise NotFound(f"no prompt {named(prompt_id)}")
        return outcome_of(prompt)

    async def wait(self, prompt_id: str) -> Decision:
        """Wait until a held prompt is answered, expires or is cancelled; return its outcome.

        The decision's ``value`` is ``{"prompt", "state", "resolution"}``:
        ``resolution`` is the outcome of the prompt's resolution row in the log
        (``approved``, ``rejected``, ``expired``, ``cancelled``), or None for a
        prompt that was never held. A prompt long finished answers at once,
        from its row in the store.
        """
        while True:
            # Still racing other processes: judged again after the nap.
            self.ctx.tick_outside()
            prompt = self.prompt(prompt_id)
            if prompt is None:
                raise NotFound(f"no prompt {named(prompt_id)}")
            decision = outcome_of(prompt)
            if decision.outcome != "held":
                resolution = resolution_of(prompt)
                return decision.with_(value={**decision.value, "resolution": resolution})
            # Wake at the deadline, and now and then to see answers given by
            # a person in another process (the TUI).
            now = self.ctx.now()
            await self._waiters.nap(prompt_id, min(max(0.0, (prompt.deadline or now) - now) + 0.01,
                                                   0.2))

    def wake_waiters(self) -> None:
        """A batch committed: wake those waiting on a prompt that is no longer held."""
        prompts = self.ctx.state.prompts
        self._waiters.wake(lambda pid: (p := prompts.get(pid)) is None or p.state != "held")

    @operation
    async def agent_replied(self, agent: str, text: str, *, status: str = "waiting",
                            length: int | None = None, note: str | None = None) -> None:
        """The agent finished its turn with ``text``; it is left ``status``.

        ``waiting``: it takes its next prompt. ``finished``: it cannot take
        another (its command could not start), and its queue stays as it is.
        The reply is kept, sent on the ``reply`` port and logged within the
        workspace's ``max_payload``, as all text from outside is (SPEC §8):
        a longer one is cut, marked with its whole size (``length`` bytes
        when ``text`` is only its start). The driver's ``note`` on the run
        (``[exit 3]``) follows it, kept whole when it is cut (`bounded`).

        Raises:
            InvalidArgument: a ``status`` other than those two; nothing changes.
        """
        if status not in TURN_ENDS:
            raise InvalidArgument(f"an agent's turn ends waiting or finished, not {status!r}",
                                  reason="status")
        node = self.nodes.node(agent, "agent")
        limit = self.ctx.state.workspaces[node.workspace].settings.max_payload
        text = bounded(text, limit, length=length, note=note)
        with self.ctx.write():
            for prompt in self.ctx.state.open_prompts.of_agent(agent, "delivered"):
                if prompt.state == "delivered":
                    prompt.state = "replied"
                    self.record.save_prompt(prompt)
            updated = self.world.turn_ended(node, text, status)
            self.nodes.save(updated)
            self.ctx.emit("agents.turn", None, agent=agent, workspace=updated.workspace,
                          state="replied")
            self.nodes.output(updated, "reply", text)
            self.pump(updated.id)

    @operation
    async def command_exited(self, terminal: str, code: int) -> None:
        """A command in a terminal ended with ``code``: it goes out on the ``exit`` port."""
        node = self.nodes.node(terminal, "terminal")
        with self.ctx.write():
            data = dict(node.data, exit=code, status="waiting")
            self.nodes.save(Node(node.id, node.type, node.workspace, data))
            self.nodes.output(node, "exit", code)

    @operation
    async def driver_status(self, node_id: str, status: str) -> None:
        """A driver reports its node's status changed on its own (``finished``)."""
        node = self.ctx.state.canvas.node(node_id)
        if node is None or node.data.get("status") == status:
            return
        with self.ctx.write():
            self.nodes.save(Node(node.id, node.type, node.workspace, dict(node.data,
                                                                         status=status)))

    @operation
    async def terminal_output(self, terminal: str, text: str, *,
                              exit: int | None = None) -> None:
        """Text appears on a terminal's screen, and maybe it exits."""
        node = self.nodes.node(terminal, "terminal")
        with self.ctx.write():
            self.nodes.save(self.world.terminal_output(node, text, exit))

    def driver_output(self, node: str, text: str) -> None:
        """A driver's live output: sent as ``agents.onOutput`` (no state change stands behind it)."""
        target = self.ctx.state.canvas.node(node)
        self.ctx.notify(Event("agents.onOutput", None, {
            "node": node, "text": text, "workspace": target.workspace if target else None}))


def _waiting_agent(node: Node | None) -> TypeGuard[Node]:
    """An agent node whose status lets a prompt be delivered to it now."""
    return node is not None and node.type == "agent" and node.data.get("status") == "waiting"
