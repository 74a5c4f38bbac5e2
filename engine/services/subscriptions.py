"""Events delivered to cards: an async iterator per card, gated at delivery time.

A card subscribes with `Engine.subscribe`; every event the engine sends after
its change is durable is offered to each subscription, and each subscription
decides, *when the card takes the event* (not when it was sent), whether the
card may see it under SPEC §3. A grant revoked, an arrow removed or a package
gone pending between sending and taking means the event is dropped: consent
is checked against the state at the moment data reaches the card.

Which event needs what:

- ``permissions.changed``, ``permissions.request``, ``prompt.held``,
  ``prompt.resolved``: about the card itself; delivered to that card only.
- ``agents.status``, ``agents.turn``, ``agents.changed``: ``agents.read``,
  for agents and terminals of the card's own workspace — the workspace the
  event names, as it was sent.
- ``agents.onOutput``: ``agents.output``, an arrow between card and node, and
  an earlier allowed ``agents.onOutput`` call for that node. No state change
  stands behind live output, so no operation caught up with the store before
  it: the hub catches up before offering it to a card that watches the node
  (another engine's revoke holds from that moment), and withholds it from the
  cards when the store cannot be read.
- ``tool.call``: an agent's call of one of the card's tools; to that card only,
  while an arrow still connects it and the agent. ``tool.resolved`` (the call
  timed out or was cancelled or answered) is about the card itself.
- ``port.data``: data on a port arrow into the card; the arrow must still be
  there, and for data from a built-in node's output port the permission of
  `engine.core.catalogue.PORT_OUTPUTS` must be granted.
- ``fs.changed``, ``fs.watch.ended``: to the card that holds the watch only —
  the card node it was made for (the workspace and package the event names,
  not just its id); ``fs.changed`` while that card holds ``fs.read``.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from engine.core.catalogue import PORT_OUTPUTS
from engine.core.checks import check_card
from engine.core.decision import Decision
from engine.core.errors import StoreFailed
from engine.core.events import Event

if TYPE_CHECKING:
    from canvas import Node
    from engine.core.state import PackageState, State

__all__ = ["CARD_EVENTS", "EventHub", "Subscription", "may_receive"]

#: The event types a card can receive.
CARD_EVENTS = frozenset({
    "permissions.changed", "permissions.request", "prompt.held", "prompt.resolved",
    "agents.status", "agents.turn", "agents.changed", "agents.onOutput", "port.data",
    "tool.call", "tool.resolved", "fs.changed", "fs.watch.ended",
})
_OWN = frozenset({"permissions.changed", "permissions.request", "prompt.held",
                  "prompt.resolved", "tool.resolved"})
#: Events offered to the subscriptions of the card they name only.
_TO_ONE_CARD = _OWN | {"port.data", "fs.changed", "fs.watch.ended"}
_AGENTS_READ = frozenset({"agents.status", "agents.turn", "agents.changed"})


def may_receive(state: State, card_id: str, event: Event,
                watching: frozenset[str] | set[str]) -> bool:
    """Whether the card may take ``event`` now (SPEC §3), given the nodes it watches."""
    if event.type not in CARD_EVENTS:
        return False
    if event.type in _OWN:
        # About the card's own grants and prompts: told even while pending.
        return event.card == card_id and state.canvas.node(card_id) is not None
    if event.type == "fs.watch.ended":
        # About the card's own watch: told even while pending or revoked.
        node = state.canvas.node(card_id)
        return event.card == card_id and node is not None and _watch_of(node, event)
    found = check_card(state, card_id, event.type)
    if isinstance(found, Decision):
        return False
    card, package = found
    if event.type == "fs.changed":
        return (event.card == card_id and _watch_of(card, event)
                and _has(state, package, "fs.read"))
    if event.type == "tool.call":
        # To the called card only, while the agent is still connected to it.
        agent = str(event.data.get("agent", ""))
        return event.card == card_id and state.canvas.arrow_between(agent, card_id) is not None
    if event.type in _AGENTS_READ:
        # The workspace the event names, never the id's node now: an agent id
        # removed in one workspace may be reused in another before the card
        # takes the event. An event naming no workspace is for nobody.
        return (event.data.get("workspace") == card.workspace
                and _has(state, package, "agents.read"))
    if event.type == "agents.onOutput":
        node_id = str(event.data.get("node", ""))
        return (node_id in watching and _has(state, package, "agents.output")
                and state.canvas.arrow_between(card_id, node_id) is not None)
    # port.data
    if event.card != card_id:
        return False
    arrow = state.canvas.arrow(str(event.data.get("arrow", "")))
    if arrow is None or arrow.dst != card_id:
        return False
    source = state.canvas.node(arrow.src)
    if source is None:
        return False
    needed = PORT_OUTPUTS.get((source.type, arrow.from_port or ""))
    return needed is None or _has(state, package, needed)


def _watch_of(card: Node, event: Event) -> bool:
    """The watch event is of this card node: a card added later under the same id,
    in another workspace or of another package, is another card."""
    return (event.data.get("workspace") == card.workspace
            and event.data.get("package") == card.data.get("package"))


def _has(state: State, package: PackageState, permission: str) -> bool:
    return state.declares(package, permission) and state.granted(package.name, permission)


class Subscription:
    """One card's events, as an async iterator; ``async with`` closes it.

    Events wait in a bounded buffer (``limit``); when a card falls that far
    behind, the oldest are dropped and the card is told how many with an
    ``events.dropped`` event, rather than the engine growing without bound.
    """

    def __init__(self, hub: EventHub, card: str, limit: int) -> None:
        self.card = card
        self._hub = hub
        self._buffer: deque[Event] = deque()
        self._limit = limit
        self._dropped = 0
        self._wakeup = asyncio.Event()
        self._closed = False
        self._listener: Callable[[], None] | None = None

    @property
    def closed(self) -> bool:
        """Whether the subscription has ended."""
        return self._closed

    def listen(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` whenever an event is offered or the subscription ends.

        For a reader that takes events (`ready`) at once instead of iterating:
        the service's event streams, which write a tool call's event in the
        turn of the loop that committed it, not a task's wake-up later
        (issue 17). It runs inside the engine's commit: it must not raise.
        """
        self._listener = listener

    def offer(self, event: Event) -> None:
        """Called by the hub: keep the event for the card to take later."""
        if self._closed:
            return
        if len(self._buffer) >= self._limit:
            self._buffer.popleft()
            self._dropped += 1
        self._buffer.append(event)
        self._wakeup.set()
        if self._listener is not None:
            self._listener()

    def close(self) -> None:
        """End the subscription: the iterator stops."""
        self._closed = True
        self._hub.remove(self)
        self._wakeup.set()
        if self._listener is not None:
            self._listener()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    def _take(self) -> Event | None:
        """The next event the card may take now, or None when there is none yet."""
        if self._dropped:
            count, self._dropped = self._dropped, 0
            return Event("events.dropped", self.card, {"count": count})
        while self._buffer:
            event = self._buffer.popleft()
            # The gate: consent as it stands now, not when it was sent.
            if self._hub.allows(self, event):
                return event
        return None

    def ready(self) -> list[Event]:
        """Take every event the card may take now, without waiting (in order)."""
        taken = []
        while (event := self._take()) is not None:
            taken.append(event)
        return taken

    async def __anext__(self) -> Event:
        while True:
            event = self._take()
            if event is not None:
                return event
            if self._closed:
                raise StopAsyncIteration
            self._wakeup.clear()
            await self._wakeup.wait()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class EventHub:
    """Routes the engine's events to the cards' subscriptions.

    Args:
        state: the engine's state now, which the gate reads.
        catch_up: brings that state up to what the store has committed
            (`engine.engine.Engine.catch_up`), before live output is offered.
    """

    def __init__(self, state: Callable[[], State],
                 catch_up: Callable[[], None] | None = None) -> None:
        self._state = state
        self._catch_up = catch_up
        self._subs: dict[str, list[Subscription]] = {}
        #: Per card, the nodes whose live output it asked for (``agents.onOutput``).
        self._watching: dict[str, set[str]] = {}

    def open(self, card: str, limit: int = 1000) -> Subscription:
        """A new subscription for ``card``."""
        sub = Subscription(self, card, limit)
        self._subs.setdefault(card, []).append(sub)
        return sub

    def remove(self, sub: Subscription) -> None:
        """Forget a closed subscription."""
        subs = self._subs.get(sub.card, [])
        if sub in subs:
            subs.remove(sub)
        if not subs:
            self._subs.pop(sub.card, None)

    def close(self) -> None:
        """End every subscription (the engine closed): each iterator stops once its
        buffered events are taken."""
        for subs in list(self._subs.values()):
            for sub in list(subs):
                sub.close()

    def watch(self, card: str, node: str) -> None:
        """The card was allowed ``agents.onOutput`` for ``node``."""
        self._watching.setdefault(card, set()).add(node)

    def let_go(self, live: Callable[[str], bool]) -> None:
        """Nodes left the canvas (those ``live`` says are gone): a removed card's
        subscriptions end and its watches go, and no card watches a removed node
        any more (a node added later under its id was never asked for)."""
        watching = self._watching
        for card in [c for c in watching if not live(c)]:
            del watching[card]
        for card, nodes in list(watching.items()):
            nodes.difference_update([n for n in nodes if not live(n)])
            if not nodes:
                del watching[card]
        for card in [c for c in self._subs if not live(c)]:
            for sub in list(self._subs.get(card, ())):
                sub.close()  # leaves `_subs` (`remove`)

    def publish(self, event: Event) -> None:
        """Offer an event to every subscription that might take it."""
        if event.type not in CARD_EVENTS or not self._subs:
            return
        if event.type == "agents.onOutput" and not self._judged(event):
            return
        if event.card is not None and event.type in _TO_ONE_CARD:
            targets = self._subs.get(event.card, [])
        else:
            targets = [s for subs in self._subs.values() for s in subs]
        for sub in list(targets):
            sub.offer(event)

    def _judged(self, event: Event) -> bool:
        """Whether live output may be offered to the cards: False when the store, which
        a card watching its node needs caught up with first, cannot be read.

        Every other event a card can take follows an operation, which caught up
        with the store as it began (or a watch's own catch-up: `fs.changed`);
        output does not, and the gate would otherwise judge it on a state
        missing another engine's revoke, arrow or card removal until this
        engine's next operation or timer tick. Asked only while some card
        watches the node: unwatched output reaches no card, and costs no read.
        """
        node = event.data.get("node")
        if self._catch_up is None or not any(node in nodes for nodes in self._watching.values()):
            return True
        try:
            self._catch_up()  # may end subscriptions and watches (`let_go`): targets after
        except StoreFailed:
            return False  # fail closed: consent could not be read, no card is told
        return True

    def allows(self, sub: Subscription, event: Event) -> bool:
        """The delivery-time gate."""
        return may_receive(self._state(), sub.card, event,
                           self._watching.get(sub.card, frozenset()))
