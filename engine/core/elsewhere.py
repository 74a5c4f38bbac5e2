"""What another engine on the store committed, told here as its engine told its own.

Events go out in the process whose batch made them (`engine.store` delivers a
committed batch's events to that engine only). Every other engine on the store
learns of the change when it catches up, which applies it to its state; the
catch-up notes how each entity it applied *moved* (`Moves`), and `told` makes
from that the events the other engine sent, for this engine's drivers and
cards (SPEC §10: every rule holds across the engines on one store — a hold
approved in a TUI reaches the agent's driver in the app's process; a tool call
opened through one server reaches the card listening on another, §9).

Only what this engine did not make moves at a catch-up (its own commits are
behind it), so nothing is told twice. Told from the state as the catch-up
left it: a change made and undone between two catch-ups is not told at all
(a tool call opened and cancelled meanwhile never reaches its card).

Told in the order the store recorded the changes (its change sequence), not by
kind: each entity a catch-up applied carries the `Span` of its changes, and
what began it (an agent added, a prompt held or approved and delivered, a tool
call opened) is told where its first change stands, what it came to (a prompt
answered or replied, a tool call ended, an agent's status, grants) where its
last one does. A whole reload knows no order (`between`): told after, as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from canvas.model import Node
from engine.core.events import Event, event
from engine.core.prompts import IN_PLAY, Prompt
from engine.core.state import State
from engine.core.tools import ToolCall

__all__ = ["NOWHERE", "TOLD_KINDS", "Moves", "Place", "Span", "between", "told"]

#: Where a change stands in what the store recorded: the number of its change row,
#: and its place among that row's entries (PostgreSQL records one row a batch).
Place = tuple[int, int]
#: The first and the last change of one entity among those a catch-up applied.
Span = tuple[Place, Place]
#: The span of a move a whole reload found (`between`): the store's record of the
#: changes is gone, so it is told after every move whose place is known.
NOWHERE: Span = ((2**63, 0), (2**63, 0))

#: The kinds of node whose coming, going and status are told (`Moves.nodes`).
TOLD_KINDS = frozenset({"agent", "terminal"})

#: What the engine writes on an agent or terminal as it runs (`engine.effects.world`):
#: a change elsewhere of anything else is an operator's ``node.set``, told ``updated``.
_RUNNING = frozenset({"status", "screen", "last_reply", "chain", "exit"})

#: States a prompt ends in when a person or a rule answers it (``prompt.resolved``).
_RESOLVED = frozenset({"rejected", "expired", "cancelled"})
#: States a held prompt passes on to once a person approved it.
_APPROVED_ON = frozenset({"queued", "delivered", "replied"})


@dataclass
class Moves:
    """How the entities another engine changed moved, as a catch-up applied them."""

    #: Each prompt applied: its state here before (None: not known here), it now,
    #: and where its changes stand (`Span`).
    prompts: list[tuple[str | None, Prompt, Span]] = field(default_factory=list)
    #: Each tool call applied: whether it was open here before, it now, its span.
    tool_calls: list[tuple[bool, ToolCall, Span]] = field(default_factory=list)
    #: Each package whose grants changed: its name, its grants before, its span.
    grants: list[tuple[str, frozenset[str], Span]] = field(default_factory=list)
    #: Each agent or terminal applied: it before and now (None: not on the canvas),
    #: and its span.
    nodes: list[tuple[Node | None, Node | None, Span]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.prompts or self.tool_calls or self.grants or self.nodes)

    def then(self, later: Moves) -> Moves:
        """These moves and, after each kind of them, ``later``'s: a catch-up's part
        applied in place, then the whole reload that finished its work (`between`
        from the part-applied state, so nothing is in both)."""
        return Moves(self.prompts + later.prompts, self.tool_calls + later.tool_calls,
                     self.grants + later.grants, self.nodes + later.nodes)


def between(before: State, after: State) -> Moves:
    """How the state moved from ``before`` to ``after``, a whole reload's worth: another
    engine's commits were too many to apply one by one (`Moves`).

    Prompts in play on either side, open tool calls on either side, every
    package's grants, and every agent and terminal. A tool call that ended
    meanwhile is not in ``after`` (only open ones are kept), so its end is not
    told; its waiters read the store.
    """
    moves = Moves()
    was = {p.id: p.state for state in IN_PLAY for p in before.open_prompts.in_state(state)}
    now = {p.id: p for state in IN_PLAY for p in after.open_prompts.in_state(state)}
    for prompt_id in was.keys() - now.keys():
        ended = after.prompts.get(prompt_id)
        if ended is not None:
            now[prompt_id] = ended
    for prompt in sorted(now.values(), key=lambda p: p.position):
        known = before.prompts.get(prompt.id)
        moves.prompts.append((was.get(prompt.id, None if known is None else known.state),
                              prompt, NOWHERE))
    for tc in sorted(after.tool_calls.values(), key=lambda t: t.position):
        moves.tool_calls.append((tc.id in before.tool_calls, tc, NOWHERE))
    for package in sorted(before.grants.keys() | after.grants.keys()):
        moves.grants.append((package, frozenset(before.grants.get(package, ())), NOWHERE))
    for kind in sorted(TOLD_KINDS):
        gone = {n.id: n for n in before.canvas.nodes(type=kind)}
        for node in after.canvas.nodes(type=kind):
            moves.nodes.append((gone.pop(node.id, None), node, NOWHERE))
        moves.nodes += [(node, None, NOWHERE) for node in gone.values()]
    return moves


def told(moves: Moves, state: State) -> list[Event]:
    """The events the engine that made ``moves`` sent for them, rebuilt from ``state``
    (this engine's, with the moves applied), in the order the store recorded the
    changes behind them (each move's `Span`; those of a whole reload last, in the
    order `between` found them).

    ``driver.prompt`` is among them for each prompt delivered to an agent: the
    engine that delivered it had no driver for the agent (it echoed the prompt
    on the agent's screen), and the engine whose driver stands behind the
    agent hands it over (`engine.effects.world.World.committed`).
    """
    placed: list[tuple[Place, Event]] = []
    for was, now, span in moves.nodes:
        placed += _node_moved(was, now, span)
    for package, before, (_first, last) in moves.grants:
        granted = state.grants.get(package, set())
        if granted == before:
            continue
        shown = sorted(granted)
        for node in state.canvas.nodes(type="card"):
            if node.data.get("package") == package:
                placed.append((last, event("permissions.changed", node.id,
                                           {"package": package, "granted": shown})))
    for before_state, prompt, span in moves.prompts:
        placed += _prompt_moved(before_state, prompt, state, span)
    for was_open, tc, (first, last) in moves.tool_calls:
        if tc.is_open and not was_open:
            placed.append((first, event("tool.call", tc.card, {
                "id": tc.id, "agent": tc.agent, "tool": tc.tool, "args": tc.args,
                "chain": list(tc.chain)})))
        elif was_open and not tc.is_open:
            placed.append((last, event("tool.resolved", tc.card,
                                       {"id": tc.id, "state": tc.state, "code": tc.code})))
    # Stable: one entity's events keep their order where their places are equal.
    placed.sort(key=lambda told_at: told_at[0])
    return [e for _place, e in placed]


def _node_moved(was: Node | None, now: Node | None, span: Span) -> list[tuple[Place, Event]]:
    """An agent or terminal added (told where its first change stands: before anything
    it then did), removed, set by an operator, or with a new status (where its last
    one does) (`Nodes.agents_changed`, `Nodes.save`)."""
    first, last = span
    if was is None and now is not None:
        return [(first, event("agents.changed", None, {
            "agent": now.id, "workspace": now.workspace, "kind": now.type,
            "change": "added"}))]
    if was is not None and now is None:
        return [(last, event("agents.changed", None, {
            "agent": was.id, "workspace": was.workspace, "kind": was.type,
            "change": "removed"}))]
    out: list[tuple[Place, Event]] = []
    if was is not None and now is not None:
        if _set(was) != _set(now):
            out.append((last, event("agents.changed", None, {
                "agent": now.id, "workspace": now.workspace, "kind": now.type,
                "change": "updated"})))
        status = now.data.get("status")
        if was.data.get("status") != status:
            out.append((last, event("agents.status", None, {
                "agent": now.id, "workspace": now.workspace, "status": status})))
    return out


def _set(node: Node) -> dict[str, object]:
    """The node's data an operator sets (`_RUNNING` left out)."""
    return {k: v for k, v in node.data.items() if k not in _RUNNING}


def _prompt_moved(before: str | None, prompt: Prompt, state: State,
                  span: Span) -> list[tuple[Place, Event]]:
    """A prompt held, approved, delivered (told where its first change stands: the
    turn began before what the agent then did), answered or replied (where its last
    one does)."""
    now = prompt.state
    if now == before:
        return []
    first, last = span
    out: list[tuple[Place, Event]] = []
    if now == "held":
        out.append((first, event("prompt.held", prompt.card, {
            "prompt": prompt.id, "agent": prompt.agent, "arrow": prompt.arrow,
            "text": prompt.text, "deadline": prompt.deadline})))
    elif now in _RESOLVED:
        out.append((last, event("prompt.resolved", prompt.card, {
            "prompt": prompt.id, "state": now, "code": prompt.code, "reason": prompt.reason})))
    elif before == "held" and now in _APPROVED_ON:
        out.append((first, event("prompt.resolved", prompt.card, {
            "prompt": prompt.id, "state": "approved", "code": None, "reason": None})))
    agent = state.canvas.node(prompt.agent)
    if agent is None:
        return out
    if now == "delivered":
        out.append((first, event("driver.prompt", None,
                                 {"node": agent.id, "text": prompt.text})))
    if now == "delivered" or (now == "replied" and before != "delivered"):
        # Delivered here unseen when it was replied to already: its turn began all
        # the same (never handed to a driver: the reply came).
        out.append((first, event("agents.turn", None, {
            "agent": agent.id, "workspace": agent.workspace, "prompt": prompt.id,
            "state": "delivered"})))
    if now == "replied":
        # As `Prompts.agent_replied` tells it: the turn, not the prompt.
        out.append((last, event("agents.turn", None, {
            "agent": agent.id, "workspace": agent.workspace, "state": "replied"})))
    return out
