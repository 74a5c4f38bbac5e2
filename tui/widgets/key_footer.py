"""The footer every screen shows: its own keys first, the way to the help always.

Textual's `Footer` lists the focused widget's keys, the screen's, then the app's, and
cuts the row at the terminal's edge: at 80 columns the canvas's and the log's own keys
filled the row and "? Help" was cut off, so a person could not see how to get help
(nor that the row went on). Here the row is the screen's keys, then the help key,
then the app's other keys, and only keys that fit whole are shown: the help key
always, the others in that order while they fit. The help (and the palette, ``^p``,
shown on the right as Textual shows it) lists every key left out.

Textual recomposes the footer (removes every key and mounts new ones) on each change of
the screen's bindings, which a person causes with every move of the focus, and measuring
a key renders it: here the row is recomposed only when the keys it would show changed,
and each key's text is measured once.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.geometry import Spacing
from textual.widgets import Footer

# Not exported by textual.widgets; Textual is pinned (8.2.8), so its place is known.
from textual.widgets._footer import FooterKey

__all__ = ["KeyFooter"]

#: The id of the binding that opens the help (`tui.app.ArrowgateApp`).
HELP_ID = "app.help"


class KeyFooter(Footer):
    """A `Footer` that shows the help key at every width.

    arrowgate's bindings use no binding groups (which Footer composes into groups of
    their own), so every key is one `FooterKey`, the palette's one too.
    """

    def __init__(self) -> None:
        super().__init__()
        #: What the keys shown were composed from (`_composed_from`); None before the first.
        self._shown_from: tuple[object, ...] | None = None
        #: The cells of a key's text (rendered once), by its text and its paddings.
        self._text_widths: dict[tuple[str, str, Spacing, Spacing], int] = {}

    def compose(self) -> ComposeResult:
        # Footer's keys: the focused widget's and the screen's, then the app's (one per
        # action), then the palette's; the help key is moved to the end of the screen's.
        keys = list(super().compose())
        active = self.screen.active_bindings.values()
        app_actions = {binding.action for namespace, binding, _on, _tip in active
                       if namespace is self.app}
        help_actions = {binding.action for _node, binding, _on, _tip in active
                        if binding.id == HELP_ID}
        helps = [key for key in keys if isinstance(key, FooterKey)
                 and key.action in help_actions]
        for key in helps:
            key.add_class("-help")
        rest = [key for key in keys if key not in helps]
        first_app = next((n for n, key in enumerate(rest) if isinstance(key, FooterKey)
                          and (key.action in app_actions
                               or key.has_class("-command-palette"))), len(rest))
        yield from rest[:first_app] + helps + rest[first_app:]

    def _composed_from(self) -> tuple[object, ...]:
        """Everything `compose` reads: whether the bindings are ready and the palette is
        shown, the screen's active bindings that are shown (the palette's too), and the
        actions of the app's and of the help's bindings (shown or not)."""
        active = self.screen.active_bindings
        return (self._bindings_ready, self.show_command_palette,
                tuple((key, binding, enabled, tooltip)
                      for key, (_node, binding, enabled, tooltip) in active.items()
                      if binding.show or key == self.app.COMMAND_PALETTE_BINDING),
                frozenset(binding.action for node, binding, _on, _tip in active.values()
                          if node is self.app),
                frozenset(binding.action for _node, binding, _on, _tip in active.values()
                          if binding.id == HELP_ID))

    async def recompose(self) -> None:
        if not self.is_attached or self._pruning:
            # As Textual's: a dialog's footer is called after the dialog closed, and its
            # screen's bindings are not to be read then (nor their checks, which read the
            # dialog's widgets, being removed).
            return
        # A change of the focus changes the screen's bindings, but mostly not the keys
        # shown (a table's keys are the same on the next table): keep those on screen.
        shown_from = self._composed_from()
        if shown_from == self._shown_from:
            return
        await super().recompose()
        if self.is_attached:
            self._shown_from = shown_from
        self.fit()

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        """Show the keys that fit whole in the footer's width: the help key first, then
        the others in their order; hide the rest (none is cut at the edge)."""
        width = self.size.width
        keys = [key for key in self.query_children(FooterKey)
                if not key.has_class("-command-palette")]
        if not width or not keys:
            return  # not laid out yet: the resize that lays it out fits it
        room = width - sum(self._width(key) for key in self.query_children(FooterKey)
                           if key.has_class("-command-palette"))
        room -= sum(self._width(key) for key in keys if key.has_class("-help"))
        for key in keys:
            if key.has_class("-help"):
                key.display = True
                continue
            key_width = self._width(key)
            fits = key_width <= room
            key.display = fits
            if fits:
                room -= key_width
            else:
                room = 0  # no later key is shown past one left out: the order is kept

    def _width(self, key: FooterKey) -> int:
        """The cells ``key`` takes in the row: its text and its margins.

        The text's cells are what `FooterKey.render` draws: its key and description, each
        within its component's padding; measuring renders the key, so it is done once a
        text (the keys recomposed are new widgets, with the same texts).
        """
        text = (key.key_display, key.description,
                key.get_component_styles("footer-key--key").padding,
                key.get_component_styles("footer-key--description").padding)
        cells = self._text_widths.get(text)
        if cells is None:
            cells = self._text_widths[text] = key.get_content_width(key.size, key.size)
        return cells + key.styles.gutter.width + key.styles.margin.width
