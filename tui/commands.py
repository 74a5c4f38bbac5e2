"""The command palette: "area: verb" commands, the common ones offered at once."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

__all__ = ["ArrowgateCommands", "COMMANDS"]

#: (name, help, mode to switch to or None, action to run on that screen or app).
COMMANDS: tuple[tuple[str, str, str | None, str], ...] = (
    ("hold: approve", "Approve the selected held prompt", "holds", "approve"),
    ("hold: reject", "Reject the selected held prompt", "holds", "reject"),
    ("grant: revoke", "Revoke the selected permission of the selected package", "grants",
     "revoke"),
    ("package: approve update", "Review the widening diff and approve a pending version",
     "grants", "approve_update"),
    ("package: review install", "The install review of the selected package", "grants",
     "review"),
    ("arrow: open log", "The log of the selected arrow or card", "canvas", "open_log"),
    ("arrow: preview wiring", "What the selected card could cause once wired", "canvas",
     "preview"),
    ("log: filter", "Filter the arrow log", "log", "focus_filter"),
    ("log: verify chain", "Check the arrow log's hash chain and anchor", "log", "verify"),
    ("screen: canvas", "Nodes, arrows and reach", "canvas", ""),
    ("screen: arrow log", "Every decision, newest last", "log", ""),
    ("screen: holds", "Prompts waiting for a person", "holds", ""),
    ("screen: packages and grants", "Packages, permissions, consent history", "grants", ""),
    ("help: key bindings", "Every binding and its id", None, "help"),
)
_DISCOVER = ("hold: approve", "hold: reject", "grant: revoke", "arrow: open log",
             "screen: holds", "log: verify chain")


class ArrowgateCommands(Provider):
    """Commands of every screen, reachable from anywhere."""

    def _runner(self, mode: str | None, action: str) -> Callable[[], None]:
        return partial(self._run, mode, action)

    def _run(self, mode: str | None, action: str) -> None:
        app = self.app
        if mode is not None and app.current_mode != mode:
            app.switch_mode(mode)
        if action:
            target = app if mode is None else app.screen
            app.call_later(target.run_action, action)

    async def discover(self) -> Hits:
        for name, help_text, mode, action in COMMANDS:
            if name in _DISCOVER:
                yield DiscoveryHit(name, self._runner(mode, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, mode, action in COMMANDS:
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), self._runner(mode, action),
                          help=help_text)
