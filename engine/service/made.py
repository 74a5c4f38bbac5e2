"""When the node a card or agent token names was made: where what it may read begins.

A node's id may be given again once the node is removed (or a card given
another package). A token names its node by id, so without a bound the card
added under a removed card's id — another vendor's, say — would read the
removed card's log rows, prompts and tool calls as its own (SPEC §10.1: a
card token acts only as that card). What it may read begins when it was
made: the time of the consent-history entry that added it under that id, or
gave it its package (`engine.store.base.History.remade`); the log's rows,
prompts and tool calls are stamped by the same engine clock.

The history is read incrementally: each look reads only the entries recorded
since the last, so a card polling its log does not make the server read the
whole history every time. It is read afresh once it is shorter than before, or
once the engine caught up with a hand edit of its rows (`Engine.history_edited`:
the store's triggers feed every update or delete of a history row), as entries
then stand under numbers already read: a newest entry deleted and the next one
written in its place leaves the history as long as before. Callers catch the
engine up first (`Engine.catch_up`), as every route reading another's past does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.engine import Engine

__all__ = ["Made"]

#: Nodes remembered before the memory starts afresh (ids churn as nodes come and go).
_MAX_NODES = 10_000


class Made:
    """Each asked-for node's making time, kept up to date with the consent history."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine  # its history read when asked (the store it has then)
        #: node -> (the newest entry read for it, when it was made; None: before any entry)
        self._known: dict[str, tuple[int, float | None]] = {}
        #: `Engine.history_edited` when the entries were read.
        self._edited: int | None = None

    def since(self, node: str) -> float | None:
        """When the node now under id ``node`` was made (None: nothing in the history
        says, so nothing of an earlier node under its id is known either).

        Raises:
            StoreFailed: the store cannot be read (the request fails closed).
        """
        history = self._engine.history
        edited = self._engine.history_edited
        if edited != self._edited:
            # Rows edited by hand (or a reload that does not say): any entry read may
            # stand changed under its number. Read afresh, keeping the making known.
            self._edited = edited
            self._known = {n: (0, m) for n, (_, m) in self._known.items()}
        newest = history.newest()  # first: an entry after it is read next time
        seen, made = self._known.get(node, (0, None))
        if newest < seen:
            # The history is shorter than when last read (its newest entries deleted
            # by hand): an entry is numbered one past the newest there is, so what
            # comes next takes numbers already read. Read it afresh, keeping the
            # making already known: a deleted entry unmakes nothing.
            seen = 0
        if seen != newest:
            later = history.remade(node, seen)
            if later is not None:
                made = later if made is None else max(made, later)
            if len(self._known) >= _MAX_NODES and node not in self._known:
                self._known.clear()
            self._known[node] = (newest, made)
        return made

    def predates(self, node: str, t: float) -> bool:
        """Whether something stamped ``t`` (a prompt, a tool call) comes before the
        node now under id ``node`` was made: an earlier node's, not this one's."""
        made = self.since(node)
        return made is not None and t < made
