"""The footer every screen shows: its own keys first, the way to the help always.

Textual's `Footer` lists the focused widget's keys, the screen's, then the app's, and
cuts the row at the terminal's edge: at 80 columns the canvas's and the log's own keys
filled the row and "? Help" was cut off, so a person could not see how to get help
(nor that the row went on). Here the row is the screen's keys, then the help key,
then the app's other keys, and only keys that fit whole are shown: the help key
always, the others in that order while they fit. The help (and the palette, ``^p``,
shown on the right as Textual shows it) lists every key left out.
"""

from __future__ import annotations

from textual.app import ComposeResult
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

    async def recompose(self) -> None:
        await super().recompose()
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
        room = width - sum(_width(key) for key in self.query_children(FooterKey)
                           if key.has_class("-command-palette"))
        room -= sum(_width(key) for key in keys if key.has_class("-help"))
        for key in keys:
            if key.has_class("-help"):
                key.display = True
                continue
            fits = _width(key) <= room
            key.display = fits
            if fits:
                room -= _width(key)
            else:
                room = 0  # no later key is shown past one left out: the order is kept


def _width(key: FooterKey) -> int:
    """The cells ``key`` takes in the row: its text and its margins."""
    return key.get_content_width(key.size, key.size) + key.styles.gutter.width \
        + key.styles.margin.width
