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
"""

from __future__ import annotations

from dataclasses import dataclass, field

from canvas.model import Node
from engine.core.events import Event, event
from engine.core.prompts import IN_PLAY, Prompt
from engine.core.state import State
from engine.core.tools import ToolCall

__all__ = ["TOLD_KINDS", "Moves", "between", "told"]

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

    #: Each prompt applied: its state here before (None: not known here), and it now.
    prompts: list[tuple[str | None, Prompt]] = field(default_factory=list)
    #: Each tool call applied: whether it was open here before, and it now.
    tool_calls: list[tuple[bool, ToolCall]] = field(default_factory=list)
    #: Each package whose grants changed: its name and its grants before.
    grants: list[tuple[str, frozenset[str]]] = field(default_factory=list)
    #: Each agent or terminal applied: it before and now (None: not on the canvas).
    nodes: list[tuple[Node | None, Node | None]] = field(default_factory=list)

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
                              prompt))
    for tc in sorted(after.tool_calls.values(), key=lambda t: t.position):
        moves.tool_calls.append((tc.id in before.tool_calls, tc))
    for package in sorted(before.grants.keys() | after.grants.keys()):
        moves.grants.append((package, frozenset(before.grants.get(package, ()))))
    for kind in sorted(TOLD_KINDS):
        gone = {n.id: n for n in before.canvas.nodes(type=kind)}
        for node in after.canvas.nodes(type=kind):
            moves.nodes.append((gone.pop(node.id, None), node))
        moves.nodes += [(node, None) for node in gone.values()]
    return moves


def told(moves: Moves, state: State) -> list[Event]:
    """The events the engine that made ``moves`` sent for them, rebuilt from ``state``
    (this engine's, with the moves applied), in the order a catch-up applied them.

    ``driver.prompt`` is among them for each prompt delivered to an agent: the
    engine that delivered it had no driver for the agent (it echoed the prompt
    on the agent's screen), and the engine whose driver stands behind the
    agent hands it over (`engine.effects.world.World.committed`).
    """
    out: list[Event] = []
    for was, now in moves.nodes:
        out += _node_moved(was, now)
    for package, before in moves.grants:
        granted = state.grants.get(package, set())
        if granted == before:
            continue
        shown = sorted(granted)
        for node in state.canvas.nodes(type="card"):
            if node.data.get("package") == package:
                out.append(event("permissions.changed", node.id,
                                 {"package": package, "granted": shown}))
    for before_state, prompt in moves.prompts:
        out += _prompt_moved(before_state, prompt, state)
    for was_open, tc in moves.tool_calls:
        if tc.is_open and not was_open:
            out.append(event("tool.call", tc.card, {
                "id": tc.id, "agent": tc.agent, "tool": tc.tool, "args": tc.args,
                "chain": list(tc.chain)}))
        elif was_open and not tc.is_open:
            out.append(event("tool.resolved", tc.card,
                             {"id": tc.id, "state": tc.state, "code": tc.code}))
    return out


def _node_moved(was: Node | None, now: Node | None) -> list[Event]:
    """An agent or terminal added, removed, set by an operator, or with a new status
    (`Nodes.agents_changed`, `Nodes.save`)."""
    if was is None and now is not None:
        return [event("agents.changed", None, {"agent": now.id, "workspace": now.workspace,
                                               "kind": now.type, "change": "added"})]
    if was is not None and now is None:
        return [event("agents.changed", None, {"agent": was.id, "workspace": was.workspace,
                                               "kind": was.type, "change": "removed"})]
    out: list[Event] = []
    if was is not None and now is not None:
        if _set(was) != _set(now):
            out.append(event("agents.changed", None, {"agent": now.id, "workspace": now.workspace,
                                                      "kind": now.type, "change": "updated"}))
        status = now.data.get("status")
        if was.data.get("status") != status:
            out.append(event("agents.status", None, {"agent": now.id, "workspace": now.workspace,
                                                     "status": status}))
    return out


def _set(node: Node) -> dict[str, object]:
    """The node's data an operator sets (`_RUNNING` left out)."""
    return {k: v for k, v in node.data.items() if k not in _RUNNING}


def _prompt_moved(before: str | None, prompt: Prompt, state: State) -> list[Event]:
    now = prompt.state
    if now == before:
        return []
    out: list[Event] = []
    if now == "held":
        out.append(event("prompt.held", prompt.card, {
            "prompt": prompt.id, "agent": prompt.agent, "arrow": prompt.arrow,
            "text": prompt.text, "deadline": prompt.deadline}))
    elif now in _RESOLVED:
        out.append(event("prompt.resolved", prompt.card, {
            "prompt": prompt.id, "state": now, "code": prompt.code, "reason": prompt.reason}))
    elif before == "held" and now in _APPROVED_ON:
        out.append(event("prompt.resolved", prompt.card, {
            "prompt": prompt.id, "state": "approved", "code": None, "reason": None}))
    agent = state.canvas.node(prompt.agent)
    if agent is None:
        return out
    if now == "delivered":
        out.append(event("driver.prompt", None, {"node": agent.id, "text": prompt.text}))
    if now == "delivered" or (now == "replied" and before != "delivered"):
        # Delivered here unseen when it was replied to already: its turn began all
        # the same (never handed to a driver: the reply came).
        out.append(event("agents.turn", None, {
            "agent": agent.id, "workspace": agent.workspace, "prompt": prompt.id,
            "state": "delivered"}))
    if now == "replied":
        # As `Prompts.agent_replied` tells it: the turn, not the prompt.
        out.append(event("agents.turn", None, {
            "agent": agent.id, "workspace": agent.workspace, "state": "replied"}))
    return out
