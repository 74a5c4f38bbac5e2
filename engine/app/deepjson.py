"""JSON text of a value nested deeper than json's encoder goes, up to a bound.

json's C encoder recurses once a level and stops at Python's recursion limit
(about 1,000 levels less the caller's frames), and orjson's at 255 levels; the
service reads a body nested up to `engine.service.jsonread.MAX_DEPTH` (1,024)
levels. `dumps` writes such a value without recursion, the same text as
``json.JSONEncoder(separators=(",", ":")).encode`` gives, and refuses one
nested deeper than the bound.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["TooDeep", "dumps"]

_ENCODER = json.JSONEncoder(separators=(",", ":"))


class TooDeep(ValueError):
    """The value nests more containers than the bound."""


class _Text(str):
    """Text already written (a bracket, a separator, a key), as opposed to a value."""

    __slots__ = ()


def dumps(value: Any, max_depth: int) -> str:
    """``value`` as compact JSON text (ASCII, as json writes it by default).

    Raises:
        TooDeep: containers in ``value`` nest more than ``max_depth`` levels.
        TypeError, ValueError: a value json's encoder does not write, or a key
            that is not text (a container in itself nests without end: `TooDeep`).
    """
    out: list[str] = []
    # Each entry: a value with the depth of the container it is in, or text to write.
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        item, depth = todo.pop()
        kind = type(item)
        if kind is _Text:
            out.append(item)
        elif isinstance(item, (dict, list, tuple)) and item:
            if depth >= max_depth:
                raise TooDeep(f"nested more than {max_depth} levels deep")
            following: list[tuple[Any, int]] = []
            if isinstance(item, dict):
                for i, (key, member) in enumerate(item.items()):
                    if type(key) is not str:
                        raise TypeError(f"keys must be str, not {type(key).__name__}")
                    following.append((_Text(("," if i else "{") + _ENCODER.encode(key) + ":"),
                                      0))
                    following.append((member, depth + 1))
                following.append((_Text("}"), 0))
            else:
                for i, member in enumerate(item):
                    if i:
                        following.append((_Text(","), 0))
                    else:
                        following.append((_Text("["), 0))
                    following.append((member, depth + 1))
                following.append((_Text("]"), 0))
            todo.extend(reversed(following))
        else:
            # A scalar, or an empty container (within the bound: it is one level).
            if isinstance(item, (dict, list, tuple)) and depth >= max_depth:
                raise TooDeep(f"nested more than {max_depth} levels deep")
            out.append(_ENCODER.encode(item))
    return "".join(out)
