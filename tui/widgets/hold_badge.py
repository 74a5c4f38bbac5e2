"""The header badge: how many prompts wait for a person, on every screen."""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static

__all__ = ["HoldBadge"]


class HoldBadge(Static):
    """Shows ``⚑ N held`` (highlighted while any prompt waits)."""

    count: reactive[int] = reactive(0)

    def on_mount(self) -> None:
        self.watch(self.app, "pending_holds", self._follow, init=True)

    def _follow(self, count: int) -> None:
        self.count = count

    def watch_count(self, count: int) -> None:
        self.set_class(count > 0, "-pending")
        self.update(f"⚑ {count} held" if count else "no holds")
