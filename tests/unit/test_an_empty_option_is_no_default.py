"""An option given an empty value (``--store "$PGURL"`` with the variable never set) is
a usage error naming the option, never the default its absence means: the embedded
database for ``--store`` or ``--service``, stdout for ``-o``.

(Found in round 31, playing a team moving to PostgreSQL: ``arrowgate serve --store ""``
served the embedded SQLite default, ``log verify --store ""`` verified it and said ok,
and ``call … --service ""`` made the call on that file instead of through the service.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine import Engine
from engine.app.cli import build_parser, main
from engine.app.usage import UsageError

#: Each option that names a file, a folder, a store or a service, given empty.
_EMPTY = [
    ["log", "verify", "--db", ""],
    ["log", "show", "--store", ""],
    ["log", "export", "--store", ""],
    ["reach", "c1", "--db", ""],
    ["tui", "--store", ""],
    ["tui", "--db", ""],
    ["serve", "--store", ""],
    ["serve", "--db", ""],
    ["serve", "--socket", ""],
    ["serve", "--token-file", ""],
    ["replay", "--store", "", "case.json"],
    ["copy", "--store", "", "--to", "copy.db"],
    ["copy", "--to", ""],
    ["export", "-o", ""],
    ["import", "x.canvas", "--folder", ""],
    ["demo", "--folder", ""],
    ["token", "list", "--store", ""],
    ["token", "mint", "card:c1", "--out", ""],
    ["call", "c1", "agents.list", "--service", ""],
    ["hold", "list", "--service", "s.sock", "--token-file", ""],
    ["workspace", "add", "w1", "/tmp", "--db", ""],
    ["mcp", "--agent", "a1", "--service", ""],
    ["mcp", "--agent", "a1", "--db", ""],
    ["mcp", "--agent", "a1", "--token-file", ""],
]


@pytest.mark.parametrize("argv", _EMPTY, ids=lambda argv: " ".join(argv[:2]))
def test_an_empty_option_is_a_usage_error_naming_it(argv: list[str]) -> None:
    """``--OPTION ""`` is refused by the parser, naming the option."""
    option = next(word for word, value in zip(argv, argv[1:], strict=False)
                  if word.startswith("-") and value == "")
    with pytest.raises(UsageError) as refused:
        build_parser().parse_args(argv)
    assert option in refused.value.message and "empty" in refused.value.message


def test_log_verify_of_an_empty_store_verifies_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``log verify --store ""`` with a default database there: exit 2, one line naming
    ``--store``, and no verification of the default."""
    # GIVEN a default database that verifies
    db = tmp_path / "app.db"
    engine = Engine.open(db)
    try:
        asyncio.run(engine.create_workspace("w1", str(tmp_path)))
    finally:
        engine.close()
    monkeypatch.setenv("ARROWGATE_DB", str(db))
    assert main(["log", "verify"]) == 0  # what an empty --store must not do
    capsys.readouterr()
    # WHEN the store is named by an empty value
    code = main(["log", "verify", "--store", ""])
    # THEN nothing is verified, and the option is named
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert out == "" and "--store" in err, (out, err)
