"""The pure core, tested directly: no database, no event loop, no Engine.

Every test here gets `_pure_core`, which makes opening a database or an
event loop fail the test, so a test that drifts into the store or the
services fails loudly instead of quietly testing something else. The
helpers build a `State` in memory the way the store's loader does, from
workspaces, nodes, arrows, manifests (through `parse_manifest`) and grants.
"""

from __future__ import annotations

import asyncio
import asyncio.events
import inspect
import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any, NoReturn

import pytest
import sqlite_utils

from canvas.graph import Canvas
from canvas.model import Arrow, Node, Workspace, WorkspaceSettings
from engine.core.manifest import content_hash, file_digests, parse_manifest
from engine.core.state import PackageState, State

__all__ = ["add_arrow", "add_node", "grant", "install", "make_state", "manifest", "revoke",
           "set_pending", "set_settings", "uninstall"]


def _refuse(what: str) -> Any:
    def refuse(*_args: Any, **_kwargs: Any) -> NoReturn:
        raise AssertionError(f"tests/core must not {what}: the core is pure")
    return refuse


@pytest.fixture(autouse=True)
def _pure_core(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail the test on any database connection or event loop."""
    if inspect.iscoroutinefunction(request.function):
        pytest.fail("tests/core are synchronous: the core needs no event loop")
    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()
    monkeypatch.setattr(sqlite3, "connect", _refuse("open an SQLite database"))
    monkeypatch.setattr(sqlite_utils.Database, "__init__", _refuse("open a sqlite_utils database"))
    # asyncio.run and get_event_loop both end in one of these.
    loop = _refuse("make an event loop")
    monkeypatch.setattr(asyncio.events, "new_event_loop", loop)
    monkeypatch.setattr(asyncio, "new_event_loop", loop)
    monkeypatch.setattr(asyncio.events.BaseDefaultEventLoopPolicy, "new_event_loop", loop)
    yield
    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()


def manifest(name: str, permissions: dict[str, Any] | Iterable[str] = (),
             **extra: Any) -> dict[str, Any]:
    """A raw manifest: ``permissions`` as the manifest's block, or names declared required."""
    block = dict(permissions) if isinstance(permissions, dict) else {p: {} for p in permissions}
    return {"name": name, "version": "1.0.0", "permissions": block, **extra}


def make_state(*workspaces: str, **settings: Any) -> State:
    """An empty state with the given workspaces (default ``w1``), each with ``settings``.

    Its canvas asks the state for custom cards' ports, as the loader's does.
    """
    state = State()
    state.canvas = Canvas(state.card_ports)
    for ws in workspaces or ("w1",):
        state.workspaces[ws] = Workspace(ws, f"/{ws}", WorkspaceSettings.from_dict(settings))
    return state


def set_settings(state: State, workspace: str, **settings: Any) -> None:
    """Change a workspace's settings, as the consent service does (and bump)."""
    ws = state.workspaces[workspace]
    merged = {**ws.settings.to_dict(), **settings}
    state.workspaces[workspace] = Workspace(ws.id, ws.folder, WorkspaceSettings.from_dict(merged))
    state.bump()


def install(state: State, raw: dict[str, Any], grants: Iterable[str] | None = None) -> PackageState:
    """Install a package from its raw manifest; ``grants`` default to its required permissions."""
    parsed = parse_manifest(raw)
    digests = file_digests({"manifest.json": repr(sorted(raw.items())), "index.js": raw["name"]})
    pkg = PackageState(parsed.name, True, raw, digests, content_hash(digests), manifest=parsed)
    state.packages[pkg.name] = pkg
    state.grants[pkg.name] = set(parsed.required if grants is None else grants)
    state.bump()
    return pkg


def uninstall(state: State, name: str) -> None:
    """The package is offered again, not installed; its grants are gone."""
    pkg = state.packages[name]
    state.packages[name] = PackageState(name, False, pkg.raw, pkg.digests, pkg.hash)
    state.grants.pop(name, None)
    state.bump()


def set_pending(state: State, name: str, raw: dict[str, Any] | None) -> None:
    """A changed version of ``name`` waits for approval (``raw``), or no longer does (None)."""
    pkg = state.packages[name]
    if raw is None:
        pkg.pending_raw = pkg.pending_digests = pkg.pending_hash = pkg.pending = None
    else:
        pkg.pending = parse_manifest(raw)
        pkg.pending_raw = raw
        pkg.pending_digests = file_digests({"manifest.json": repr(sorted(raw.items()))})
        pkg.pending_hash = content_hash(pkg.pending_digests)
    state.bump()


def grant(state: State, package: str, *permissions: str) -> None:
    """Grant permissions to a package (and bump, as every consent change does)."""
    state.grants.setdefault(package, set()).update(permissions)
    state.bump()


def revoke(state: State, package: str, *permissions: str) -> None:
    """Revoke permissions from a package (and bump)."""
    state.grants.setdefault(package, set()).difference_update(permissions)
    state.bump()


def add_node(state: State, node_id: str, type: str, workspace: str = "w1",
             **data: Any) -> Node:
    """Add a checked node (a card names its ``package``)."""
    node = Node.build({"id": node_id, "type": type, **data}, workspace)
    state.canvas.add_node(node)
    return node


def add_arrow(state: State, arrow_id: str, src: str, dst: str, from_port: str | None = None,
              to_port: str | None = None) -> Arrow:
    """Draw a checked arrow, plain or (with both ports) a port arrow."""
    raw: dict[str, Any] = {"id": arrow_id, "from": src, "to": dst}
    if from_port is not None or to_port is not None:
        raw.update(from_port=from_port, to_port=to_port)
    return state.canvas.add_arrow(raw)
