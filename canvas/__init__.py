"""The canvas model: workspaces, nodes and arrows (SPEC §1).

Plain dicts hold the graph in memory (`Canvas.graph` gives a networkx copy);
the engine's store persists it (`engine.store.canvas`). This package is the pure model: it never touches a
database, and never imports textual, rich or the TUI.
"""

from __future__ import annotations

from .errors import CanvasError, InvalidArrow, InvalidNode, InvalidSetting
from .graph import Canvas
from .model import (
    BUILTIN_CARD_TYPES,
    BUILTIN_PORTS,
    ENGINE_KEPT,
    NODE_TYPES,
    Arrow,
    Node,
    Workspace,
    WorkspaceSettings,
    check_not_engine_kept,
)

__all__ = [
    "Arrow",
    "BUILTIN_CARD_TYPES",
    "BUILTIN_PORTS",
    "Canvas",
    "CanvasError",
    "ENGINE_KEPT",
    "InvalidArrow",
    "InvalidNode",
    "InvalidSetting",
    "NODE_TYPES",
    "Node",
    "Workspace",
    "WorkspaceSettings",
    "check_not_engine_kept",
]
