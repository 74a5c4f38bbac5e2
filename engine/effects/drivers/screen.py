"""A terminal screen kept by pyte: what a person would see, as text."""

from __future__ import annotations

import pyte

from engine.core.text import visible

__all__ = ["Screen"]


class Screen:
    """A ``columns`` × ``lines`` screen fed with a program's output.

    pyte interprets cursor movement, colours, clearing and the rest, so the
    text read back is the screen a person sees, not the raw byte stream.
    """

    def __init__(self, columns: int = 100, lines: int = 30, *, newline_returns: bool = False):
        self._screen = pyte.Screen(columns, lines)
        if newline_returns:
            # Plain program output (not a tty): a newline also returns the carriage.
            self._screen.set_mode(pyte.modes.LNM)
        self._stream = pyte.ByteStream(self._screen)

    def feed(self, data: bytes) -> None:
        """Interpret bytes the program wrote."""
        self._stream.feed(data)

    def echo(self, prompt: str) -> None:
        """Show a prompt as typed (``> prompt``), inert.

        Its control characters show as stand-ins (`visible`): a prompt is a
        card's text, and fed to the emulator its escape sequences could clear
        or forge what ``agents.readScreen`` shows.
        """
        self._stream.feed(f"> {visible(prompt)}\n".encode())

    def text(self) -> str:
        """The visible screen, trailing blanks and empty lines dropped."""
        lines = [line.rstrip() for line in self._screen.display]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines)
