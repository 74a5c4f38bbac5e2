"""The canvas tables: workspaces, nodes and arrows (the model is `canvas`).

The methods here only write; the caller wraps them in a write of the store
(or `engine.store.database.write_transaction`) together with whatever else
the same change writes, so a change is on disk whole or not at all.
"""

from __future__ import annotations

import json
from typing import Any

from sqlite_utils import Database

from canvas.errors import InvalidSetting
from canvas.graph import Canvas, PortResolver
from canvas.model import Arrow, Node, Workspace, WorkspaceSettings
from engine.store.decoding import edited_outside, stored_object
from engine.store.encoding import dumps_sorted
from engine.store.migrations import migrations

__all__ = ["CanvasStore", "workspace_from_row"]


def workspace_from_row(row: dict[str, Any]) -> Workspace:
    """A workspace as its row in ``workspaces`` holds it.

    Raises:
        StoreFailed: reason ``bad-row``: its settings are not JSON the engine wrote,
            or a setting is out of its range (the engine checks each before saving).
    """
    settings = stored_object(row["settings"], "workspaces", row["id"], "settings")
    try:
        return Workspace(row["id"], row["folder"], WorkspaceSettings.from_dict(settings))
    except InvalidSetting as exc:
        raise edited_outside("workspaces", row["id"], str(exc)) from exc

_SCALARS = (str, int, float, bool, type(None))


class _DataCache:
    """Node data parsed from JSON, each distinct text parsed once per load.

    Only flat objects of scalars are kept: every node still gets a dict of its
    own (a shallow copy), and with nothing nested in it there is nothing the
    copies share that could be changed through one of them. The limit bounds
    the texts remembered, not the nodes: a card's data differs by package, and
    a million nodes hold 10,000 packages' worth (the cache lives for one load).
    """

    def __init__(self, limit: int = 65_536) -> None:
        self._parsed: dict[str, dict[str, Any]] = {}
        self._limit = limit

    def __call__(self, node_id: str, text: str) -> dict[str, Any]:
        cached = self._parsed.get(text)
        if cached is not None:
            return dict(cached)
        value = stored_object(text, "nodes", node_id, "data")
        if len(self._parsed) < self._limit and all(
                type(v) in _SCALARS for v in value.values()):
            self._parsed[text] = value
            return dict(value)
        return value


class CanvasStore:
    """Reads and writes workspaces, nodes and arrows in the app database.

    Opening it brings the database's schema up to date (`migrations`).
    """

    def __init__(self, db: Database) -> None:
        self.db = db
        migrations.apply(db)
        #: The cursor a changed node is written with (`save_node`: every delivered
        #: prompt changes its agent); ``conn.execute`` makes one per statement.
        self._writes = db.conn.cursor()

    def load(self, card_ports: PortResolver) -> tuple[dict[str, Workspace], Canvas]:
        """Load every workspace and the whole canvas into memory."""
        workspaces = {row["id"]: workspace_from_row(row)
                      for row in self.db.query("select * from workspaces")}
        canvas = Canvas(card_ports)
        # Plain cursors and bulk adds: this runs over every node at open. The
        # same strings (ids, types, workspaces) and the same node data recur
        # across rows; sharing one object each kept 100,000 nodes in about
        # 60 MB less and saved parsing the same JSON again and again.
        shared: dict[str, str] = {ws: ws for ws in workspaces}
        data_of = _DataCache()
        nodes = []
        # No ORDER BY here or below: nothing reads the canvas in load order
        # (`Canvas.nodes` and `Canvas.arrows` sort by id), and sorting cost a
        # third of reading the rows (an index walk plus a temporary B-tree).
        for node_id, node_type, workspace, data in self.db.execute(
                "select id, type, workspace, data from nodes"):
            shared[node_id] = node_id
            nodes.append(Node(node_id, shared.setdefault(node_type, node_type),
                              shared.setdefault(workspace, workspace), data_of(node_id, data)))
        # Arrows are restored as saved: they were checked when drawn, and a
        # card's ports may only be known once its package is loaded.
        # The columns in `Arrow`'s field order, so each row becomes one
        # arrow in a single C call: `tuple.__new__` is what a named tuple's
        # own constructor and `_make` call, less their Python frames (a third
        # of building the arrows); the six fields are always all here.
        new, get = tuple.__new__, shared.get
        arrows = [
            new(Arrow, (arrow_id, get(src, src), get(dst, dst), from_port, to_port,
                  get(workspace, workspace)))
            for arrow_id, src, dst, from_port, to_port, workspace in self.db.execute(
                "select id, src, dst, from_port, to_port, workspace from arrows")
        ]
        # The engine never deletes a workspace: a node outside every workspace was
        # left by a hand that did (its settings, limits and folder are gone).
        orphan = next((n for n in nodes if n.workspace not in workspaces), None)
        if orphan is not None:
            raise edited_outside("workspaces", orphan.workspace,
                                 f"it is gone while its node {orphan.id!r} stays")
        canvas.restore(nodes, arrows)
        return workspaces, canvas

    def save_workspace(self, ws: Workspace) -> None:
        """Insert or replace a workspace."""
        self.db.execute(
            "insert or replace into workspaces (id, folder, settings) values (?, ?, ?)",
            [ws.id, ws.folder, json.dumps(ws.settings.to_dict())],
        )

    def save_node(self, node: Node) -> None:
        """Insert or replace a node, keeping its position in insertion order."""
        # The connection's own execute: sqlite-utils' adds a layer to every
        # prompt that is delivered (the agent's node changes with it). A node
        # that changes is there already: a plain update, without the insert's
        # position look-up and its conflict (what the upsert did first).
        data = dumps_sorted(node.data)
        conn = self.db.conn
        if self._writes.execute("update nodes set data = ? where id = ?",
                                [data, node.id]).rowcount:
            return
        conn.execute(
            "insert into nodes (id, workspace, type, data, position) values (?, ?, ?, ?,"
            " (select coalesce(max(position), 0) + 1 from nodes))",
            [node.id, node.workspace, node.type, data],
        )

    def delete_node(self, node_id: str) -> None:
        """Delete a node and its arrows."""
        self.db.execute("delete from arrows where src = ? or dst = ?", [node_id, node_id])
        self.db.execute("delete from nodes where id = ?", [node_id])

    def save_arrow(self, arrow: Arrow) -> None:
        """Insert an arrow."""
        self.db.execute(
            "insert into arrows (id, workspace, src, dst, from_port, to_port)"
            " values (?, ?, ?, ?, ?, ?)",
            [arrow.id, arrow.workspace, arrow.src, arrow.dst, arrow.from_port, arrow.to_port],
        )

    def delete_arrow(self, arrow_id: str) -> None:
        """Delete an arrow."""
        self.db.execute("delete from arrows where id = ?", [arrow_id])
