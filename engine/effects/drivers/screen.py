"""A terminal screen kept by pyte: what a person would see, as text."""

from __future__ import annotations

import functools
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

#: The most characters one cell holds: a character and the combining marks put
#: on it. pyte adds every mark a program prints to the cell before the cursor and
#: normalizes the whole cell again each time: a program printing marks without
#: end would grow one cell without bound, each mark costing more than the last.
#: Unicode's stream-safe text (UAX #15) has at most 30 marks in a row; a cell
#: keeps up to 31, and drops the rest.
CELL_MAX = 32


@functools.cache
def _marks() -> re.Pattern[str]:
    """Runs of the characters pyte combines with the cell before the cursor: those
    of a non-zero canonical combining class (all of them zero-width)."""
    ranges: list[str] = []
    start = last = -2
    for code in range(sys.maxunicode + 1):
        if not unicodedata.combining(chr(code)):
            continue
        if code != last + 1:
            if start >= 0:
                ranges.append(_range(start, last))
            start = code
        last = code
    if start >= 0:
        ranges.append(_range(start, last))
    return re.compile(f"[{''.join(ranges)}]+")


def _range(first: int, last: int) -> str:
    return re.escape(chr(first)) + (f"-{re.escape(chr(last))}" if last > first else "")


class _Screen(pyte.Screen):
    """pyte's screen, with work and memory bounded per byte of output.

    Combining marks are put on their cell as pyte does, up to `CELL_MAX`
    characters a cell; DECALN fills the screen a line at a time, not a cell at a
    time (pyte's, 3,000 cells rewritten one by one for three bytes).
    """

    def draw(self, data: str) -> None:
        marks = _marks()
        if marks.search(data) is None:  # plain text, as nearly always
            super().draw(data)
            return
        at = 0
        for run in marks.finditer(data):
            if run.start() > at:
                super().draw(data[at:run.start()])
            self._combine(run.group())
            at = run.end()
        if at < len(data):
            super().draw(data[at:])

    def _combine(self, run: str) -> None:
        """Put the marks ``run`` on the cell before the cursor, as pyte's `draw` does
        (wrapping first at the end of a line; on the line above's last cell at a
        line's start), while the cell holds fewer than `CELL_MAX` characters."""
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
            line[x] = last._replace(data=unicodedata.normalize("NFC", last.data + run[:room]))
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
