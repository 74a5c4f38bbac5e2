"""Spawn trees that older code left naming a removed node: the repair both stores'
migrations make once (SQLite ``m015_hand_on_orphaned_spawns``, PostgreSQL
``m005_hand_on_orphaned_spawns``).

Code before 1c5aab6 removed a spawn root and left its copies' ``spawned_by``
naming it, and its rate windows under its id: a new card later given that id
became their root and inherited the windows (SPEC §6: a copy shares its tree's
root's windows). The rule applied since at removal (`engine.core.limits.hand_over`)
is applied here to every removed id still named, as if that node were removed now.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from engine.core.limits import hand_over

__all__ = ["Repair", "orphan_repair"]


@dataclass(frozen=True, slots=True)
class Repair:
    """What the repair writes: nodes' new data, and where removed ids' windows go."""

    #: (node id, its data as it is to be stored: JSON with sorted keys, as the stores write it)
    nodes: tuple[tuple[str, str], ...]
    #: (removed id, the copy that takes its rate windows; None: they are forgotten)
    windows: tuple[tuple[str, str | None], ...]


def orphan_repair(nodes: Iterable[tuple[str, str, str | None]],
                  owners: Iterable[str]) -> Repair:
    """The repair of a store holding ``nodes`` (id, type, data as stored) and rate
    events of the cards ``owners``.

    A removed id is one named as a spawner, or owning rate events, that no node
    has. Data that does not decode to an object is left as it is (the engine
    reports it where it reads it).
    """
    data = {node: _decoded(raw) for node, _type, raw in nodes}
    types = {node: kind for node, kind, _raw in nodes}
    spawned: dict[str, list[tuple[str, str]]] = {}
    for node, fields in data.items():
        spawner = fields.get("spawned_by") if fields is not None else None
        if isinstance(spawner, str) and spawner not in data:
            spawned.setdefault(spawner, []).append((node, types[node]))
    removed = set(spawned) | {owner for owner in owners if owner not in data}
    changed: list[tuple[str, str]] = []
    windows: list[tuple[str, str | None]] = []
    for gone in sorted(removed):
        # The walk to the root ends with a missing id (`rate_owner`): it was the root.
        plan = hand_over(gone, gone, spawned.get(gone, []))
        for node, spawner in plan.spawners:
            fields = {k: v for k, v in (data[node] or {}).items() if k != "spawned_by"}
            if spawner is not None:
                fields["spawned_by"] = spawner
            changed.append((node, json.dumps(fields, sort_keys=True)))
        windows.append((gone, plan.heir))
    return Repair(tuple(changed), tuple(windows))


def _decoded(raw: str | None) -> dict[str, object] | None:
    """A node's stored data as an object, or None when it is not one."""
    try:
        value = json.loads(raw) if raw is not None else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
