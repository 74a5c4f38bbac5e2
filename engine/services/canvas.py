"""Canvas operations (SPEC §1, §4): workspaces, their settings, nodes and arrows.

Drawing is consent: only an operator adds nodes and arrows or changes
settings. Removing (narrowing) is also accepted from agents and cards on the
same canvas. A change that takes consent away cancels the prompts and tool
calls it made impossible.
"""

from __future__ import annotations

from os import PathLike, fsencode, fspath
from pathlib import Path
from typing import Any

from canvas import Arrow, CanvasError, Node, Workspace, WorkspaceSettings, check_not_engine_kept
from engine.core.errors import InvalidArgument, InvalidArrow, InvalidRequest
from engine.core.limits import hand_over, rate_owner
from engine.core.principal import OPERATOR, Principal
from engine.core.text import shown
from engine.core.usage import added_usage
from engine.effects.world import World
from engine.services.context import Context, operation
from engine.services.guard import Guard
from engine.services.nodes import Nodes
from engine.services.prompts import Prompts
from engine.services.record import Recorder
from engine.services.tools import Tools

__all__ = ["CanvasOps"]


class CanvasOps:
    """Workspaces, nodes and arrows: the operations that draw and undraw the canvas."""

    def __init__(self, ctx: Context, guard: Guard, nodes: Nodes, record: Recorder,
                 prompts: Prompts, tools: Tools, world: World) -> None:
        self.ctx = ctx
        self.world = world
        self.guard = guard
        self.nodes = nodes
        self.record = record
        self.prompts = prompts
        self.tools = tools

    def _revalidate(self) -> None:
        """Cancel the prompts and tool calls a narrowing made impossible (SPEC §4.3),
        and end the file watches of cards removed."""
        self.prompts.revalidate()
        self.tools.revalidate()
        self.world.narrowed(self.ctx.state)

    async def open_workspace(self, workspace_id: str, folder: str | Path, *,
                             settings: dict[str, Any] | WorkspaceSettings | None = None,
                             by: object = OPERATOR) -> Workspace:
        """The workspace ``workspace_id``, created as `create_workspace` does if missing.

        Opening an existing workspace changes nothing (``settings`` are used only
        to create it; change them with `set_settings`), so a program that runs
        twice may call this every time.

        Raises:
            InvalidRequest: the workspace exists with another project folder, or
                (to create it) as `create_workspace`.
        """
        self.ctx.sync()
        if type(workspace_id) is not str:  # not looked up: it may not even hash
            self.nodes.check_id("workspace", workspace_id)
        ws = self.ctx.state.workspaces.get(workspace_id)
        if ws is None:
            return await self.create_workspace(workspace_id, folder, settings=settings, by=by)
        if Path(ws.folder) != Path(folder):
            raise InvalidArgument(f"workspace {workspace_id!r} exists with the "
                                  f"project folder {ws.folder!r}, not {str(folder)!r}",
                                  reason="folder")
        return ws

    @operation
    async def create_workspace(self, workspace_id: str, folder: str | Path, *,
                               settings: dict[str, Any] | WorkspaceSettings | None = None,
                               by: object = OPERATOR) -> Workspace:
        """Create a workspace with its project folder and settings.

        Raises:
            InvalidRequest: the id is taken (use `open_workspace` to open or
                create), or the folder is not an absolute path of an existing
                folder (reason ``folder``).
        """
        subject = {"workspace": workspace_id}
        principal = self.guard.require_operator(by, "workspace.create", subject)
        self.check_new_workspace(workspace_id, folder)
        try:
            ws_settings = settings if isinstance(settings, WorkspaceSettings) else \
                WorkspaceSettings.from_dict(settings or {})
        except CanvasError as exc:
            raise self.nodes.canvas_error(exc) from exc
        ws = Workspace(workspace_id, str(folder), ws_settings)
        with self.ctx.write():
            self.put_workspace(ws, principal, "workspace.create", subject)
        return ws

    def check_new_workspace(self, workspace_id: str, folder: str | Path) -> None:
        """Raise InvalidRequest unless the id is free and clean and the folder absolute."""
        self.nodes.check_id("workspace", workspace_id)
        if workspace_id in self.ctx.state.workspaces:
            raise InvalidArgument(f"workspace {workspace_id!r} exists", reason="workspace")
        if not isinstance(folder, str | PathLike) or not isinstance(fspath(folder), str):
            raise InvalidArgument(f"the project folder must be a path, not {shown(folder)}",
                                  reason="folder")
        raw = fsencode(folder)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            # Neither store keeps a name that is not text; a link to the folder with a
            # UTF-8 name is the way to use it.
            named = raw.decode("utf-8", "backslashreplace")
            raise InvalidArgument(f"the project folder '{named}' is not UTF-8 text; "
                                  "give a link to it whose path is", reason="folder") from None
        if not Path(folder).is_absolute():
            raise InvalidArgument(f"the project folder {str(folder)!r} must be "
                                  "an absolute path", reason="folder")
        if not Path(folder).is_dir():
            # A typo must not become a workspace whose every file call fails later.
            raise InvalidArgument(f"the project folder {str(folder)!r} does "
                                  "not exist (or is not a folder)", reason="folder")

    def put_workspace(self, ws: Workspace, principal: Principal, action: str,
                       subject: dict[str, Any]) -> None:
        """Save a workspace (inside a write) and forget decisions its settings fed."""
        self.ctx.store.save_workspace(ws)
        self.ctx.state.bump()
        self.guard.history(principal, action, subject)
        self.ctx.state.workspaces[ws.id] = ws

    @operation
    async def set_settings(self, workspace_id: str, changes: dict[str, Any], *,
                           by: object = OPERATOR) -> WorkspaceSettings:
        """Change a workspace's settings (operator only); the open prompts and tool calls
        the new settings would refuse are cancelled (SPEC §4.3)."""
        subject = {"workspace": workspace_id, "settings": changes}
        principal = self.guard.require_operator(by, "settings.change", subject)
        ws = self.nodes.workspace(workspace_id)
        try:
            settings = WorkspaceSettings.from_dict({**ws.settings.to_dict(), **changes})
        except CanvasError as exc:
            raise self.nodes.canvas_error(exc) from exc
        new = Workspace(ws.id, ws.folder, settings)
        with self.ctx.write():
            self.put_workspace(new, principal, "settings.change", subject)
            # What the checks read changed (a hop limit, max_payload): the open prompts
            # it makes impossible are cancelled now, as after a revoke, not at a
            # delivery or an approval that may never come.
            self._revalidate()
            if new.settings.budget != ws.settings.budget:
                self.prompts.forget_budget(ws.id)
        return settings

    @operation
    async def add_node(self, node: dict[str, Any], *, workspace: str,
                       by: object = OPERATOR) -> Node:
        """Put a node on a workspace's canvas (operator only)."""
        subject = {"workspace": workspace, "node": node.get("id")}
        principal = self.guard.require_operator(by, "node.add", subject)
        self.nodes.workspace(workspace)
        try:
            # A spawn sets who spawned a node (`World.spawn`); a person's add never does.
            check_not_engine_kept(node.get("id"), node)
            built = Node.build(node, workspace)
            self.ctx.state.canvas.check_new_node(built)
        except CanvasError as exc:
            raise self.nodes.canvas_error(exc) from exc
        self.nodes.check_id("node", built.id)
        with self.ctx.write():
            # Only when time stands still: the history is read then alone.
            if self.ctx.clock.standing() and \
                    built.id in self.ctx.store.history.replaced_nodes(0):
                self.made_after_its_past()
            self.nodes.persist(built)
            self.guard.history(principal, "node.add", subject)
            self.ctx.state.canvas.add_node(built)
            self.nodes.agents_changed(built, "added")
        return built

    @operation
    async def set_node(self, node_id: str, fields: dict[str, Any], *,
                       by: object = OPERATOR) -> Node:
        """Change fields of a node (operator only), e.g. ``{"dangerous": True}``."""
        subject = {"node": node_id, "fields": fields}
        principal = self.guard.require_operator(by, "node.set", subject)
        try:
            updated = self.ctx.state.canvas.updated_node(node_id, fields)
        except CanvasError as exc:
            raise self.nodes.canvas_error(exc) from exc
        old = self.ctx.state.canvas.node(node_id)
        # Another package makes the card anew (`engine.service.made.Made`): its
        # making is recorded after what the change does to the earlier card (its
        # prompts and tool calls cancelled, rows of the earlier card's), and
        # stamped past them.
        anew = "package" in fields
        with self.ctx.write():
            self.nodes.persist(updated)
            if not anew:
                self.guard.history(principal, "node.set", subject)
            self.ctx.state.canvas.replace_node(updated)
            self.nodes.agents_changed(updated, "updated")
            if old is not None:
                self.nodes.content_changed(old, updated)  # a person's edit of a note
            self._revalidate()
            self.prompts.pump_all()
            if anew:
                self.made_after_its_past()
                self.guard.history(principal, "node.set", subject)
        return updated

    def made_after_its_past(self) -> None:
        """Stamp the node being made anew under its id (inside the write, caught up)
        strictly after everything before it: what the node reads begins at its
        making (`engine.service.made.Made`, rows ``t >= made``), and time standing
        still (SPEC §6) would stamp the earlier node's last rows with that time too."""
        self.ctx.clock.past()

    @operation
    async def remove_node(self, node_id: str, *, by: object = OPERATOR) -> None:
        """Remove a node and its arrows (operator only); prompts queued or held on them
        are cancelled, and so are those a removed agent was working on.

        Not a narrowing that a card or agent on the canvas may make, as removing
        an arrow is (SPEC §4.5 names revoking and removing arrows): a node is
        what a person put on the canvas — an agent, a terminal, another
        package's card, a note's text — and removing it destroys that as well.
        So it is the person's, as adding one is.
        """
        subject = {"node": node_id}
        principal = self.guard.require_operator(by, "node.remove", subject)
        node = self.nodes.node(node_id)
        with self.ctx.write():
            owner = rate_owner(self.ctx.state.canvas, node_id)
            spawned = [n for n in self.ctx.state.canvas.nodes(node.workspace)
                       if n.data.get("spawned_by") == node_id]
            self.ctx.store.delete_node(node_id)
            if node.type in ("card", "agent"):
                # Its service tokens go with it: a token names a node by its id,
                # and must not act as a node added later with the same id.
                self.ctx.store.revoke_tokens(f"{node.type}:{node_id}", self.ctx.now())
            self.ctx.state.canvas.remove_node(node_id)
            self._hand_on_spawned(node_id, owner, spawned)
            self.nodes.agents_changed(node, "removed")
            if node.type == "agent":
                self.prompts.agent_removed(node_id)
            # What memory keeps for the node goes with it (`Context.on_gone`).
            self.ctx.gone("here")
            self._revalidate()
            self.prompts.pump_all()
            # Recorded after what the removal does (its prompts cancelled): a node
            # under the id made later by no entry (by hand) reads from just after
            # it (`engine.store.base.History.remade`), none of these rows.
            self.guard.history(principal, "node.remove", subject)

    def _hand_on_spawned(self, removed: str, owner: str, spawned: list[Node]) -> None:
        """Keep a removed node's spawn tree whole without its id (inside a write):
        the rule is `hand_over`'s."""
        plan = hand_over(removed, owner, [(n.id, n.type) for n in spawned])
        by_id = {n.id: n for n in spawned}
        for node_id, spawner in plan.spawners:
            self._set_spawner([by_id[node_id]], spawner)
        if not plan.root:
            return
        if plan.heir is None:
            # In the store too: a reload (restart, another process) must not
            # hand a removed card's windows to a new node with its id.
            self.record.forget_windows(removed)
        else:
            self.record.move_windows(removed, plan.heir)

    def _set_spawner(self, spawned: list[Node], spawner: str | None) -> None:
        """Point nodes at a new spawner (None: spawned by no one now)."""
        for node in spawned:
            data = {k: v for k, v in node.data.items() if k != "spawned_by"}
            if spawner is not None:
                data["spawned_by"] = spawner
            moved = Node(node.id, node.type, node.workspace, data)
            self.nodes.persist(moved)
            self.ctx.state.canvas.replace_node(moved)

    @operation
    async def add_arrow(self, arrow: dict[str, Any], *, by: object = OPERATOR) -> Arrow:
        """Draw an arrow (operator only). Invalid arrows raise INVALID_ARROW and change nothing."""
        subject = {"arrow": arrow.get("id"), "from": arrow.get("from"), "to": arrow.get("to")}
        principal = self.guard.require_operator(by, "arrow.add", subject)
        try:
            checked = self.ctx.state.canvas.check_arrow(arrow)
            self.nodes.check_id("arrow", checked.id)
        except CanvasError as exc:
            raise self.guard.refuse(principal, "arrow.add", subject, self.nodes.canvas_error(exc)) from exc
        except InvalidRequest as exc:
            raise self.guard.refuse(principal, "arrow.add", subject, exc) from exc
        with self.ctx.write():
            self.ctx.store.save_arrow(checked)
            self.guard.history(principal, "arrow.add", subject)
            self.ctx.state.canvas.add_arrow(checked)
        return checked

    @operation
    async def remove_arrow(self, arrow_id: str, *, by: object = OPERATOR) -> None:
        """Remove an arrow; prompts queued or held on it are cancelled (not-connected)."""
        arrow = self.ctx.state.canvas.arrow(arrow_id)
        subject = {"arrow": arrow_id}
        # Who asks, first: to a card or agent an arrow that does not exist is one
        # not on its canvas (refused alike, and recorded), so that it learns
        # nothing of what other canvases hold (SPEC §5).
        principal = self.guard.require_narrowing(by, "arrow.remove", subject,
                                                 () if arrow is None else arrow.workspace)
        if arrow is None:
            raise InvalidArrow(f"no arrow {arrow_id!r}", reason="missing-arrow")
        with self.ctx.write():
            self.ctx.store.delete_arrow(arrow_id)
            self.guard.history(principal, "arrow.remove", subject)
            self.ctx.state.canvas.remove_arrow(arrow_id)
            self._revalidate()

    @operation
    async def record_usage(self, workspace: str, tokens: int, cost: float) -> None:
        """Add token usage and cost to a workspace (what ``usage.get`` reports).

        Raises:
            NotFound: there is no such workspace.
            InvalidArgument: ``tokens`` or ``cost`` is not a count or amount from 0,
                or the totals would overflow (`added_usage`); nothing is changed.
        """
        if not isinstance(workspace, str):
            raise InvalidArgument(f"a workspace id is text, not {workspace!r}",
                                  reason="workspace")
        self.nodes.workspace(workspace)
        totals = added_usage(self.ctx.state.usage.get(workspace, (0, 0.0)), tokens, cost)
        with self.ctx.write():
            self.ctx.store.save_usage(workspace, *totals)
            self.ctx.state.usage[workspace] = totals
