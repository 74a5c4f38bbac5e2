"""Keys from the terminal even when standard input is not one.

``arrowgate tui < /dev/null`` (or run from a script) has the operator check
refuse, so the app is read-only; but the person at the terminal must still be
able to scroll, read and quit. Textual reads keys from standard input, so
there no key would work and only a signal could end the app. This driver
reads keys from the controlling terminal (``/dev/tty``) instead. It changes
nothing about consent: the operator check still looks at standard input.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from textual.driver import Driver

__all__ = ["terminal_driver"]


def terminal_driver(path: str = "/dev/tty") -> type[Driver] | None:
    """A driver reading keys from ``path`` when standard input is not a terminal.

    Returns:
        None when standard input is a terminal (Textual's own driver does),
        on Windows, or when ``path`` cannot be opened as a terminal.
    """
    stdin = sys.__stdin__
    if sys.platform == "win32" or (stdin is not None and _isatty(stdin)):
        return None
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return None
    if not os.isatty(fd):
        os.close(fd)
        return None
    from textual.drivers.linux_driver import LinuxDriver

    class TerminalDriver(LinuxDriver):
        """Textual's Linux driver with its key input on the terminal device."""

        def __init__(self, app: Any, **kwargs: Any) -> None:
            super().__init__(app, **kwargs)
            self.fileno = fd
            self.input_tty = True

    return TerminalDriver


def _isatty(stream: Any) -> bool:
    try:
        return os.isatty(stream.fileno())
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        return False
