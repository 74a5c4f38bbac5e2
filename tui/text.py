"""Strings from cards, agents, manifests and the log, shown only as text (SPEC §7).

Every such string reaches the screen through `plain` (or `visible` where a
widget wants a `str`): it is never read as Rich or Textual markup, and each
control character is drawn as a visible symbol instead of being sent to the
terminal. An escape sequence in a card's prompt (``\\x1b[2J`` clears the
screen, ``\\x1b]0;…\\x07`` retitles the window) would otherwise act on the
operator's terminal, and a ``[/bold]`` would crash or restyle the view.

The symbols: C0 controls as their Unicode control pictures (``␛``, ``␇``,
``␍``, ...), DEL as ``␡``, C1 controls, bidirectional overrides and other
invisible format characters, lone surrogates and line separators as
``⟨U+XXXX⟩``. They are styled (reverse video) so a card cannot pass off the
literal character ``␛`` as an escape, nor an escape as the literal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.style import Style
from rich.text import Text

# `quoted` and `ident` are the engine's, which its command line's texts use too (one
# rule for where an id is quoted); the TUI re-exports them.
from engine.core.text import ident, is_control, quoted

__all__ = ["CONTROL_STYLE", "ROW_TEXT", "Ended", "fit", "ident", "plain", "plain_lines",
           "preview", "quoted", "short_id", "visible"]

#: How a made-visible control character is drawn.
CONTROL_STYLE = Style(reverse=True)

# What is not printable ASCII is looked at (`is_control`, the engine's one
# definition of what may restyle or hide text, which the command line's hold
# approval and manifest validation use too); most text is ASCII and skips it.
_NOT_ASCII = re.compile("[^\x20-\x7e]")


def _symbol(char: str, *, multiline: bool) -> str | None:
    """The visible form of one unsafe character; None to keep it as it is."""
    code = ord(char)
    if multiline and char == "\n":
        return None
    if multiline and char == "\t":
        return None  # expanded to spaces by the renderer, never sent raw
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"⟨U+{code:04X}⟩"


def _pieces(value: str, *, multiline: bool) -> list[tuple[str, bool]]:
    """``value`` cut into (text, is_a_made_visible_control) pieces."""
    pieces: list[tuple[str, bool]] = []
    start = 0
    for match in _NOT_ASCII.finditer(value):
        if not is_control(match.group()):
            continue
        symbol = _symbol(match.group(), multiline=multiline)
        if symbol is None:
            continue
        if match.start() > start:
            pieces.append((value[start:match.start()], False))
        pieces.append((symbol, True))
        start = match.end()
    if start < len(value):
        pieces.append((value[start:], False))
    return pieces


def visible(value: object, *, multiline: bool = False) -> str:
    """``value`` as a string with every control character replaced by a visible symbol.

    Args:
        value: any value; it is turned into a string with ``str``.
        multiline: keep line breaks and tabs (for a prompt's full text); a
            one-line cell shows a line break as ``␊``.
    """
    text = value if isinstance(value, str) else str(value)
    if not _NOT_ASCII.search(text) or not any(map(is_control, text)):
        return text
    return "".join(piece for piece, _control in _pieces(text, multiline=multiline))


def plain(value: object, *, multiline: bool = False, style: Style | str = "") -> Text:
    """``value`` as inert `rich.text.Text`: no markup, controls drawn visibly and styled.

    Args:
        value: any value; it is turned into a string with ``str``.
        multiline: keep line breaks and tabs (a prompt's full text).
        style: the style of the whole text.
    """
    raw = value if isinstance(value, str) else str(value)
    if not _NOT_ASCII.search(raw):
        return Text(raw, style=style, end="")
    text = Text(style=style, end="")
    for piece, control in _pieces(raw, multiline=multiline):
        text.append(piece, CONTROL_STYLE if control else None)
    return text


def plain_lines(lines: Iterable[str]) -> Text:
    """Lines the TUI wrote, as inert `rich.text.Text`: each stays one line.

    A line break inside one of them (an id or a name quoted in it) is drawn
    as ``␊``, so no quoted text adds a line that reads as the TUI's own.
    """
    return Text("\n", end="").join(plain(line) for line in lines)


@dataclass(frozen=True)
class Ended:
    """A one-line text whose ending stays in view when it is cut to fit: a list's cell
    cuts ``head`` (with "…"), never ``ending`` (`tui.widgets.fitted_table.cut`)."""

    #: What may be cut.
    head: Text
    #: What stays, after it (may be empty).
    ending: Text

    @property
    def cell_len(self) -> int:
        """Terminal cells of the whole."""
        return self.head.cell_len + self.ending.cell_len

    def whole(self) -> Text:
        """Head and ending as one `Text`."""
        return Text.assemble(self.head, self.ending, end="")


#: The characters of a text's first line a list's row holds (`preview`): the list cuts
#: them to its column's share of the width, so a wider screen shows more of them. Cut at
#: 40 before, prompts that differ after their 40th character read the same on any screen.
ROW_TEXT = 400


def preview(text: str, length: int) -> Ended:
    """The start of a card's text for a list's one-line cell, saying when it goes on.

    Its first line, cut at line feeds alone: every other character that may end a line
    (a carriage return, U+0085, U+2028, ...) is drawn as its symbol (`plain`), never
    taken for the end of the text. Cut at ``length`` characters with ``…``, and with
    the number of its lines when it has more than one, so no part of a text reads as
    the whole of it. The number is the `Ended` ending: a list that cuts the cell to
    its column cuts the text before it, so the row still says how long the text is.
    """
    first = text.split("\n", 1)[0]
    lines = text.count("\n") + 1
    shown = plain(first[:length])
    if len(first) > length or lines > 1:
        shown.append(" …")
    return Ended(shown, Text(f" ({lines} lines)" if lines > 1 else "", end=""))


def short_id(value: str, width: int, *, also: str = "") -> str:
    """An id as `quoted` (with ``also``) writes it, made `visible`, in at most ``width``
    terminal cells (at least 4): whole, or cut with ``…``; a quoted id is cut inside
    its quotes (``"abc…"``), so that it still reads as one id, and cut, rather than
    as an open quote running on into what follows; nor does the cut leave a
    backslash escaping the closing quote."""
    label = visible(quoted(value, also=also))
    if cell_len(label) <= width:
        return label
    if not label.startswith('"') or quoted(value, also=also) == value:
        return set_cell_size(label, width - 1) + "…"
    room = width - 3  # the two quotes and the "…"
    kept, used = [], 0
    for char in label[1:-1]:
        used += cell_len(char)
        if used > room:
            break
        kept.append(char)
    inner = "".join(kept)
    if (len(inner) - len(inner.rstrip("\\"))) % 2:
        inner = inner[:-1]  # half of an escape (\\ or \"): it would escape the "…"
    return '"' + inner + '…"'


def fit(text: str, width: int) -> str:
    """``text`` cut and padded to exactly ``width`` terminal cells, ``…`` where it was cut.

    Cells, not characters: an East Asian wide character takes two cells and a
    combining mark none, so a column cut or padded by ``len`` is as wide as
    the text is ASCII. A card's text with wide or zero-width characters would
    shift every column after its own, and put its own words under the next
    column's heading (``approved`` under "outcome").
    """
    if cell_len(text) < width:
        return set_cell_size(text, width)
    # Two cells kept for the ellipsis and the space that separates the columns.
    return set_cell_size(text, max(0, width - 2)) + "… "[:max(0, width)]
