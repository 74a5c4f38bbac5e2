"""What the terminal receives for the current screen, as text and as raw output."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console


def screen_output(app: Any) -> tuple[str, str]:
    """(the characters on screen, the bytes a terminal would be sent) of the app's screen.

    Made the way Textual makes its screenshots, with the raw stream kept too,
    so a test can check both what a person reads and what reached the terminal.
    """
    width, height = app.size
    raw = io.StringIO()
    console = Console(width=width, height=height, file=raw, force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False,
                      safe_box=False)
    console.print(app.screen._compositor.render_update(
        full=True, screen_stack=app._background_screens))
    return console.export_text(styles=False), raw.getvalue()
