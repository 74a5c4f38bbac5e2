"""Gemini CLI's system settings for an agent run: the machine's, with arrowgate's server added.

Gemini CLI reads one system settings file, the highest layer of its settings (an
organisation's restrictions: tools excluded, no YOLO mode, the MCP servers allowed),
from ``GEMINI_CLI_SYSTEM_SETTINGS_PATH`` when set, else a fixed path
(``/etc/gemini-cli/settings.json`` on Linux); and its system defaults, the lowest layer,
from ``GEMINI_CLI_SYSTEM_DEFAULTS_PATH``, else ``system-defaults.json`` beside the system
settings. The driver gives each run a system settings file of its own (so no card can
change it: SPEC §10.2), which would replace both of the machine's; so the file holds
the machine's system settings with arrowgate's server added, and the run is told where
the machine's system defaults are. Settings files may hold comments, as Gemini CLI
strips them.
"""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["SETTINGS_VARIABLE", "DEFAULTS_VARIABLE", "system_settings"]

#: The variable that names Gemini CLI's system settings file.
SETTINGS_VARIABLE = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"
#: The variable that names Gemini CLI's system defaults file.
DEFAULTS_VARIABLE = "GEMINI_CLI_SYSTEM_DEFAULTS_PATH"
#: The largest system settings file read (a settings file is a few KiB).
_MAX_BYTES = 4 * 1024 * 1024


def _machine_paths(environ: Mapping[str, str]) -> tuple[Path, Path]:
    """The system settings and system defaults files Gemini CLI reads in ``environ``."""
    settings = Path(environ.get(SETTINGS_VARIABLE) or (
        "/Library/Application Support/GeminiCli/settings.json" if sys.platform == "darwin"
        else "/etc/gemini-cli/settings.json"))
    defaults = Path(environ.get(DEFAULTS_VARIABLE) or settings.parent / "system-defaults.json")
    return settings, defaults


def system_settings(server: dict[str, Any],
                    environ: Mapping[str, str] = os.environ) -> tuple[dict[str, Any], str]:
    """The machine's system settings with ``server`` as the MCP server ``arrowgate``, and
    the machine's system defaults file (for `DEFAULTS_VARIABLE`).

    Raises:
        ValueError: the machine's system settings file is there but cannot be read, or
            is no JSON object (or its ``mcpServers`` none), naming it: the agent is not
            started with the restrictions it holds lifted (Gemini CLI refuses it too).
    """
    path, defaults = _machine_paths(environ)
    settings = _read(path)
    servers = settings.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise ValueError(f"Gemini CLI's system settings {path}: mcpServers is no object")
    return {**settings, "mcpServers": {**servers, "arrowgate": server}}, str(defaults)


def _read(path: Path) -> dict[str, Any]:
    """The JSON object in the system settings file ``path``, comments left out; empty
    when there is none (the machine has no system settings)."""
    from engine.effects.userfile import FileRefused, read_user_text

    try:
        # As a file a person names is read: never a FIFO (nothing makes the start
        # wait), within a bound, as UTF-8.
        text = read_user_text(path, limit=_MAX_BYTES)
    except FileRefused as exc:
        if exc.errno == errno.ENOENT:
            return {}
        raise ValueError(f"Gemini CLI's system settings: {exc}") from None
    try:
        settings = json.loads(_without_comments(text))
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"Gemini CLI's system settings {path} is not JSON: {exc}") from None
    if not isinstance(settings, dict):
        raise ValueError(f"Gemini CLI's system settings {path} is no JSON object")
    return settings


def _without_comments(text: str) -> str:
    """``text`` with its ``//`` and ``/* */`` comments (outside texts) made spaces."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i:end + 1])
            i = end + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            out.append(" ")
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        else:
            out.append(ch)
            i += 1
    return "".join(out)
