"""The canvas model: workspaces, nodes and arrows (SPEC §1).

networkx holds the graph in memory; sqlite-utils persists it in the app's one
SQLite file. This package never imports textual, rich or the TUI.
"""

from __future__ import annotations

from .db import open_database, write_transaction
from .errors import CanvasError, InvalidArrow, InvalidNode
from .graph import Canvas
from .model import (
    BUILTIN_CARD_TYPES,
    BUILTIN_PORTS,
    NODE_TYPES,
    Arrow,
    Node,
    Workspace,
    WorkspaceSettings,
)
from .store import CanvasStore

__all__ = [
    "Arrow",
    "BUILTIN_CARD_TYPES",
    "BUILTIN_PORTS",
    "Canvas",
    "CanvasError",
    "CanvasStore",
    "InvalidArrow",
    "InvalidNode",
    "NODE_TYPES",
    "Node",
    "Workspace",
    "WorkspaceSettings",
    "open_database",
    "write_transaction",
]
