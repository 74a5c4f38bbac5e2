"""The size of a built-in card's content, and the bound a card's write keeps it within.

SPEC §8 "Bounds": no card can exhaust the store. A note grows with every append and a
todo or taskboard with every item, each write saves the node's whole content and sends
it on every port arrow from the node; so a card's write may take the content to at most
the workspace's ``content_max_bytes`` (a note's or sticky's text as UTF-8, a todo's or
taskboard's list as JSON, as its output port sends it). A write past it is refused
``CARD_LIMIT`` (SPEC §5 check 10, "caps"), reason ``content-size``, and changes nothing.
"""

from __future__ import annotations

import json
from typing import Any

from canvas import Node
from engine.core.catalogue import CONTENT_PORTS
from engine.core.checks import Passed, denial
from engine.core.decision import Decision

__all__ = ["content_size", "too_full"]


def content_size(kind: str, data: dict[str, Any]) -> int:
    """Bytes of a built-in card's content: its text as UTF-8 (a note, a sticky), its
    list as JSON (a todo, a taskboard)."""
    value = data.get(CONTENT_PORTS[kind][1])
    if type(value) is str:
        # "surrogatepass": a text a person stored by hand is measured, never raised on.
        return len(value.encode("utf-8", "surrogatepass"))
    return len(json.dumps(value))


def too_full(passed: Passed, target: Node, data: dict[str, Any], limit: int) -> Decision | None:
    """None when ``data``, ``target``'s content after the write ``passed``, is within
    ``limit`` bytes; else the write's refusal (``CARD_LIMIT``, ``content-size``)."""
    size = content_size(target.type, data)
    if size <= limit:
        return None
    return denial(passed.spec.name, passed.card.id, "CARD_LIMIT", package=passed.package.name,
                  target=target.id, permission=passed.permission, reason="content-size",
                  arrow=passed.arrow.id if passed.arrow else None,
                  why=f"{target.type} {target.id} would hold {size} bytes, more than the "
                      f"workspace's content_max_bytes ({limit})",
                  fix="clear some of its content, or have the operator raise "
                      "content_max_bytes")
