"""Reading the whole state a decision needs out of the store (at open and after a reload)."""

from __future__ import annotations

import gc
import json

from sqlite_utils import Database

from engine.core.errors import ManifestInvalid
from engine.core.limits import SteadyClock
from engine.core.manifest import parse_manifest
from engine.core.prompts import Prompt
from engine.core.state import PackageState, State
from engine.core.tools import ToolCall
from engine.store.canvas import CanvasStore

__all__ = ["load_state", "newest_time"]


def load_state(db: Database, canvas_store: CanvasStore, clock: SteadyClock) -> State:
    """The state as the store holds it now.

    Raises the clock's floor to the newest time the store recorded first, so
    time never goes backwards across a restart (SPEC §6), then loads the rate
    windows that floor still reaches.
    """
    # Loading allocates hundreds of thousands of small objects that all
    # live on; the cyclic collector would scan the growing heap again and
    # again meanwhile (a third of the open time at 100,000 nodes). Nothing
    # made here forms a cycle that needs collecting, so pause it.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _load(db, canvas_store, clock)
    finally:
        if paused:
            gc.enable()


def _load(db: Database, canvas_store: CanvasStore, clock: SteadyClock) -> State:
    state = State()
    workspaces, canvas = canvas_store.load(state.card_ports)
    state.workspaces, state.canvas = workspaces, canvas
    for row in db.query("select * from packages"):
        raw = json.loads(row["manifest"])
        pkg = PackageState(row["name"], row["state"] == "installed", raw,
                           json.loads(row["digests"]), row["hash"])
        try:
            if pkg.installed:
                pkg.manifest = parse_manifest(raw)
            if row["pending_hash"]:
                pkg.pending_raw = json.loads(row["pending_manifest"])
                pkg.pending_digests = json.loads(row["pending_digests"])
                pkg.pending_hash = row["pending_hash"]
                pkg.pending = parse_manifest(pkg.pending_raw)
        except ManifestInvalid:
            # Stored under the looser rules of an older version (SPEC §2):
            # fail closed, its cards are refused until a person installs
            # a version that passes validation.
            pkg = PackageState(row["name"], False, raw, json.loads(row["digests"]),
                               row["hash"])
        state.packages[pkg.name] = pkg
    for row in db.query("select package, permission from grants"):
        state.grants.setdefault(row["package"], set()).add(row["permission"])
    clock.at_least(newest_time(db))
    horizon = clock() - max(r.period for r in state.counters.limits.values())
    state.counters.load(
        (r["card"], r["key"], r["t"])
        for r in db.query("select card, key, t from rate_events where t > ? order by id",
                          [horizon])
    )
    for row in db.query("select * from prompts order by position"):
        prompt = Prompt.from_row(row)
        state.prompts[prompt.id] = prompt
        state.open_prompts.update(prompt)
    for row in db.query("select * from tool_calls where state = 'open'"):
        tc = ToolCall.from_row(row)
        state.tool_calls[tc.id] = tc
    for row in db.query("select * from usage"):
        state.usage[row["workspace"]] = (row["tokens"], row["cost"])
    return state


def newest_time(db: Database) -> float | None:
    """The latest time the store recorded: its newest log row or counted call."""
    newest: float | None = None
    for sql in ("select t from log order by seq desc limit 1",
                "select t from rate_events order by id desc limit 1"):
        row = db.execute(sql).fetchone()
        if row is not None and isinstance(row[0], (int, float)):
            newest = row[0] if newest is None else max(newest, row[0])
    return newest
