"""`arrowgate replay` shows every string a case supplies inert: no control character
of a case reaches the terminal.

A case is something people share (FORMAT.md). Its expected error code, a
``deliveries`` key, an invalid step's ``do`` — every case-supplied string in
the report — goes through `engine.core.text.visible` (ESC → ␛), and each line
printed is made inert once more; so a case cannot clear the screen or paint
"replay: 12 passed, 0 failed" over its own failure.
(Found by a helper: these three were printed raw — engine/app/replay.py
`check_expectation`, engine/app/casefile.py `_step_where`.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.replay import run_files

ESC = "\x1b[2J\x1b[H\x1b]0;owned\x07replay: 1 passed, 0 failed\r"
BASE = {
    "packages": {"acme.n": {"manifest": {"name": "acme.n", "version": "1.0.0",
                                         "permissions": {"cards.connected": {}}},
                            "grant": "required"}},
    "nodes": [{"id": "c1", "type": "card", "package": "acme.n"},
              {"id": "n1", "type": "note", "text": ""}],
    "arrows": [{"id": "e1", "from": "c1", "to": "n1"}],
}
READ = {"do": "call", "card": "c1", "call": "cards.note.read", "target": "n1"}
STEPS = {
    "expected error": [{**READ, "expect": {"error": ESC}}],
    "deliveries key": [{**READ, "expect": {"deliveries": {ESC: {"ok": True}}}}],
    "unknown do": [{"do": ESC}],
}


@pytest.mark.parametrize("what", list(STEPS))
def test_replay_output_holds_no_control_characters(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    what: str) -> None:
    path = tmp_path / "case.json"
    path.write_text(json.dumps({"name": "c", **BASE, "steps": STEPS[what]}))
    assert run_files([str(path)]) != 0
    captured = capsys.readouterr()
    for stream in (captured.out, captured.err):
        assert "\x1b" not in stream and "\x07" not in stream and "\r" not in stream, \
            repr(stream)
