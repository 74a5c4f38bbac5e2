"""`arrowgate log show` reads the log a page at a time: its memory is bounded, whatever the
log's size, on both stores, and what it prints is the same.

Found in round 22: ``log show`` read every matching row into one list before
printing (``--json`` too), so on a log of 1,000,000 rows it grew past 1.4 GB and
ended in ``MemoryError`` instead of printing; ``log export`` already paged.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.app.cli import main
from engine.app.export import EXPORT_PAGE
from engine.store.log import ArrowLog
from engine.store.pg.parts import PGLog
from tests.durability.targets import Target

ROWS = 7


@pytest.fixture
async def logged(world, target: Target) -> Target:
    """A log of `ROWS` rows in the store, the engine closed."""
    for i in range(ROWS):
        await world.call("c1", "terminals.run", "t1", {"command": f"cmd {i}"})
    world.close()
    return target


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The ``limit`` of every read of the log's rows, on either store, pages of 3 rows."""
    import engine.app.export as export

    monkeypatch.setattr(export, "EXPORT_PAGE", 3)
    seen: list[Any] = []
    for cls in (ArrowLog, PGLog):
        real = cls.rows

        def spy(self: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            seen.append(kwargs.get("limit"))
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(cls, "rows", spy)
    return seen


@pytest.mark.parametrize("json_out", [False, True])
def test_log_show_reads_a_page_at_a_time(logged: Target, capsys: pytest.CaptureFixture[str],
                                         reads: list[Any], json_out: bool) -> None:
    """Every read asks for at most a page; every row is printed once, in order, aligned."""
    assert EXPORT_PAGE >= 3
    code = main(["log", "show", *logged.args(), *(["--json"] if json_out else [])])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert reads and all(limit is not None and limit <= 3 for limit in reads), reads
    if json_out:
        assert [json.loads(line)["seq"] for line in out] == list(range(1, ROWS + 1))
        return
    header, *lines = out
    assert header.split()[:2] == ["seq", "time"], header
    assert [int(line.split()[0]) for line in lines] == list(range(1, ROWS + 1))
    # One table: every row's columns start where the header's do.
    start = header.index("card")
    assert all(line[start:].startswith("c1 ") for line in lines), out
    assert all(f"cmd {i}" in line for i, line in enumerate(lines)), out
