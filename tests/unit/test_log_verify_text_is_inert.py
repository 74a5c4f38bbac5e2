"""``arrowgate log verify`` shows its verdict inert: a path in it cannot drive the terminal.

A verdict may name the anchor file, and so the database's path: a folder's name
is whoever made it's choice (a shared or unpacked folder), and may hold ESC
sequences — an OSC 52 that writes the clipboard, a clear screen — or a
bidirectional override. The text verdict shows them as visible symbols, as every
error line does (`engine.core.text.inert_lines`); ``--json`` escapes them.

(Found in round 24: ``log verify: FAILED: the anchor …`` printed the path raw.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import Engine
from engine.app.cli import main

HOSTILE = "x\x1b]52;c;ZXZpbA==\x07\x1b[2J\u202edir"


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_verdict_naming_a_hostile_path_is_inert(tmp_path: Path, json_flag: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / HOSTILE
    folder.mkdir()
    db = folder / "a.db"
    Engine.open(db).close()
    Path(f"{db}.anchor").write_text("not an anchor")
    assert main(["log", "verify", "--db", str(db), *json_flag]) == 1
    out, _err = capsys.readouterr()
    assert "anchor" in out
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in out, repr(out)
    if json_flag:
        assert HOSTILE in json.loads(out)["problem"]
