"""The person's keymap (binding id → keys), read with its lines and checked for consent.

A keymap may move any binding, but it never makes consent easier to give by
accident than the default keys do. A **consent key** — the yes of a consent
dialog (`CONSENT`) — is

- never a key that moves, scrolls or closes (`navigation`): an arrow, a page
  key, home/end, space, enter, tab, backspace, escape (with any modifier, and
  the control keys a terminal sends for them), nor a pager's j, k, h, l, g, G.
  The dialog's scroll view passes a key it cannot use to the dialog, so a yes on
  ``down`` confirms a text that fits at the first arrow press, and a yes on
  ``enter`` answers the key a person presses to say "OK" or "next";
- never the key of another binding a person may press just before it or with
  it: the dialog's own (its no, its end key), the app's (quit, the screens) and
  every screen's (the key that opened the dialog: held down, it would open the
  dialog and then answer it). Only other dialogs' bindings may share it, as
  they are never on screen together;
- for high-risk consent (`DELIBERATE`), a deliberate chord: an upper-case letter
  (shift) or a key with a modifier, as the default shift+y is.

A keymap that breaks a rule is refused whole; `read_keymap` names the line of
the file that made the problem.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from textual.binding import Binding
from textual.dom import DOMNode
from textual.keys import _character_to_key  # how Textual itself reads a one-letter key

from .keys import bindings_of

__all__ = ["CONSENT", "DELIBERATE", "KeymapFile", "KeymapProblem", "describe",
           "keymap_problems", "navigation", "normalized", "read_keymap"]

#: The bindings whose key gives consent in a dialog.
CONSENT = frozenset({"confirm.yes", "confirm.deliberate", "review.accept",
                     "review.accept_high", "hold.confirm_approve", "request.allow",
                     "request.allow_high"})
#: The consent keys of high-risk consent: kept to a deliberate chord.
DELIBERATE = frozenset({"confirm.deliberate", "review.accept_high", "hold.confirm_approve",
                        "request.allow_high"})

#: Keys that move, scroll or close, whatever modifier comes with them.
_MOVING = frozenset({"up", "down", "left", "right", "pageup", "pagedown", "home", "end",
                     "space", "enter", "tab", "backspace", "delete", "insert", "escape",
                     "newline"})
#: What a terminal sends for a moving key (Textual's aliases and the classic controls).
_SENT_AS_MOVING = frozenset({"ctrl+m", "ctrl+i", "ctrl+j", "ctrl+h", "ctrl+at",
                             "ctrl+space", "ctrl+left_square_brace"})
#: A pager's moving letters (less, vi, the arrow log's own j/k).
_PAGER = frozenset({"j", "k", "h", "l", "g", "G"})
_MODIFIERS = ("shift+", "ctrl+", "alt+", "meta+", "super+", "hyper+")


@dataclass(frozen=True, slots=True)
class KeymapProblem:
    """One way a keymap would make consent easier to give.

    ``binding`` and ``key`` are the consent key at fault; ``involves`` the binding
    ids whose keymap entries made it (the lines a person is pointed to).
    """

    binding: str
    key: str
    why: str
    involves: tuple[str, ...]

    def __str__(self) -> str:
        return f'"{self.binding}": "{self.key}" {self.why}'


def normalized(key: str) -> str:
    """A key as Textual matches it: one character by its name (``" "`` → ``space``), and
    shift with a letter as the upper-case letter a terminal sends."""
    key = key.strip()
    if len(key) == 1:
        return _character_to_key(key)
    base = key.removeprefix("shift+")
    if base != key and len(base) == 1 and base.isalpha():
        return base.upper()
    return key


def navigation(key: str) -> bool:
    """Whether ``key`` (normalized) moves, scrolls or closes, in a dialog or a pager."""
    if key in _PAGER or key in _SENT_AS_MOVING:
        return True
    base = key
    while base.startswith(_MODIFIERS):
        base = base.split("+", 1)[1]
    return base in _MOVING


def _deliberate(key: str) -> bool:
    return (len(key) == 1 and key.isalpha() and key.isupper()) or key.startswith(_MODIFIERS)


def keymap_problems(keymap: Mapping[str, str], owners: Iterable[type[DOMNode]], *,
                    dialogs: tuple[type[DOMNode], ...],
                    widgets: Iterable[type[DOMNode]] = ()) -> list[KeymapProblem]:
    """What in ``keymap`` would make consent easier to give than the defaults (see above).

    Args:
        keymap: binding id → keys (comma-separated), as the person wrote it.
        owners: every class whose bindings the app has (app, screens, dialogs).
        dialogs: the consent dialogs' base classes: bindings of another dialog may share
            a consent key.
        widgets: the widgets a dialog focuses (their keys are in reach of its yes).

    Returns:
        Each problem once, in the order of ``owners``; empty when the keymap may be used.
    """
    owners = list(owners)

    def keys_of(binding: Binding) -> list[str]:
        keys = keymap.get(binding.id, binding.key) if binding.id else binding.key
        return [normalized(k) for k in keys.split(",") if k.strip()]

    in_reach = [(owner, b) for owner in [*owners, *widgets] for b in bindings_of(owner)]
    found: list[KeymapProblem] = []
    for owner in owners:
        for consent in bindings_of(owner):
            if consent.id not in CONSENT:
                continue
            mine = (consent.id,) if consent.id in keymap else ()
            for key in keys_of(consent):
                if navigation(key):
                    found.append(KeymapProblem(
                        consent.id, key, "is a key that moves, scrolls or closes; a key that "
                        "gives consent is never one", mine))
                if consent.id in DELIBERATE and not _deliberate(key):
                    found.append(KeymapProblem(
                        consent.id, key, "is a plain key; high-risk consent takes a deliberate "
                        "one: an upper-case letter or a key with ctrl+, alt+ or shift+", mine))
                for other_owner, other in in_reach:
                    if other is consent or key not in keys_of(other) or (
                            other_owner is not owner and issubclass(other_owner, dialogs)):
                        continue
                    name = other.id or other.action
                    found.append(KeymapProblem(
                        consent.id, key, f"is also the key of {name} ({other_owner.__name__}); "
                        "a key that gives consent is no other binding's",
                        tuple(i for i in (consent.id, other.id) if i is not None and i in keymap)))
    unique: list[KeymapProblem] = []
    for problem in found:
        if problem not in unique:
            unique.append(problem)
    return unique


@dataclass(frozen=True, slots=True)
class KeymapFile:
    """A keymap file read: its bindings and the line each was written on."""

    keymap: dict[str, str]
    lines: dict[str, int]


def read_keymap(text: str) -> KeymapFile:
    """Parse a keymap file: one JSON object of binding id → keys, each id once.

    Raises:
        ValueError: not such an object, or an id given twice (the later line would
            silently win over the one a person reads first); the message names the lines.
        RecursionError: a value nested too deep to decode.
    """
    decoder = json.JSONDecoder()
    pos = _blank(text, 0)
    if not text.startswith("{", pos):
        raise ValueError('the keymap maps binding ids to keys, e.g. {"hold.approve": "A"}')
    keymap: dict[str, str] = {}
    lines: dict[str, int] = {}
    pos = _blank(text, pos + 1)
    if text.startswith("}", pos):
        return KeymapFile(keymap, lines)
    # Lines counted as the reading goes: counted from the start for each binding, a
    # keymap of tens of thousands of bindings took seconds before the app drew.
    line, counted = 1, 0
    while True:
        line += text.count("\n", counted, pos)
        counted = pos
        key, pos = decoder.raw_decode(text, pos)
        pos = _blank(text, pos)
        if not text.startswith(":", pos):
            raise ValueError(f"line {line}: a ':' after the binding id")
        value, pos = decoder.raw_decode(text, _blank(text, pos + 1))
        if not isinstance(key, str) or not isinstance(value, str):
            raise ValueError(f'line {line}: the keymap maps binding ids to keys, e.g. '
                             '{"hold.approve": "A"}')
        if key in keymap:
            raise ValueError(f"{json.dumps(key)} is given twice, on line {lines[key]} and on "
                             f"line {line}; say it once")
        keymap[key], lines[key] = value, line
        pos = _blank(text, pos)
        if text.startswith("}", pos):
            break
        if not text.startswith(",", pos):
            raise ValueError(f"line {line + text.count(chr(10), counted, pos)}: a ',' or "
                             "'}' after a binding")
        pos = _blank(text, pos + 1)
    if _blank(text, pos + 1) != len(text):
        raise ValueError("text after the keymap's closing '}'")
    return KeymapFile(keymap, lines)


def _blank(text: str, pos: int) -> int:
    """The position of the first character from ``pos`` on that is not JSON whitespace."""
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def describe(problem: KeymapProblem, lines: Mapping[str, int]) -> str:
    """A problem as one line naming the lines of the file that made it."""
    where = sorted({lines[i] for i in problem.involves if i in lines})
    at = f"line {', '.join(map(str, where))}: " if where else ""
    return f"{at}{problem}"
