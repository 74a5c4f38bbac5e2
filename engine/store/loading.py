"""Reading the whole state a decision needs out of the store (at open and after a reload)."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any, TypeVar

from sqlite_utils import Database

from canvas.graph import Canvas
from canvas.model import Arrow, Node
from engine.core.elsewhere import NOWHERE, TOLD_KINDS, Moves, Place, Span
from engine.core.errors import ManifestInvalid
from engine.core.limits import RateCounters, SteadyClock
from engine.core.manifest import parse_manifest
from engine.core.prompts import Prompt
from engine.core.state import PackageState, State
from engine.core.tools import ToolCall
from engine.core.usage import usage_from_row
from engine.store.canvas import CanvasStore, workspace_from_row
from engine.store.decoding import edited_outside, stored_object
from engine.store.pending import key_of
from engine.store.promptrows import IN_PLAY_SQL

__all__ = ["MAX_CATCH_UP", "CatchUpImpossible", "Touched", "catch_up", "load_rate_events",
           "load_state", "newest_time", "package_from_row"]

#: What an entry of a state's table is (a package, a workspace, a usage pair).
_V = TypeVar("_V")


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
        pkg = package_from_row(row)
        state.packages[pkg.name] = pkg
    for row in db.query("select package, permission from grants"):
        state.grants.setdefault(row["package"], set()).add(row["permission"])
    clock.at_least(newest_time(db))
    load_rate_events(db, state.counters, clock)
    # The prompts in play (a partial index holds just them), then the newest
    # finished ones memory keeps: never the whole history (`PromptMemory`).
    for row in db.query(f"select * from prompts where {IN_PLAY_SQL} order by position"):
        prompt = Prompt.from_row(row)
        state.prompts[prompt.id] = prompt
        state.open_prompts.update(prompt)
    newest = list(db.query(f"select * from prompts where not ({IN_PLAY_SQL})"
                           " order by position desc limit ?", [state.prompts.bound]))
    for row in reversed(newest):
        state.prompts.keep(Prompt.from_row(row))
    for row in db.query("select * from tool_calls where state = 'open'"):
        tc = ToolCall.from_row(row)
        state.tool_calls[tc.id] = tc
    for row in db.query("select * from usage"):
        state.usage[row["workspace"]] = usage_from_row(row)
    state.suppressed = {key_of(str(row["key"]))
                        for row in db.query("select key from suppressed_pending")}
    return state


def load_rate_events(db: Database, counters: RateCounters, clock: SteadyClock) -> None:
    """Count into ``counters`` every stored rate event the windows still reach."""
    horizon = clock() - max(r.period for r in counters.limits.values())
    counters.load(_counted(r) for r in db.query(
        "select id, card, key, t from rate_events where t > ? order by id", [horizon]))


def _counted(row: dict[str, Any]) -> tuple[str, str, float]:
    """A ``rate_events`` row as a counted call; SQLite stores any value in any column,
    and text sorts after every number, so a time edited to text is always in reach.

    Raises:
        StoreFailed: reason ``bad-row``: its time is not a number.
    """
    t = row["t"]
    if type(t) is not float and type(t) is not int:
        raise edited_outside("rate_events", row["id"], "its time is not a number")
    return row["card"], row["key"], t


def package_from_row(row: dict[str, Any]) -> PackageState:
    """A ``packages`` row as the `PackageState` a decision reads.

    Raises:
        StoreFailed: reason ``bad-row``: a manifest or digests column that is not
            the JSON object the engine writes (`decoding.stored_object`).
    """
    name = row["name"]
    raw = stored_object(row["manifest"], "packages", name, "manifest")
    digests = stored_object(row["digests"], "packages", name, "digests")
    pending = None
    if row["pending_hash"]:
        pending = (stored_object(row["pending_manifest"], "packages", name, "pending manifest"),
                   stored_object(row["pending_digests"], "packages", name, "pending digests"))
    pkg = PackageState(name, row["state"] == "installed", raw, digests, row["hash"])
    try:
        if pkg.installed:
            pkg.set_manifest(parse_manifest(raw))
        if pending is not None:
            pkg.pending_raw, pkg.pending_digests = pending
            pkg.pending_hash = row["pending_hash"]
            pkg.pending = parse_manifest(pkg.pending_raw)
    except ManifestInvalid:
        # Stored under the looser rules of an older version (SPEC §2):
        # fail closed, its cards are refused until a person installs
        # a version that passes validation.
        pkg = PackageState(name, False, raw, digests, row["hash"])
    return pkg


def newest_time(db: Database) -> float | None:
    """The latest time the store recorded: its newest log row, counted call or consent
    history entry (whichever engine wrote it: an engine whose clock is behind another's
    stands still there, SPEC §6)."""
    newest: float | None = None
    for sql in ("select t from log order by seq desc limit 1",
                "select t from rate_events order by id desc limit 1",
                "select t from consent order by seq desc limit 1"):
        row = db.execute(sql).fetchone()
        if row is not None and isinstance(row[0], (int, float)):
            newest = row[0] if newest is None else max(newest, row[0])
    return newest


# ----------------------------------------------------------------- catch-up
#: Change kinds naming one entity by its key (the table's key column).
_ENTITY_KINDS = ("package", "grants", "workspace", "node", "arrow", "prompt", "tool_call",
                 "usage")
#: Change kinds of records edited or deleted outside the engine (the engine only appends).
_RECORD_KINDS = ("log", "consent")
#: Changes applied one by one at most; beyond, a full reload is cheaper and simpler.
MAX_CATCH_UP = 4096


class CatchUpImpossible(Exception):
    """The changes cannot be applied one by one: reload the whole state (fail closed).

    What `catch_up` had put in place before it gave up stays in the state until
    the whole reload replaces it, and is in the `Moves` it was given: told with
    that reload (`engine.services.context.Context.reload`).
    """


class Touched:
    """What a run of committed changes touched, gathered from the store's change rows.

    Each change is ``(kind, key, key2, t)``: an entity kind and its key
    (``package``, ``grants`` of a package, ``workspace``, ``node``, ``arrow``,
    ``prompt``, ``tool_call``, ``usage`` of a workspace), a counted call
    (``rate``: card, rate key, time), ``rates`` (a card's rate events were
    deleted: the windows are read again), ``secrets``, or ``pending`` (a refusal
    budget's pending summary was created, its stored key: `engine.store.pending`),
    or ``token`` (a service token revoked or deleted, its id: nothing of the state,
    told to the token caches through `engine.store.tokenfeed.TokenFeed`), or ``log``
    and ``consent`` (an old row of the log or the consent history updated or deleted
    outside the engine: nothing of the state, but a change the live views are woken by).

    Each entity's first and last change are kept by where the store recorded them
    (`engine.core.elsewhere.Span`): what they stand for is told in that order.
    """

    def __init__(self) -> None:
        self.keys: dict[str, set[str]] = {kind: set() for kind in _ENTITY_KINDS}
        #: Per entity (kind and key), where its first and last change stand.
        self.spans: dict[tuple[str, str], Span] = {}
        self.rates: list[tuple[str, str, float]] = []
        self.rates_reset = False
        self.secrets = False
        #: Budget keys whose pending summary another engine created.
        self.pending: set[str | None] = set()
        #: Ids of service tokens revoked (or deleted) by these changes.
        self.tokens: set[str] = set()
        #: ``log`` and ``consent``: rows of the log or the consent history edited or
        #: deleted outside the engine (`migrations.m023_history_edits_fed`).
        self.records: set[str] = set()
        self.count = 0

    def add(self, kind: str, key: str | None, key2: str | None, t: float | None,
            at: Place) -> None:
        """Take in one change, recorded by the store at ``at`` (the changes come in the
        order the store recorded them).

        Raises:
            CatchUpImpossible: a kind this engine does not know, or a change
                without the key it needs.
        """
        self.count += 1
        if kind in self.keys and isinstance(key, str):
            self.keys[kind].add(key)
            entity = (kind, key)
            known = self.spans.get(entity)
            self.spans[entity] = (at, at) if known is None else (known[0], at)
        elif kind == "rate" and isinstance(key, str) and isinstance(key2, str) \
                and isinstance(t, (int, float)):
            self.rates.append((key, key2, float(t)))
        elif kind == "rates":
            self.rates_reset = True
        elif kind == "secrets":
            self.secrets = True
        elif kind == "pending" and isinstance(key, str):
            self.pending.add(key_of(key))
        elif kind == "token" and isinstance(key, str):
            self.tokens.add(key)
        elif kind in _RECORD_KINDS:
            # An old row edited or deleted outside the engine: no state reads it,
            # but the live views showing the log and the history are told.
            self.records.add(kind)
        else:
            raise CatchUpImpossible(f"unknown change {kind!r}")

    def __bool__(self) -> bool:
        return self.count > 0

    def span(self, kind: str, key: str) -> Span:
        """Where the changes of one entity these changes touched stand."""
        return self.spans.get((kind, key), NOWHERE)


def _rows(db: Database, table: str, column: str, keys: set[str]) -> dict[str, dict[str, Any]]:
    """The rows of ``table`` whose ``column`` is one of ``keys``, by that column."""
    out: dict[str, dict[str, Any]] = {}
    ordered = sorted(keys)
    for i in range(0, len(ordered), 500):
        chunk = ordered[i:i + 500]
        marks = ", ".join("?" for _ in chunk)
        for row in db.query(f"select * from {table} where {column} in ({marks})", chunk):
            out[row[column]] = row
    return out


def _mirror(db: Database, table: str, column: str, keys: set[str], into: dict[str, _V],
            from_row: Callable[[dict[str, Any]], _V]) -> None:
    """Make ``into`` hold what ``table`` holds now for ``keys``.

    A row read replaces its entry; a key with no row left is removed.
    """
    rows = _rows(db, table, column, keys)
    for key in keys:
        row = rows.get(key)
        if row is None:
            into.pop(key, None)
        else:
            into[key] = from_row(row)


def catch_up(db: Database, state: State, clock: SteadyClock, touched: Touched,
             moves: Moves) -> None:
    """Bring ``state`` up to the store by re-reading only what ``touched`` names, noting
    in ``moves`` how the prompts, tool calls, grants and nodes it applied moved (what
    to tell), each as it is applied: when the store fails it midway (or it gives up),
    ``moves`` holds what was applied, which the state keeps.

    Each entity is read as the store holds it now (the caller reads in one
    snapshot) and put in place through the same `State` and `Canvas` calls
    the engine's own writes use, so the decision cache is forgotten exactly
    when it would be after the same change made here: `State.bump` for
    packages, grants and settings, the canvas's revisions for nodes and
    arrows.

    Raises:
        CatchUpImpossible: something cannot be applied one by one (the
            caller reloads the whole state; what was applied meanwhile is
            thrown away with the old state, and how it moved is in ``moves``).
    """
    _apply(db, state, clock, touched, moves)


def _apply(db: Database, state: State, clock: SteadyClock, touched: Touched,
           moves: Moves) -> None:
    """`catch_up`'s work: each entity put in place, and how it moved noted in ``moves``
    as it is (never before: what is noted is what was applied)."""
    keys = touched.keys
    if keys["package"]:
        _mirror(db, "packages", "name", keys["package"], state.packages, package_from_row)
        state.bump()  # installed, pending or its manifest changed
    if keys["grants"]:
        for name in keys["grants"]:
            granted = {r["permission"] for r in db.query(
                "select permission from grants where package = ?", [name])}
            moves.grants.append((name, frozenset(state.grants.get(name, ())),
                                 touched.span("grants", name)))
            if granted:
                state.grants[name] = granted
            else:
                state.grants.pop(name, None)
        state.bump()
    if keys["workspace"]:
        _mirror(db, "workspaces", "id", keys["workspace"], state.workspaces, workspace_from_row)
        state.bump()
    _catch_up_canvas(db, state.canvas, touched, moves)
    for gone in keys["workspace"] - state.workspaces.keys():
        # Never done by the engine: a workspace deleted by hand under its nodes
        # (after the canvas, which may have lost them in the same edit).
        if state.canvas.count_nodes(gone):
            raise edited_outside("workspaces", gone, "it is gone while its nodes stay")
    if keys["prompt"]:
        rows = _rows(db, "prompts", "id", keys["prompt"])
        for prompt_id in sorted(keys["prompt"], key=lambda k: _position(rows.get(k))):
            row = rows.get(prompt_id)
            if row is None:
                raise CatchUpImpossible(f"prompt {prompt_id} is gone")  # never deleted
            prompt = Prompt.from_row(row)
            before = state.prompts.get(prompt_id)
            moves.prompts.append((None if before is None else before.state, prompt,
                                  touched.span("prompt", prompt_id)))
            state.prompts.keep(prompt)
            state.open_prompts.update(prompt)
    if keys["tool_call"]:
        rows = _rows(db, "tool_calls", "id", keys["tool_call"])
        for call_id in keys["tool_call"]:
            row = rows.get(call_id)
            tc = None if row is None else ToolCall.from_row(row)
            if tc is not None:
                moves.tool_calls.append((call_id in state.tool_calls, tc,
                                         touched.span("tool_call", call_id)))
            if tc is not None and tc.state == "open":
                state.tool_calls[call_id] = tc
            else:
                state.tool_calls.pop(call_id, None)
    if keys["usage"]:
        _mirror(db, "usage", "workspace", keys["usage"], state.usage,
                usage_from_row)
    clock.at_least(newest_time(db))
    if touched.rates_reset:
        # A card's events were deleted: read the windows again, which takes
        # in every counted call of these changes too.
        state.counters = RateCounters(state.counters.limits)
        load_rate_events(db, state.counters, clock)
    elif touched.rates:
        state.counters.load(touched.rates)
    # Another engine's suppressed refusals of these budgets wait for their row,
    # which goes before the card's next one, whichever engine writes that
    # (SPEC §8 "Bounds", §10). Only creations are fed: a key whose summary was
    # written meanwhile costs its next row one read (`Recorder.write_suppressed`).
    state.suppressed.update(touched.pending)


def _position(row: dict[str, Any] | None) -> int:
    return -1 if row is None else int(row["position"] or 0)


def _catch_up_canvas(db: Database, canvas: Canvas, touched: Touched, moves: Moves) -> None:
    """Nodes first (an arrow needs both ends), then arrows; agents and terminals that
    came, went or changed are noted in ``moves``."""
    nodes, arrows = touched.keys["node"], touched.keys["arrow"]
    node_rows = _rows(db, "nodes", "id", nodes) if nodes else {}
    for node_id in sorted(nodes, key=lambda k: _position(node_rows.get(k))):
        row = node_rows.get(node_id)
        old = canvas.node(node_id)
        if row is None:
            if old is not None:
                canvas.remove_node(node_id)  # its arrows were deleted with it
                if old.type in TOLD_KINDS:
                    moves.nodes.append((old, None, touched.span("node", node_id)))
            continue
        node = Node(row["id"], row["type"], row["workspace"],
                    stored_object(row["data"], "nodes", node_id, "data"))
        if old is None:
            canvas.restore_node(node)
        elif (old.type, old.workspace) != (node.type, node.workspace):
            # Never done by the engine (it removes and adds): the in-memory
            # arrows of the old node could not be told apart.
            raise CatchUpImpossible(f"node {node_id} changed its type or workspace")
        elif old.data != node.data:
            canvas.replace_node(node)
        if node.type in TOLD_KINDS:
            moves.nodes.append((old, node, touched.span("node", node_id)))
    if not arrows:
        return
    arrow_rows = _rows(db, "arrows", "id", arrows)
    for arrow_id in sorted(arrows):
        row = arrow_rows.get(arrow_id)
        old_arrow = canvas.arrow(arrow_id)
        new = None if row is None else Arrow(row["id"], row["src"], row["dst"],
                                             row["from_port"], row["to_port"],
                                             row["workspace"])
        if old_arrow is not None and old_arrow != new:
            canvas.remove_arrow(arrow_id)
        if new is not None and old_arrow != new:
            if not (canvas.has_node(new.src) and canvas.has_node(new.dst)):
                raise CatchUpImpossible(f"arrow {arrow_id} names a node not on the canvas")
            canvas.restore_arrow(new)
