"""A terminal screen kept by pyte: what a person would see, as text."""

from __future__ import annotations

import logging

import pyte

from engine.core.text import visible

__all__ = ["SEQUENCE_MAX", "Screen"]

_log = logging.getLogger(__name__)

#: The most characters of one escape sequence the screen gathers. pyte keeps
#: an unfinished OSC (a window title, an OSC 52 clipboard write) or CSI whole
#: until it ends: a program printing one that never does would have the
#: engine keep its output without bound. Past this, the sequence is dropped
#: and what follows is taken as text again.
SEQUENCE_MAX = 4096


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
        self._screen = pyte.Screen(columns, lines)
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
