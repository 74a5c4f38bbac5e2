"""The durability tests run on both stores: ``target`` is a SQLite file, then PostgreSQL.

``make_engine`` (and so ``world``) opens its engines on the target. A test
marked ``sqlite_only("why")`` is inherently about the SQLite file; its
PostgreSQL run is skipped with that reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.replay import VirtualClock
from engine.core.errors import ApprovalRefused
from tests.durability.targets import Target


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker (the project runs with warnings as errors)."""
    config.addinivalue_line("markers", "sqlite_only(why): the test is about the SQLite file; "
                                       "its PostgreSQL run is skipped, naming why")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def target(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Target]:
    """The store of this test: the SQLite file ``db_path``, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield Target("sqlite", db_path)
        return
    marker = request.node.get_closest_marker("sqlite_only")
    if marker is not None:
        pytest.skip(f"SQLite only: {marker.args[0]}")
    found = Target("postgresql", db_path, request.getfixturevalue("pg_dsn"))
    try:
        yield found
    finally:
        found.close()


@pytest.fixture
def make_engine(target: Target, clock: VirtualClock) -> Iterator[Any]:
    """Open engines on the test's store (a restart is opening another)."""
    opened: list[Engine] = []

    def make(**kwargs: Any) -> Engine:
        engine = target.open(clock=clock, **kwargs)
        opened.append(engine)
        return engine

    yield make
    for engine in opened:
        try:
            engine.close()
        except Exception:
            pass


@pytest.fixture
async def consented(world: Engine, target: Target) -> Target:
    """A store with installs, arrows, a grant, a revoke and a refused attempt; engine closed."""
    await world.grant("acme.prompter", "clipboard.write")
    await world.revoke("acme.prompter", "clipboard.write")
    with pytest.raises(ApprovalRefused):
        await world.grant("acme.prompter", "clipboard.write", by="agent:a1")
    world.close()
    return target
