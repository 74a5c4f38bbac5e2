"""Background cards (SPEC §3, §6): at most 8 app-wide keep running while hidden.

A card in a hidden workspace keeps running only when its package holds the
``background`` permission and the card asks to (its node's ``background``
field); of those, the 8 seen most recently run and the rest are suspended.
Cards in visible workspaces always run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from canvas.model import Node
from engine.core.state import State

__all__ = ["BACKGROUND_CAP", "background_status"]

#: Background cards that may run at once, app-wide.
BACKGROUND_CAP = 8

Status = Literal["running", "background", "suspended"]


def background_status(state: State, hidden: Iterable[str], seen: Mapping[str, float],
                      looked: Mapping[str, float] | None = None,
                      cap: int = BACKGROUND_CAP) -> dict[str, Status]:
    """Each custom card's status: ``running`` (visible workspace), ``background`` or ``suspended``.

    Args:
        hidden: ids of the workspaces that are hidden now.
        seen: until when each card was last on screen; never seen counts as oldest.
        looked: when the person last looked at each card itself; it orders cards
            that left the screen at the same moment (their workspace was hidden).
    """
    looked = looked or {}
    hidden = set(hidden)
    out: dict[str, Status] = {}
    candidates: list[Node] = []
    for card in state.canvas.nodes(type="card"):
        if card.workspace not in hidden:
            out[card.id] = "running"
        elif card.data.get("background") and state.granted(card.data["package"], "background") \
                and _declared(state, card):
            candidates.append(card)
        else:
            out[card.id] = "suspended"
    # Most recently seen first, then most recently looked at; remaining ties (never
    # seen) by id, so the order is stable.
    candidates.sort(key=lambda c: (-seen.get(c.id, float("-inf")),
                                   -looked.get(c.id, float("-inf")), c.id))
    for i, card in enumerate(candidates):
        out[card.id] = "background" if i < cap else "suspended"
    return out


def _declared(state: State, card: Node) -> bool:
    pkg = state.packages.get(card.data["package"])
    return bool(pkg and pkg.installed and not pkg.is_pending and state.declares(pkg, "background"))
