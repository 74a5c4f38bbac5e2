"""A terminal screen kept by pyte: what a person would see, as text."""

from __future__ import annotations

import functools
import itertools
import logging
import re
import sys
import unicodedata

import pyte
from pyte import modes

from engine.core.text import visible

__all__ = ["CELL_MAX", "SEQUENCE_MAX", "Screen"]

_log = logging.getLogger(__name__)

#: The most characters of one escape sequence the screen gathers. pyte keeps
#: an unfinished OSC (a window title, an OSC 52 clipboard write) or CSI whole
#: until it ends: a program printing one that never does would have the
#: engine keep its output without bound. Past this, the sequence is dropped
#: and what follows is taken as text again.
SEQUENCE_MAX = 4096

#: The most characters one cell holds: a character and the zero-width ones put on
#: it (combining marks, joiners, variation selectors). pyte adds every mark a
#: program prints to the cell before the cursor and normalizes the whole cell
#: again each time: a program printing marks without end would grow one cell
#: without bound, each mark costing more than the last. Unicode's stream-safe
#: text (UAX #15) has at most 30 marks in a row; a cell keeps up to 31, and drops
#: the rest.
CELL_MAX = 32


@functools.cache
def _zero_width() -> re.Pattern[str]:
    """Runs of the characters pyte's `draw` gives no cell: those its ``wcwidth`` makes
    0 (marks, joiners, variation selectors, format characters) or -1 (controls).
    Made once, from wcwidth's own table; from every code point if that cannot be read."""
    ranges: list[tuple[int, int]] = [(0x00, 0x1F), (0x7F, 0x9F)]  # NUL, C0, DEL, C1
    try:
        from wcwidth import list_versions
        from wcwidth.table_zero import ZERO_WIDTH

        ranges += [(int(first), int(last)) for first, last in ZERO_WIDTH[list_versions()[-1]]]
    except (ImportError, LookupError, TypeError, ValueError):
        from wcwidth import wcwidth

        ranges += [(code, code) for code in range(sys.maxunicode + 1)
                   if wcwidth(chr(code)) <= 0]
    return re.compile(f"[{''.join(_range(a, b) for a, b in ranges)}]+")


def _range(first: int, last: int) -> str:
    return re.escape(chr(first)) + (f"-{re.escape(chr(last))}" if last > first else "")


def _combines(char: str) -> bool:
    """Whether a zero-width character is kept on the cell before it: a mark, a joiner
    or a variation selector is; a control, NUL or another format character (a
    direction override, a zero-width space) is shown nowhere."""
    return char > "\x9f" and (char == "\u200d" or unicodedata.category(char) != "Cf")


class _Screen(pyte.Screen):
    """pyte's screen, drawing what a terminal shows, with work and memory bounded per byte.

    pyte stops drawing a piece of output at the first zero-width character that is
    no combining mark (an emoji's variation selector, a zero-width space, a
    Devanagari or Thai vowel sign), so the rest of the line never showed; and it
    adds every mark to its cell without bound, normalizing the whole cell again for
    each. Here zero-width characters go on the cell before the cursor, as pyte puts
    marks there, up to `CELL_MAX` characters a cell (`_combines` says which are
    kept), and the text after them is drawn. DECALN fills the screen a line at a
    time, not a cell at a time (pyte's, 3,000 cells rewritten one by one for three
    bytes).
    """

    def draw(self, data: str) -> None:
        zero_width = _zero_width()
        if zero_width.search(data) is None:  # plain text, as nearly always
            super().draw(data)
            return
        at = 0
        for run in zero_width.finditer(data):
            if run.start() > at:
                super().draw(data[at:run.start()])
            self._combine(run.group())
            at = run.end()
        if at < len(data):
            super().draw(data[at:])

    def _combine(self, run: str) -> None:
        """Put the zero-width characters ``run`` on the cell before the cursor, as pyte's
        `draw` puts a mark (wrapping first at the end of a line; on the line above's
        last cell at a line's start), while the cell holds fewer than `CELL_MAX`."""
        cursor = self.cursor
        if cursor.x == self.columns and modes.DECAWM in self.mode:
            self.dirty.add(cursor.y)
            self.carriage_return()
            self.linefeed()
        if cursor.x:
            line, x = self.buffer[cursor.y], cursor.x - 1
        elif cursor.y:
            line, x = self.buffer[cursor.y - 1], self.columns - 1
        else:
            return
        last = line[x]
        room = CELL_MAX - len(last.data)
        if room > 0:
            kept = "".join(itertools.islice(filter(_combines, run), room))
            if kept:
                line[x] = last._replace(data=unicodedata.normalize("NFC", last.data + kept))
        self.dirty.add(cursor.y)

    def alignment_display(self) -> None:
        """DECALN: every cell an ``E`` (a text screen: their colours are not kept)."""
        self.dirty.update(range(self.lines))
        row = dict.fromkeys(range(self.columns), self.default_char._replace(data="E"))
        for y in range(self.lines):
            line = self.buffer[y]
            line.clear()
            line.update(row)


class _Stream(pyte.ByteStream):
    """pyte's byte stream, made to take whatever a program prints.

    pyte raises on sequences real programs print (``ESC [ ? A``, a CSI with
    more parameters than its handler takes, ``ESC [ 9999 J``, a parameter of
    thousands of digits) and gathers an unfinished sequence without bound.
    A terminal ignores what it does not understand and goes on; so does
    this: the sequence is dropped (pyte resets its parser) and the rest of
    the output is interpreted.
    """

    def __init__(self, screen: pyte.Screen) -> None:
        #: Characters sent to the parser since it last took plain text.
        self._gathered = 0
        super().__init__(screen)

    def _send_to_parser(self, data: str) -> bool | None:
        try:
            taking_plain_text = super()._send_to_parser(data)
        except Exception:  # noqa: BLE001 - any refusal of pyte's: the program's bytes, not ours
            # pyte has reset its parser (it expects plain text again).
            _log.debug("arrowgate: a terminal sequence pyte refused was ignored", exc_info=True)
            self._gathered = 0
            return self._taking_plain_text
        if taking_plain_text:
            self._gathered = 0
        else:
            self._gathered += 1
            if self._gathered > SEQUENCE_MAX:
                self._initialize_parser()
                self._gathered = 0
                return self._taking_plain_text
        return taking_plain_text


class Screen:
    """A ``columns`` × ``lines`` screen fed with a program's output.

    pyte interprets cursor movement, colours, clearing and the rest, so the
    text read back is the screen a person sees, not the raw byte stream.
    Whatever a program prints, feeding it never raises (`_Stream`).
    """

    def __init__(self, columns: int = 100, lines: int = 30, *, newline_returns: bool = False):
        self._screen = _Screen(columns, lines)
        if newline_returns:
            # Plain program output (not a tty): a newline also returns the carriage.
            self._screen.set_mode(pyte.modes.LNM)
        self._stream = _Stream(self._screen)

    def feed(self, data: bytes) -> None:
        """Interpret bytes the program wrote."""
        self._stream.feed(data)

    def echo(self, prompt: str) -> None:
        """Show a prompt as typed (``> prompt``), inert.

        Its control characters show as stand-ins (`visible`): a prompt is a
        card's text, and fed to the emulator its escape sequences could clear
        or forge what ``agents.readScreen`` shows. A prompt longer than the
        screen holds is shown by its end, after ``…``: only that end could be
        seen, and feeding the rest to the emulator would hold the engine's loop
        for nothing (a 256 KiB prompt, the default ``max_payload``, ~0.3 s).
        """
        # What fills every line but the one the echo's newline leaves the cursor on,
        # after "> …".
        room = self._screen.columns * (self._screen.lines - 1) - 3
        if len(prompt) > room:
            prompt = "…" + prompt[-room:]
        self._stream.feed(f"> {visible(prompt)}\n".encode())

    def text(self) -> str:
        """The visible screen, trailing blanks and empty lines dropped."""
        lines = [line.rstrip() for line in self._screen.display]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines)
