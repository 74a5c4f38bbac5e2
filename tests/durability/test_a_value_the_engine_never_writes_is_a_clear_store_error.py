"""SPEC §10 "Storage", fail closed: a value in the store the engine never writes — text
that is not JSON, or JSON of the wrong shape, in a package's manifest or digests, a
node's data or a workspace's settings; a counted call's time that is not a number —
is a clear store error (`StoreFailed`, naming the table and the row), at open and when
another engine catches up with it; never a traceback, and never a decision.

Found in round 24: such a value, written by a hand at a ``sqlite3`` or ``psql`` shell,
made `Engine.open` raise the decoder's own ``JSONDecodeError``, ``TypeError``,
``AttributeError`` or ``InvalidSetting`` (a traceback at the CLI, the TUI and the
service); a node's bad data written while an engine was open broke its catch-up the
same way, and on SQLite a counted call's time stored as text broke the next call
with a ``TypeError``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.core.errors import StoreFailed
from tests.durability.targets import Target

#: Each edit, and the table the error must name.
EDITS = {
    "manifest-not-json": ("update packages set manifest = '{not json'", "packages"),
    "manifest-null": ("update packages set manifest = null", "packages"),
    "digests-not-json": ("update packages set digests = 'nope'", "packages"),
    "digests-a-list": ("update packages set digests = '[1]'", "packages"),
    "node-data-not-json": ("update nodes set data = '{x' where id = 'c1'", "nodes"),
    "node-data-null": ("update nodes set data = null where id = 'c1'", "nodes"),
    "node-data-a-list": ("update nodes set data = '[1]' where id = 'c1'", "nodes"),
    "settings-not-json": ("update workspaces set settings = '{x'", "workspaces"),
    "settings-a-list": ("update workspaces set settings = '[1]'", "workspaces"),
    "settings-out-of-range": ("update workspaces set settings = '{\"hop_limit\": -5}'",
                              "workspaces"),
}


def _snapshot(target: Target) -> list[Any]:
    return [target.query(f"select * from {table} order by 1")
            for table in ("packages", "nodes", "workspaces", "grants", "log", "consent")]


@pytest.mark.parametrize("edit", sorted(EDITS))
async def test_a_value_the_engine_never_writes_is_refused_at_open(
        world: Engine, make_engine: Any, target: Target, edit: str) -> None:
    await world.grant("acme.prompter", "clipboard.write")
    world.close()
    sql, table = EDITS[edit]
    target.execute(sql)
    before = _snapshot(target)
    with pytest.raises(StoreFailed) as caught:
        make_engine()
    assert table in str(caught.value), str(caught.value)
    assert _snapshot(target) == before, "a refused open changed the store"


async def test_a_nodes_bad_data_written_meanwhile_fails_the_call_closed(
        world: Engine, target: Target) -> None:
    await world.grant("acme.prompter", "clipboard.write")
    # On PostgreSQL an engine learns of a change from the feed alone: the hand that
    # edits records one (that says nothing of what it touched: the state is reloaded).
    edit = "update nodes set data = '{x' where id = 'c1'"
    target.execute({"sqlite": edit, "postgresql": f"{edit}; insert into changes"
                    " (seq, t, kind, subject) select coalesce(max(seq), 0) + 1, 0,"
                    " 'by-hand', '{}' from changes"})
    with pytest.raises(StoreFailed) as caught:
        await world.call("c1", "clipboard.copyText", None, {"text": "x"})
    assert "nodes" in str(caught.value), str(caught.value)


@pytest.mark.sqlite_only("a PostgreSQL column of double precision refuses text")
async def test_a_counted_calls_time_that_is_no_number_is_a_store_error(
        world: Engine, make_engine: Any, target: Target, tmp_path: Path) -> None:
    await world.grant("acme.prompter", "clipboard.write")
    assert (await world.call("c1", "clipboard.copyText", None, {"text": "x"})).allowed
    world.close()
    target.execute("update rate_events set t = 'soon'")
    with pytest.raises(StoreFailed) as caught:
        engine = make_engine()
        await engine.call("c1", "clipboard.copyText", None, {"text": "x"})
    assert "rate_events" in str(caught.value), str(caught.value)
