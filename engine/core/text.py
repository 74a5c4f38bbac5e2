"""Text a person reads: which characters may restyle or hide it, and how to show them inert.

A manifest, a host name or a prompt can carry terminal control sequences
(``ESC[8m`` hides what follows), newlines that forge extra lines, or
bidirectional overrides that reorder what is shown. `control_characters`
finds them (manifest validation refuses them, SPEC §2); `visible` replaces
them with a visible stand-in wherever such text is printed anyway.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["LINE", "NAMED", "PATH_SHOWN", "SHOWN", "as_sent", "bounded", "clipped",
           "control_characters", "describe_character", "id_problem", "ident", "inert_lines",
           "is_control", "is_unicode", "named", "named_path", "one_line", "quoted", "shown",
           "visible"]

#: Bidirectional formatting characters: they reorder the text around them.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                          "\u2066\u2067\u2068\u2069")
# Zero width joiner: part of ordinary emoji sequences, restyles nothing.
_ALLOWED_FORMAT = frozenset("\u200d")
# Categories never printed as themselves: controls (C0, DEL, C1), format
# characters (bidi, zero-width, the tag characters U+E0000–E007F), surrogates,
# private use, unassigned, and the line and paragraph separators.
_CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# The other default-ignorable code points (Unicode's Default_Ignorable_Code_Point
# outside those categories): variation selectors, the combining grapheme joiner,
# Khmer and Mongolian invisibles, the Hangul fillers. A terminal draws them as
# nothing, yet they reach whoever reads the text as characters: variation
# selectors carry a byte each ("emoji smuggling"), so an instruction hidden in
# them would reach an agent, in a held prompt or a tool's description, past the
# person who approved what was drawn. (Even U+FE0F after an emoji: a run of
# them is such a channel, and a lone one is not told apart from a run's first.)
_INVISIBLE = frozenset(
    [*"\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0",
     *map(chr, range(0xFE00, 0xFE10)), *map(chr, range(0xE0100, 0xE01F0))])


def is_control(ch: str) -> bool:
    """True for a character that may restyle, reorder or hide text around it, or that is
    drawn as nothing (a default-ignorable code point) while it is read as a character."""
    if ch in _ALLOWED_FORMAT:
        return False
    return ch in BIDI_CONTROLS or ch in _INVISIBLE \
        or unicodedata.category(ch) in _CONTROL_CATEGORIES


def is_unicode(text: str) -> bool:
    """Whether ``text`` is valid Unicode: no lone surrogate, so it encodes as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def describe_character(ch: str) -> str:
    """``U+001B (ESC)``, ``U+202E (RIGHT-TO-LEFT OVERRIDE)``: a character named for a person."""
    code = ord(ch)
    names = {0x1B: "ESC", 0x0A: "newline", 0x0D: "carriage return", 0x09: "tab", 0x00: "NUL",
             0x7F: "DEL"}
    name = names.get(code) or unicodedata.name(ch, "")
    return f"U+{code:04X}" + (f" ({name})" if name else "")


def control_characters(text: str) -> list[str]:
    """The distinct control characters in ``text``, in order of first appearance."""
    seen: list[str] = []
    for ch in text:
        if is_control(ch) and ch not in seen:
            seen.append(ch)
    return seen


#: Ids that are not one path segment: a URL client (WHATWG's, a browser's ``fetch``)
#: resolves them away, ``/v1/nodes/..`` is ``/v1/``, before the request is sent.
_DOT_SEGMENTS = frozenset({".", ".."})


def id_problem(kind: str, value: str) -> str | None:
    """Why ``value`` cannot be a ``kind`` id (node, arrow, workspace), or None when it can.

    An id is how a person tells one thing on the canvas from another, in every
    prompt, log row and listing: one holding a control or invisible character
    (or a lone surrogate, which no store can write) could pass for another id
    or rewrite the line that shows it. It is also how the service's routes name
    it, as one path segment (`_segment_problem`).
    """
    bad = control_characters(value)
    if not bad:
        return _segment_problem(kind, value)
    return f"{kind} id {visible(value)!r} holds {describe_character(bad[0])}; " \
        "an id holds no control or invisible character"


def _segment_problem(kind: str, value: str) -> str | None:
    """Why ``value`` cannot be one path segment of the service's routes, or None.

    The service's routes match one segment of the *decoded* path, so an id holding
    ``/`` (even sent as ``%2F``) reaches no route that names it, and ``.`` or ``..``
    never leave a URL client as themselves: such a thing, made, could not be changed
    or removed through the service (an arrow, consent for data, least of all).
    """
    if value in _DOT_SEGMENTS:
        return f"{kind} id {value!r} is a dot segment, which a URL resolves away; " \
            "an id is not '.' or '..'"
    if "/" in value:
        return f"{kind} id {value!r} holds '/'; an id is one path segment and holds no '/'"
    return None


#: `visible`'s stand-ins for the ASCII controls.
_ASCII_PICTURES = {**{code: chr(0x2400 + code) for code in range(0x20)}, 0x7F: "\u2421"}


def visible(text: str) -> str:
    """``text`` with every control character shown inert.

    C0 controls become their control pictures (ESC → ``␛``, newline → ``␊``),
    DEL → ``␡``; C1 controls, bidi and other format characters, separators,
    surrogates and unassigned code points → ``⟨U+202E⟩``.
    """
    if text.isascii():
        # Of ASCII only C0 and DEL are controls: one pass in C (a prompt is
        # echoed through here as it is delivered).
        return text if text.isprintable() else text.translate(_ASCII_PICTURES)
    if not any(is_control(ch) for ch in text):
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if not is_control(ch):
            out.append(ch)
        elif code < 0x20:
            out.append(chr(0x2400 + code))
        elif code == 0x7F:
            out.append("\u2421")
        else:
            out.append(f"\u27e8U+{code:04X}\u27e9")
    return "".join(out)


# What separates ids where a line names several: ``card → target``, ``a -prompt-> b``,
# ``(c1, c2)``, ``card (package):``, ``arrow e1; grant``, and the quote itself.
_SEPARATOR = re.compile(r'[\s",;()→←]|->|<-')


def quoted(value: str, *, also: str = "") -> str:
    """An id (a node's, an arrow's) to write among other words on one line, not yet inert.

    As it is when it holds nothing that separates ids on such a line; else in
    double quotes (its own quotes and backslashes escaped), so the card
    ``standup → claude`` calling ``yolo`` reads ``"standup → claude" → yolo``,
    not the card ``standup`` calling ``claude``. Its control characters are
    left as they are: pass it on through `visible` (or the TUI's ``plain``),
    on one line, or use `ident`. ``also`` names more characters that separate ids
    where it is written (the TUI's map draws each node as ``[id]``: ``"[]"``).
    """
    if not _SEPARATOR.search(value) and not any(ch in value for ch in also):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def ident(value: str) -> str:
    """`quoted`, with every control character made visible (a line break as ``␊``): an
    id as a ``str`` that reaches a terminal or a screen as it is."""
    return visible(quoted(value))


#: The most characters of one line a message about someone else's input prints.
LINE = 2000


def clipped(line: str, limit: int = LINE) -> str:
    """``line`` in at most ``limit`` characters: whole, or its start and end with the
    middle replaced by a mark naming how many characters were left out.

    For a message that echoes a value someone else chose (a case's step, a file's
    id): its start says where, its end says what is wrong, and a value of
    megabytes in between is never printed whole. A ``limit`` too short for the mark
    gives the line's start and "…" (or nothing, for 0): the bound always holds.
    """
    if len(line) <= limit:
        return line
    mark = ""
    for _ in range(2):  # the mark's length depends on the count it names
        room = max(0, limit - len(mark))
        mark = f"…[{len(line) - room} characters left out]…"
    if len(mark) > limit:
        # No room for the mark: the line's start and a bare "…" say it was cut.
        return line[:limit - 1] + "…" if limit > 0 else ""
    room = limit - len(mark)
    head = room * 2 // 3
    return line[:head] + mark + line[len(line) - (room - head):]


#: The most characters of a path a refusal quotes (a file call's path may be 4,096 bytes).
PATH_SHOWN = 240


def named_path(path: str) -> str:
    """``path`` as a refusal names it: quoted (``repr``), and a long one `clipped` in its
    middle (its start says where, its end what). The card sent it and the call's log
    row keeps it whole: a refusal need not carry kilobytes of it back."""
    return repr(clipped(path, PATH_SHOWN))


def inert_lines(text: str, limit: int = LINE) -> str:
    """``text`` as lines a terminal shows as they are: each line's control characters
    shown inert (`visible`) and each line `clipped` to ``limit`` characters."""
    return "\n".join(clipped(visible(line), limit) for line in text.split("\n"))


def one_line(text: str) -> str:
    """``text``'s lines joined into one by ``"; "``, each stripped: a message another
    program wrote over several lines (libpq's "… Connection refused" then, after a line
    break and a tab, "Is the server running on that host …?") as one line of an error."""
    return "; ".join(part.strip() for part in text.splitlines() if part.strip())


def bounded(text: str, limit: int, *, length: int | None = None,
            note: str | None = None) -> str:
    """``text`` in at most ``limit`` bytes of UTF-8: whole, or its start marked as cut.

    Cut at a character boundary; the mark names the whole text's size in
    bytes, ``length`` when ``text`` is itself only the start of something
    longer (a driver that kept the start of a run's output). The result always
    fits: under a limit too small for that mark (``max_payload`` may be 1) it
    is a shorter one, ``[cut]``, or under one smaller still none at all.

    ``note`` (a driver's ``[exit 3]``) follows the text on a line of its own
    and is kept whole when the text is cut, within ``limit`` still: the
    text gets the room the note leaves. ``length`` counts the text alone.
    """
    if note:
        tail = note if not text else "\n" + note
        room = limit - len(tail.encode("utf-8", "surrogatepass"))
        if room >= 0:
            return (bounded(text, room, length=length) + tail) if text else note
        # A note over the limit on its own is cut as the text is, with it.
        text += tail
        length = None if length is None else length + len(tail.encode("utf-8", "surrogatepass"))
    raw = text.encode("utf-8", "surrogatepass")
    total = len(raw) if length is None else length
    if total <= limit and len(raw) <= limit:
        return text
    mark = _cut_mark(total, limit)
    room = max(0, limit - len(mark))
    # "ignore" drops the character the byte limit split.
    return raw[:room].decode("utf-8", "ignore") + mark


def _cut_mark(total: int, limit: int) -> str:
    """The longest mark of a cut (ASCII) that fits in ``limit`` bytes: it names the
    whole size where there is room, says only that it was cut where there is less."""
    for mark in (f"\n[cut: {total} bytes in all]", "\n[cut]"):
        if len(mark) <= limit:
            return mark
    return ""


#: The most characters of a card-supplied name (card, call, target) a refusal shows.
SHOWN = 1024


def shown(value: object) -> str:
    """A card-supplied name as text a refusal and its log row can hold.

    Lone surrogates escaped, at most `SHOWN` characters; a value that is not
    a `str` shows as its type, ``<list>``.
    """
    if type(value) is not str:
        value = f"<{type(value).__name__}>"
    elif str.isascii(value) and len(value) <= SHOWN:
        return value
    text = str.encode(value, "utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"


#: The most characters of a name someone else chose (a card's id, a target's, a call's,
#: a tool's, a port's or an argument's name) a message quotes (`named`).
NAMED = 100


def named(value: object) -> str:
    """A name someone else chose, as a message a person reads quotes it.

    Whole up to `NAMED` characters; longer, its first `NAMED`, "…" and its
    length (``xxxx…[5242880 characters]``), as the TUI's ``short_id`` cuts an id
    for the screen: a card naming a target of 5 MB is told so in a line, not
    in 5 MB (SPEC §5: "a message a person can read"). Lone surrogates escaped
    and a value that is not a `str` shown as its type, as `shown` does. What
    the caller sent stays whole where a program matches on it (a Decision's
    fields); only the words are cut.
    """
    if type(value) is not str or len(value) <= NAMED:
        return shown(value)
    return shown(value[:NAMED])[:NAMED] + f"…[{len(value)} characters]"


def as_sent(value: object) -> str:
    """A name someone else chose, as a refusal's fields keep it: whole when it is valid
    Unicode text (what the caller sent, for a program to match on; a log row and a
    summary cut it to `SHOWN` characters themselves), else as `shown` shows it."""
    if type(value) is str and (str.isascii(value) or is_unicode(value)):
        return value
    return shown(value)
