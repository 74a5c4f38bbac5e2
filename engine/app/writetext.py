"""What a write verb shows a person, inert: held prompts' text, its answers, its digests."""

from __future__ import annotations

import hashlib

from engine.core.text import is_control, visible

__all__ = ["inert", "shown", "text_sha256"]


def inert(text: str) -> str:
    """Text with every control or format character (but newline and tab) shown escaped.

    A held prompt is shown whole and only as text: an escape sequence,
    a carriage return or a bidirectional override in it cannot restyle,
    overwrite or reorder what the person reads (SPEC §7).
    """
    out = []
    for ch in text:
        if ch in "\n\t":
            out.append(ch)
        elif ch == "\\" or is_control(ch):
            code = ord(ch)
            out.append("\\\\" if ch == "\\" else
                       f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
                       else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


def shown(text: str) -> str:
    """A verb's text answer as a terminal shows it, inert: every control or format
    character but newline and tab as its visible stand-in (`visible`), and nothing else
    changed — so text `inert` already escaped (a held prompt) is printed as it was."""
    if not any(is_control(ch) and ch not in "\n\t" for ch in text):
        return text
    return "".join(visible(ch) if is_control(ch) and ch not in "\n\t" else ch for ch in text)


def text_sha256(text: str) -> str:
    """Hex SHA-256 of a prompt text as UTF-8 (what a hold approval names)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
