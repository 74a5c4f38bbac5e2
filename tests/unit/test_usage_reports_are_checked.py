"""A usage report names a workspace that exists and carries a count and an amount.

`record_usage` refuses, changing nothing, a report for a workspace that does
not exist (NOT_FOUND) and one whose tokens are not a whole number from 0 or
whose cost is not a finite number from 0, or that would carry a total beyond
what a store keeps (INVALID_ARGUMENT naming ``tokens`` or ``cost``). A total an
older version stored as NULL (a NaN cost) reads back as 0, so usage keeps
adding up.

(Found by a helper: record_usage checked nothing; a NaN cost was stored as
NULL and made every later report raise TypeError after a restart, an unknown
workspace was accepted and a huge token count raised a bare OverflowError.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, InvalidArgument, NotFound, World
from tests.conftest import manifest, offer_install


async def _engine_with_usage(make_engine: Any, tmp_path: Path) -> Engine:
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.u", {"usage.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.u"}, workspace="w1")
    await engine.record_usage("w1", 100, 0.5)
    return engine


async def test_a_non_finite_cost_is_refused_and_changes_nothing(
        make_engine: Any, tmp_path: Path, db_path: Path) -> None:
    """A NaN cost is refused naming ``cost``; after a restart usage still adds up."""
    engine = await _engine_with_usage(make_engine, tmp_path)
    # WHEN a usage report carries a cost that is not a number
    with pytest.raises(InvalidArgument, match="cost"):
        await engine.record_usage("w1", 1, float("nan"))
    assert engine.state.usage["w1"] == (100, 0.5)
    engine.close()
    # THEN after a restart usage still adds up and reads back as numbers
    again = Engine.open(db_path, world=World(net=None, fs=None))
    try:
        await again.record_usage("w1", 1, 0.25)
        value = (await again.call("c1", "usage.get")).value
        assert value == {"tokens": 101, "cost": 0.75}, value
    finally:
        again.close()


@pytest.mark.parametrize(("tokens", "cost", "named"), [
    (10**400, 0.1, "tokens"),
    pytest.param(10**5000, 0.1, "tokens", id="tokens-of-5000-digits"),
    (1, 10**400, "cost"),
    (1, "x" * 10**6, "cost"),
    (2**63, 0.1, "tokens"),
    (-1, 0.1, "tokens"),
    (True, 0.1, "tokens"),
    (1.5, 0.1, "tokens"),
    (None, 0.1, "tokens"),
    (1, float("inf"), "cost"),
    (1, -0.5, "cost"),
    (1, "0.1", "cost"),
    (1, None, "cost"),
])
async def test_a_report_that_is_not_a_count_and_an_amount_is_refused(
        make_engine: Any, tmp_path: Path, tokens: Any, cost: Any, named: str) -> None:
    """Tokens not a whole number from 0, a cost not a finite number from 0, or a
    total beyond a store's range: INVALID_ARGUMENT naming which, nothing changed."""
    engine = await _engine_with_usage(make_engine, tmp_path)
    before = engine.state.usage["w1"]
    with pytest.raises(InvalidArgument, match=named):
        await engine.record_usage("w1", tokens, cost)
    assert engine.state.usage["w1"] == before


async def test_a_report_that_would_overflow_a_total_is_refused(
        make_engine: Any, tmp_path: Path) -> None:
    """Totals stay within what a store keeps: beyond 2**63 - 1 tokens or an infinite cost
    is refused naming which, nothing changed."""
    engine = await _engine_with_usage(make_engine, tmp_path)
    await engine.record_usage("w1", 2**63 - 1 - 100, 1.7e308)
    before = engine.state.usage["w1"]
    with pytest.raises(InvalidArgument, match="tokens"):
        await engine.record_usage("w1", 1, 0.0)
    with pytest.raises(InvalidArgument, match="cost"):
        await engine.record_usage("w1", 0, 1.7e308)
    assert engine.state.usage["w1"] == before


async def test_usage_for_a_workspace_that_does_not_exist_is_refused(
        make_engine: Any, tmp_path: Path) -> None:
    """A report for an unknown workspace is NOT_FOUND and stores nothing."""
    engine = make_engine()
    with pytest.raises(NotFound, match="no-such-workspace"):
        await engine.record_usage("no-such-workspace", 1, 0.1)
    assert "no-such-workspace" not in engine.state.usage


async def test_a_null_total_an_older_version_stored_reads_as_zero(
        make_engine: Any, tmp_path: Path, db_path: Path) -> None:
    """A NULL cost or token total in the store loads as 0 and later reports add to it."""
    engine = await _engine_with_usage(make_engine, tmp_path)
    engine.close()
    with sqlite3.connect(db_path) as db:  # what an older version wrote for a NaN cost
        db.execute("update usage set tokens = null, cost = null where workspace = 'w1'")
    db.close()
    again = Engine.open(db_path, world=World(net=None, fs=None))
    try:
        assert again.state.usage["w1"] == (0, 0.0)
        await again.record_usage("w1", 3, 0.25)
        assert (await again.call("c1", "usage.get")).value == {"tokens": 3, "cost": 0.25}
    finally:
        again.close()
