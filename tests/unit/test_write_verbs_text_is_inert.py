"""What the write verbs print as text is inert: a name they echo (a card id a script read
from a file, a project folder someone else named, a message the service sent) shows its
control characters as visible stand-ins, never obeyed by the terminal; text already shown
inert (a held prompt, its backslashes escaped) is printed as it was, never escaped twice.

(Found in round 25: ``arrowgate call 'ghost<ESC>[31m' agents.list`` printed the refusal's
message, which names the card, with its ESC sequence raw, and ``workspace add`` the
folder's name.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine import Engine
from engine.app.cli import main
from engine.effects.operator import OperatorCheck

ESCAPES = "\x1b[2J\x1b]52;c;aGk=\x07\u202e"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    path = str(tmp_path / "a.db")
    assert main(["workspace", "add", "w1", str(tmp_path), "--db", path]) == 0
    return path


def _raw(text: str) -> bool:
    return any(c in text for c in "\x1b\x07\u202e")


def test_a_refusal_naming_a_hostile_card_is_inert(db: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["call", f"ghost{ESCAPES}", "agents.list", "--db", db]) == 1
    out = capsys.readouterr().out
    assert "CARD_UNKNOWN" in out and not _raw(out), repr(out)
    assert "\u241b" in out  # ␛ stands for the ESC


def test_a_folder_with_a_hostile_name_is_shown_inert(tmp_path: Path, db: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / f"proj{ESCAPES}"
    folder.mkdir()
    capsys.readouterr()
    assert main(["workspace", "add", "w2", str(folder), "--db", db]) == 0
    out = capsys.readouterr().out
    assert out.startswith("workspace w2 added (folder ") and not _raw(out), repr(out)


def test_a_held_text_is_shown_once_inert(tmp_path: Path, db: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The held prompt's text keeps its lines and tabs, its backslash shown once escaped."""
    from tests.conftest import offer_install

    engine = Engine.open(db)

    async def hold() -> None:
        await offer_install(engine, {"name": "acme.p", "version": "1.0.0",
                                     "permissions": {"agents.prompt": {}}})
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"},
                              workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent", "dangerous": True},
                              workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
        decision = await engine.call("c1", "agents.prompt", "a1",
                                     {"text": f"line\\one\n\tx{ESCAPES}"})
        assert decision.outcome == "held", decision

    try:
        asyncio.run(hold())
    finally:
        engine.close()
    capsys.readouterr()
    assert main(["hold", "list", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "  line\\\\one\n  \tx\\x1b[2J\\x1b]52;c;aGk=\\x07\\u202e" in out, repr(out)
