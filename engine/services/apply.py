"""Doing a plan's effects, in order, inside the caller's write.

The core returns plans (`engine.core.plans`); this is the one place that
turns their effects into store writes, memory changes and events. An
accepted prompt's plan (`PromptPlan`) is done by `Calls` itself, with
`prompt_in_memory` from here; pumping an agent's queue waits on the budget
and belongs to the prompts (`Prompts.pump`).
"""

from __future__ import annotations

from canvas import Node
from engine.core.plans import (
    AddArrow,
    AddNode,
    CountRate,
    Effect,
    Emit,
    LogRow,
    SaveNode,
    Watch,
)
from engine.core.prompts import Prompt
from engine.services.context import Context
from engine.services.nodes import Nodes
from engine.services.record import Recorder
from engine.services.subscriptions import EventHub

__all__ = ["Applier"]


class Applier:
    """Carries out plans (inside a write the caller opened)."""

    def __init__(self, ctx: Context, record: Recorder, nodes: Nodes, events: EventHub) -> None:
        self.ctx = ctx
        self.record = record
        self.nodes = nodes
        self.events = events

    def do(self, effects: tuple[Effect, ...]) -> None:
        """Every effect in order."""
        for effect in effects:
            self.one(effect)

    def spawned(self, node: Node) -> None:
        """A node a card spawned (``canvas.spawn``), made as a person's add is: put on
        the canvas and recorded in the consent history (``node.add`` by the spawning
        card's principal, who consented through its grant of ``canvas.spawn``).

        The entry is the node's making (`engine.service.made.Made`): a copy spawned
        under the id of a removed one (``<card>.self1`` again) is a new node, and its
        token reads none of the removed one's past. Under a used id while time stands
        still, it is stamped strictly after that past (`SteadyClock.past`), as
        `engine.services.canvas.CanvasOps.add_node` does.
        """
        spawner = node.data.get("spawned_by")
        history = self.ctx.store.history
        # Only when time stands still: the history is read then alone.
        if self.ctx.clock.standing() and node.id in history.replaced_nodes(0):
            self.ctx.clock.past()
        self.nodes.add(node)
        history.record(self.ctx.now(), f"card:{spawner}", "node.add",
                       {"workspace": node.workspace, "node": node.id, "spawned_by": spawner},
                       accepted=True)

    def prompt_in_memory(self, prompt: Prompt) -> None:
        """A prompt put in memory (by id and in the open index); its row in the
        store is the caller's to write, inside the same write."""
        self.ctx.state.prompts[prompt.id] = prompt
        self.ctx.state.open_prompts.update(prompt)

    def one(self, effect: Effect) -> None:
        """One effect."""
        # The commonest first: a delivery's node and event, every ok call's row.
        if type(effect) is SaveNode:
            self.nodes.save(effect.node)
        elif type(effect) is Emit:
            self.ctx.store.emit(effect.event)
        elif type(effect) is LogRow:
            self.record.log_row(effect.decision, outcome=effect.outcome, payload=effect.payload,
                                chain=effect.chain, t=effect.t)
        elif type(effect) is CountRate:
            self.record.count(effect.card, effect.key, effect.t)
        elif type(effect) is AddNode:
            self.spawned(effect.node)
        elif type(effect) is AddArrow:
            self.nodes.save_arrow(self.ctx.state.canvas.add_arrow(effect.raw))
        elif type(effect) is Watch:
            self.events.watch(effect.card, effect.target)
        else:
            raise AssertionError(f"no way to do {effect!r}")  # Effect and this agree
