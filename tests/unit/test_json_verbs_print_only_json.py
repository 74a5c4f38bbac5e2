"""Under ``--json`` standard output is JSON only (one document, or JSON Lines) and standard
error JSON only (one object a line), on success and on error; every verb that prints data
takes ``--json`` (README, "Command line").

- ``log export`` and ``export`` print JSON already and took no ``--json``: a script
  passing it, as to every other verb, got a usage error, and their errors came as text.
- A plug-in that cannot be loaded, or whose ``register`` fails, is told as a warning on
  standard error — under ``--json`` as one JSON object ``{"warning": {...}}`` — and
  whatever it prints while loading goes to standard error, never among the data; the
  other verbs work.

SQLite only: this is about the command line's streams, not a store.

(Found in round 25: ``log export --json`` was a usage error, and a broken plug-in's
warning was a line of text among the JSON errors.)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.cli import main


def _database(folder: Path) -> Path:
    db = folder / "app.db"
    engine = Engine.open(db)
    try:
        asyncio.run(engine.create_workspace("w", str(folder)))
        asyncio.run(engine.add_node({"id": "n1", "type": "note"}, workspace="w"))
        asyncio.run(engine.call("ghost", "agents.list"))
    finally:
        engine.close()
    return db


def _json_lines(text: str) -> list[Any]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.parametrize("verb", [["log", "export"], ["export"]], ids=" ".join)
def test_a_verb_printing_json_takes_json_and_answers_errors_in_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], verb: list[str]) -> None:
    """GIVEN --json WHEN log export or export runs THEN its data on stdout, and its error as
    one JSON line on stderr."""
    db = _database(tmp_path)
    assert main([*verb, "--db", str(db), "--json"]) == 0, capsys.readouterr().err
    out, err = capsys.readouterr()
    assert err == ""
    if verb == ["export"]:
        assert [n["id"] for n in json.loads(out)["nodes"]] == ["n1"]
    else:
        assert [r["seq"] for r in _json_lines(out)] == [1]
    assert main([*verb, "--db", str(tmp_path / "missing.db"), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "no database at" in json.loads(err)["error"]["message"], err


class _EntryPoint:
    """An ``arrowgate.cli`` entry point that prints while it loads, then fails."""

    def __init__(self, name: str, fails_at: str) -> None:
        self.name = name
        self.group = "arrowgate.cli"
        self._fails_at = fails_at

    def load(self) -> Any:
        print("a plug-in talking on standard output")
        if self._fails_at == "load":
            raise ImportError("No module named 'broken_plugin'")

        def register(_sub: Any) -> None:
            print("a plug-in talking as it registers")
            raise RuntimeError("the plug-in broke while registering")

        return register


@pytest.mark.parametrize("fails_at", ["load", "register"])
def test_a_broken_plugin_is_a_warning_apart_from_the_data(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        fails_at: str) -> None:
    """GIVEN a plug-in that fails WHEN a verb runs THEN one warning on stderr (JSON under
    --json) and the data alone on stdout."""
    import importlib.metadata

    real = importlib.metadata.entry_points

    def entry_points(**kw: Any) -> Any:
        if kw.get("group") == "arrowgate.cli":
            return [_EntryPoint("broken", fails_at)]
        return real(**kw)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    db = _database(tmp_path)
    assert main(["log", "verify", "--db", str(db), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["ok"] is True, out
    said = _json_lines(err)  # stderr is JSON too: one object a line
    warnings = [line["warning"] for line in said if "warning" in line]
    assert len(warnings) == 1 and "'broken'" in warnings[0]["message"], said
    assert warnings[0]["plugin"] == "broken", said
    # Without --json: text on standard error, the data alone on standard output.
    assert main(["log", "verify", "--db", str(db)]) == 0
    out, err = capsys.readouterr()
    assert out == "log verify: ok: 1 rows\n", out
    assert "arrowgate: the 'broken' commands are unavailable" in err, err
