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
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        settings: dict[str, Any] = {}
    except OSError as exc:
        raise ValueError(f"cannot read Gemini CLI's system settings {path}: "
                         f"{exc.strerror or exc}") from None
    else:
        settings = _read(path, fd)
    servers = settings.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise ValueError(f"Gemini CLI's system settings {path}: mcpServers is no object")
    return {**settings, "mcpServers": {**servers, "arrowgate": server}}, str(defaults)


def _read(path: Path, fd: int) -> dict[str, Any]:
    """The JSON object in open file ``fd`` (``path``), comments left out."""
    import stat

    try:
        # Judged on the file opened (a FIFO is never read: nothing makes the start wait).
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"Gemini CLI's system settings {path} is no regular file")
        with open(fd, "rb", closefd=False) as fh:
            text = fh.read(_MAX_BYTES + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read Gemini CLI's system settings {path}: {exc}") from None
    finally:
        os.close(fd)
    if len(text) > _MAX_BYTES:
        raise ValueError(f"Gemini CLI's system settings {path} is larger than "
                         f"{_MAX_BYTES >> 20} MiB")
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
