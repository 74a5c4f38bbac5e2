"""An exported log verifies by the README's recipe alone, in code that shares nothing
with the engine: a second, independent implementation of the canonical row and hash."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from engine.app.cli import main

# The recipe (README, "Verifying an exported log"), written out again here.
GENESIS = "0" * 64
ORDER = (("seq",), ("timestamp",), ("workspace",), ("input", "arrow"), ("input", "card"),
         ("input", "package"), ("input", "version"), ("input", "call"), ("input", "target"),
         ("input", "payload"), ("input", "chain"), ("result", "outcome"), ("result", "code"),
         ("result", "reason"), ("result", "approver"), ("result", "prompt"))
_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b",
          "\f": "\\f"}


def _string(s: str) -> str:
    out = []
    for ch in s:
        if ch in _SHORT:
            out.append(_SHORT[ch])
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)  # everything else as it is, UTF-8 in the bytes hashed
    return '"' + "".join(out) + '"'


def _number(x: float) -> str:
    # The shortest decimal that reads back as the same double (Python's repr,
    # JavaScript's Number#toString), with ".0" when it is whole.
    assert math.isfinite(x)
    text = repr(float(x))
    assert "e" not in text, "times are far from the exponent forms"
    return text


def canonical(value: Any) -> str:
    """JSON without spaces, object keys sorted, strings escaped minimally."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(_string(k) + ":" + canonical(value[k])
                              for k in sorted(value)) + "}"
    raise TypeError(type(value))


def verify_export(lines: list[str]) -> int | None:
    """The seq of the first bad record, or None when every record checks out."""
    prev = GENESIS
    for expected_seq, line in enumerate(lines, start=1):
        record = json.loads(line)
        fields = []
        for path in ORDER:
            value: Any = record
            for key in path:
                value = value[key]
            fields.append(value)
        extra = [record["input"]["payload_bytes"], record["input"]["payload_sha256"]]
        if any(x is not None for x in extra):
            fields += extra
        digest = hashlib.sha256((prev + "\n" + canonical(fields)).encode("utf-8")).hexdigest()
        if (record["seq"] != expected_seq or record["chain"]["prev"] != prev
                or record["chain"]["hash"] != digest):
            return int(record["seq"])
        prev = digest
    return None


async def test_an_export_verifies_by_the_recipe(world: Any, db_path: Any, capsys: Any) -> None:
    """Every exported record's hash is recomputed from the recipe; tampering is found."""
    # GIVEN rows with awkward payloads: non-ASCII, quotes, backslashes, control characters
    await world.call("c1", "agents.prompt", "a1", {"text": "héllo ✓ \"q\" \\ \n\t\x1b[31m\x7f"})
    await world.call("c1", "agents.prompt", "a2", {"text": "no arrow"})
    await world.call("c1", "terminals.run", "t1", {"command": "echo 'ünïcode' | cat\r"})
    await world.call("c1", "cards.note.append", "n1", {"text": "\u2028line\u2029sep"})
    # AND a refused call whose row keeps only 4 KiB of its payload, with length and hash
    await world.call("c1", "agents.prompt", "a2", {"text": "é" * 5000})
    capsys.readouterr()
    # WHEN the log is exported
    assert main(["log", "export", "--db", str(db_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= 5
    cut = json.loads(lines[-1])["input"]
    assert cut["payload_bytes"] == 10000 and len(cut["payload_sha256"]) == 64
    # THEN the recipe alone verifies it
    assert verify_export(lines) is None
    # AND a changed payload, a dropped row or a reordering is found, at its row
    tampered = json.loads(lines[1])
    tampered["input"]["payload"] = "evil"
    assert verify_export([lines[0], json.dumps(tampered), *lines[2:]]) == 2
    assert verify_export([lines[0], *lines[2:]]) == 3
    assert verify_export([lines[1], lines[0], *lines[2:]]) == 2
