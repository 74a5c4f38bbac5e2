"""``--set KEY=VALUE`` names each field once, and a VALUE that is JSON names each of its
keys once: a field given twice (``--set dangerous=true --set dangerous=false``) or a key
twice inside a value is refused (exit 2, naming it), nothing changed — never its last
value, which a person reading the command line may not take for the one that counts.
As ``--args`` and ``--settings`` are read (round 24), and every file of consent.

(Found in round 25: the last ``--set`` of a field won silently, and so did the last of a
key named twice in a VALUE: an agent added with ``dangerous=true`` first read as not
dangerous, a todo's item ``done`` twice kept its second.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.cli import main
from engine.effects.operator import OperatorCheck


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    path = str(tmp_path / "a.db")
    assert main(["workspace", "add", "w1", str(tmp_path), "--db", path]) == 0
    assert main(["node", "add", "w1", "a1", "agent", "--db", path]) == 0
    return path


def _nodes(db: str) -> dict[str, dict[str, Any]]:
    engine = Engine.open(db)
    try:
        return {n.id: n.to_dict() for n in engine.state.canvas.nodes()}
    finally:
        engine.close()


@pytest.mark.parametrize("argv, named", [
    (["node", "add", "w1", "a2", "agent", "--set", "dangerous=true", "--set",
      "dangerous=false"], "dangerous"),
    (["node", "add", "w1", "a2", "agent", "--set", "name=A", "--set", "name=B"], "name"),
    (["node", "add", "w1", "t1", "todo", "--set",
      'items=[{"id": "i1", "text": "ship", "done": true, "done": false}]'], "done"),
    (["node", "set", "a1", "--set", "dangerous=true", "--set", "dangerous=false"],
     "dangerous"),
    (["node", "set", "a1", "--set", 'command=["codex"]', "--set", 'command=["rm"]'],
     "command"),
])
@pytest.mark.parametrize("as_json", [False, True])
def test_a_field_or_key_named_twice_is_refused_naming_it(
        db: str, capsys: pytest.CaptureFixture[str], argv: list[str], named: str,
        as_json: bool) -> None:
    """GIVEN a field or a key twice WHEN the verb runs THEN exit 2 naming it, the canvas as
    it was."""
    capsys.readouterr()
    before = _nodes(db)
    code = main([*argv, "--db", db, *(["--json"] if as_json else [])])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (out, err)
    message = json.loads(err)["error"]["message"] if as_json else err
    assert f"{named!r}" in message or f'"{named}"' in message, message
    assert "twice" in message, message
    assert _nodes(db) == before


def test_a_bare_word_and_plain_json_are_still_taken(db: str) -> None:
    """GIVEN distinct fields, one a bare word WHEN added THEN as before."""
    assert main(["node", "add", "w1", "t1", "todo", "--db", db, "--set",
                 'items=[{"id": "i1", "text": "ship", "done": true}]']) == 0
    assert main(["node", "set", "a1", "--db", db, "--set", "name=Claude", "--set",
                 "dangerous=true"]) == 0
    nodes = _nodes(db)
    assert nodes["a1"]["name"] == "Claude" and nodes["a1"]["dangerous"] is True
    assert nodes["t1"]["items"][0]["done"] is True
