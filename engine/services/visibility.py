"""Which cards run while their workspace is hidden (SPEC §8 "Background")."""

from __future__ import annotations

from canvas import Node
from engine.core.background import background_status
from engine.services.context import Context, Gone
from engine.services.nodes import Nodes

__all__ = ["Visibility"]


class Visibility:
    """Hidden workspaces and when each card was last on screen (kept in memory only).

    Two times per card: ``_seen``, until when it was on screen (its workspace shown, or
    `card_seen`), and ``_looked``, when the person last looked at the card itself
    (`card_seen`), which orders cards that left the screen together.
    """

    def __init__(self, ctx: Context, nodes: Nodes) -> None:
        self.ctx = ctx
        self.nodes = nodes
        self._hidden: set[str] = set()
        self._seen: dict[str, float] = {}
        self._looked: dict[str, float] = {}
        ctx.on_gone(self._let_go)

    def _let_go(self, _how: Gone) -> None:
        """Nodes left the canvas: their times go (a card added later under one's id
        has not been seen)."""
        live = self.ctx.state.canvas.has_node
        for times in (self._seen, self._looked):
            for card in [c for c in times if not live(c)]:
                del times[card]

    def set_workspace_hidden(self, workspace: str, hidden: bool) -> dict[str, str]:
        """Hide or show a workspace; returns every card's run status (see `background`)."""
        self.nodes.workspace(workspace)
        # A workspace's cards are on screen until the moment it is hidden, so hiding a
        # shown workspace marks them seen now; hiding it again changes nothing.
        if workspace not in self._hidden or not hidden:
            self._mark_seen(workspace)
        if hidden:
            self._hidden.add(workspace)
        else:
            self._hidden.discard(workspace)
        return self.background()

    def on_screen(self, card: Node) -> bool:
        """Whether the card is on screen now (SPEC §4.2): shown by the app and
        its workspace not hidden.

        A hidden workspace's cards left the screen the moment it was hidden
        (`set_workspace_hidden` marks them seen then), whatever their own
        ``visible`` flag, which says how the card sits on its canvas.
        """
        return bool(card.data.get("visible")) and card.workspace not in self._hidden

    def _mark_seen(self, workspace: str) -> None:
        now = self.ctx.now()
        for card in self.ctx.state.canvas.nodes(workspace, type="card"):
            self._seen[card.id] = now

    def card_seen(self, card: str) -> None:
        """The card was on screen now (for least-recently-seen suspension)."""
        now = self.ctx.now()
        self._seen[card] = now
        self._looked[card] = now

    def background(self) -> dict[str, str]:
        """Each card's status: ``running``, ``background`` (hidden, one of 8) or ``suspended``."""
        return dict(background_status(self.ctx.state, self._hidden, self._seen, self._looked))
