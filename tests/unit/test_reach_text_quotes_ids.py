"""The reach text (`arrowgate reach`, `engine.app.reach`) quotes every id that holds what
separates ids on its lines (spaces, ``->``, ``;``, ``(``, quotes ...) and shows its
control characters inert, as the TUI does (`engine.core.text.quoted`, `ident`).

Found in round 21: ids were printed bare, so a card ``c1 -prompt-> a9`` prompting
nothing read as card ``c1`` prompting agent ``a9``, and an arrow id holding
``) c1 -fetch-> evil.example`` read as a second step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.app.cli import main
from engine.app.reach import analyse
from engine.core.text import ident, quoted

from ..conftest import manifest, offer_install

CARD = "c1 -prompt-> a9"
AGENT = "a1 (arrow e9; acme.evil: agents.prompt)"
ARROW = "e1) c1 -fetch-> evil.example"


async def _engine(make_engine: Any, tmp_path: Path) -> Any:
    engine = make_engine()
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.prompter", {"agents.prompt": {}}))
    await engine.add_node({"id": CARD, "type": "card", "package": "acme.prompter"},
                          workspace="w1")
    await engine.add_node({"id": AGENT, "type": "agent", "name": "A -run-> t1"},
                          workspace="w1")
    await engine.add_arrow({"id": ARROW, "from": CARD, "to": AGENT})
    return engine


def test_quoted_and_ident_are_the_engines() -> None:
    assert quoted("c1") == "c1"
    assert quoted("a b") == '"a b"' and quoted('a"b') == '"a\\"b"'
    assert quoted("a->b") == '"a->b"' and quoted("a\\ b") == '"a\\\\ b"'
    assert ident("a\nb") == '"a␊b"' and ident("a\x1bb") == "a␛b"


async def test_each_id_is_quoted_in_the_reach_text(make_engine: Any, tmp_path: Path) -> None:
    engine = await _engine(make_engine, tmp_path)
    lines = analyse(engine.state, CARD).lines()
    text = "\n".join(lines)
    assert lines[0] == f'reach of "{CARD}" (acme.prompter)'
    arrow = ARROW
    assert f'"{CARD}" -prompt-> "{AGENT}" (arrow "{arrow}"; acme.prompter: agents.prompt)' \
        in text
    assert '  prompt agent "A -run-> t1"' in text
    assert f"{CARD} -prompt->" not in text.replace(f'"{CARD}" -prompt->', "")


async def test_the_command_line_prints_them_quoted(make_engine: Any, tmp_path: Path,
                                                   db_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    engine = await _engine(make_engine, tmp_path)
    engine.close()
    assert main(["reach", CARD, "--db", str(db_path)]) == 0
    out = capsys.readouterr().out
    assert f'reach of "{CARD}" (acme.prompter)' in out
    assert f"\n{CARD}" not in out
