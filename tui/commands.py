"""The command palette: "area: verb" commands, the common ones offered at once."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.binding import Binding
from textual.command import CommandList, CommandPalette, DiscoveryHit, Hit, Hits, Provider
from textual.message import Message
from textual.widgets.option_list import DuplicateID, OptionDoesNotExist

__all__ = ["COMMANDS", "ArrowgateCommands", "GuardedCommandPalette"]

#: What Textual's option list raises when typing outruns its updates.
_PALETTE_ERRORS = (DuplicateID, OptionDoesNotExist, IndexError)

#: (name, help, mode to switch to or None, action to run on that screen or app).
COMMANDS: tuple[tuple[str, str, str | None, str], ...] = (
    ("hold: approve", "Approve the selected held prompt", "holds", "approve"),
    ("hold: reject", "Reject the selected held prompt", "holds", "reject"),
    ("grant: revoke", "Revoke the selected permission of the selected package", "grants",
     "revoke"),
    ("grant: grant", "Grant the selected optional or revoked permission of the selected "
     "package", "grants", "grant"),
    ("request: answer", "Answer a card's request for an optional permission", "canvas",
     "answer_request"),
    ("package: approve update", "Review the widening diff and approve a pending version",
     "grants", "approve_update"),
    ("package: review install", "The install review of the selected package", "grants",
     "review"),
    ("package: remove offered", "Withdraw the selected offered (not installed) package",
     "grants", "remove_package"),
    ("arrow: open log", "The log of the selected arrow or card", "canvas", "open_log"),
    ("arrow: preview wiring", "What the selected card could cause once wired", "canvas",
     "preview"),
    ("log: filter", "Filter the arrow log", "log", "focus_filter"),
    ("log: copy row", "Copy the selected row as JSON", "log", "copy_row"),
    ("log: copy payload", "Copy only the selected row's payload, as text", "log",
     "copy_payload"),
    ("log: export", "Write the filtered rows to a JSON Lines file", "log", "export"),
    ("log: verify chain", "Check the arrow log's hash chain and anchor", "log", "verify"),
    ("screen: canvas", "Nodes, arrows and reach", "canvas", ""),
    ("screen: arrow log", "Every decision, newest last", "log", ""),
    ("screen: holds", "Prompts waiting for a person", "holds", ""),
    ("screen: packages and grants", "Packages, permissions, consent history", "grants", ""),
    ("screen: prompts and replies", "Every prompt's state and the agent's reply", "prompts", ""),
    ("help: key bindings", "Every binding and its id", None, "help"),
)
_DISCOVER = ("hold: approve", "hold: reject", "grant: revoke", "arrow: open log",
             "screen: holds", "log: verify chain")


class ArrowgateCommands(Provider):
    """Commands of every screen, reachable from anywhere."""

    def _key(self, mode: str | None, action: str) -> str:
        """The key that runs ``action`` on ``mode``'s screen (or the app), as remapped."""
        app: Any = self.app
        owner = app.MODES.get(mode) if mode is not None else type(app)
        wanted = action or f"switch_mode('{mode}')"
        keymap = getattr(app, "_keymap", {}) or {}
        for source in ([owner] if action else []) + [type(app)]:
            for binding in getattr(source, "BINDINGS", ()):
                if isinstance(binding, Binding) and binding.action == wanted:
                    return str(keymap.get(binding.id, binding.key)) if binding.id \
                        else binding.key
        return ""

    def _help(self, help_text: str, mode: str | None, action: str) -> str:
        # Textual reads a hit's help as markup: no square brackets in it.
        key = self._key(mode, action).replace("[", "(").replace("]", ")")
        return f"{help_text} · key {key}" if key else help_text

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
                yield DiscoveryHit(name, self._runner(mode, action),
                                   help=self._help(help_text, mode, action))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, mode, action in COMMANDS:
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), self._runner(mode, action),
                          help=self._help(help_text, mode, action))


class GuardedCommandPalette(CommandPalette):
    """Textual's palette, guarded against its option list's errors on fast typing.

    Typing fast in the palette can hand Textual's `OptionList` a batch of
    results that no longer fits the list (duplicate ids, an index past the
    end; textual issue 3714), which would end the app. Here such an error
    empties the list, which the next key press fills again.
    """

    def _refresh_command_list(self, command_list: CommandList, commands: list[Any],
                              clear_current: bool) -> None:
        try:
            super()._refresh_command_list(command_list, commands, clear_current)
        except _PALETTE_ERRORS:
            self._reset(command_list)

    async def _on_message(self, message: Message) -> None:
        try:
            await super()._on_message(message)
        except _PALETTE_ERRORS:
            self._reset(self.query_one(CommandList))

    def _reset(self, command_list: CommandList) -> None:
        command_list.clear_options()
        self._list_visible = False
        self._hit_count = 0
