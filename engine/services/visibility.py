"""Which cards run while their workspace is hidden (SPEC §8 "Background")."""

from __future__ import annotations

from engine.core.background import background_status
from engine.services.context import Context
from engine.services.nodes import Nodes

__all__ = ["Visibility"]


class Visibility:
    """Hidden workspaces and when each card was last on screen (kept in memory only)."""

    def __init__(self, ctx: Context, nodes: Nodes) -> None:
        self.ctx = ctx
        self.nodes = nodes
        self._hidden: set[str] = set()
        self._seen: dict[str, float] = {}

    def set_workspace_hidden(self, workspace: str, hidden: bool) -> dict[str, str]:
        """Hide or show a workspace; returns every card's run status (see `background`)."""
        self.nodes.workspace(workspace)
        now = self.ctx.now()
        if hidden:
            self._hidden.add(workspace)
        else:
            self._hidden.discard(workspace)
        for card in self.ctx.state.canvas.nodes(workspace, type="card"):
            if not hidden or workspace not in self._hidden:
                self._seen[card.id] = now
        return self.background()

    def card_seen(self, card: str) -> None:
        """The card was on screen now (for least-recently-seen suspension)."""
        self._seen[card] = self.ctx.now()

    def background(self) -> dict[str, str]:
        """Each card's status: ``running``, ``background`` (hidden, one of 8) or ``suspended``."""
        return dict(background_status(self.ctx.state, self._hidden, self._seen))
