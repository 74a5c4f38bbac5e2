"""Schema of the canvas tables; it evolves only through these migrations."""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

__all__ = ["migrations"]

migrations = Migrations("canvas")


@migrations()
def m001_canvas(db: Database) -> None:
    """Workspaces, nodes and arrows."""
    db.table("workspaces").create({"id": str, "folder": str, "settings": str}, pk="id")
    db.table("nodes").create(
        {"id": str, "workspace": str, "type": str, "data": str, "position": int}, pk="id"
    )
    db.table("nodes").create_index(["workspace"])
    db.table("arrows").create(
        {"id": str, "workspace": str, "src": str, "dst": str, "from_port": str, "to_port": str},
        pk="id",
    )
    db.table("arrows").create_index(["workspace"])


@migrations()
def m002_node_position_index(db: Database) -> None:
    """Index the insertion order, so adding a node does not scan the whole canvas."""
    db.table("nodes").create_index(["position"])
