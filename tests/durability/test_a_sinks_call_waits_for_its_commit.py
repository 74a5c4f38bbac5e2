"""A call an app makes from its event sink returns once its row is durable, like any call.

An app's sink (and a driver) gets each committed batch's events; an app may well
react by calling the engine (a task it starts from the sink). That call is an
operation of its own: it waits for its own commit.

(Noticed in round 17, fixed in round 18: the batch's commit ran in a copy of the
context of the operation that had opened it, so the sink ran with that operation's
list of batches set (`JOINED`), and a call started from it took itself for a step
of an operation already over: it was answered before its row was committed, and
told nothing when that commit failed.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine import Engine
from engine.core.events import Event

from ..conftest import notes_world
from .targets import Target


async def test_a_call_started_by_the_sink_is_durable_when_it_returns(
        target: Target, tmp_path: Path) -> None:
    engine: Engine = await notes_world(target.location, tmp_path, 2)
    seen: list[tuple[str, bool]] = []
    started: list[asyncio.Task[None]] = []

    async def react(text: str) -> None:
        d = await engine.call("c1", "cards.note.append", "n1", {"text": text})
        assert d.outcome == "ok"
        # Another connection reads it: only committed rows are visible there.
        rows = target.query("select count(*) from log where payload = ?", [text])
        seen.append((text, rows[0][0] == 1))

    def sink(event: Event) -> None:
        if event.type == "agents.changed" and not started:
            started.append(asyncio.get_running_loop().create_task(react("from the sink")))

    engine.sink = sink
    await engine.add_node({"id": "a9", "type": "agent"}, workspace="w1")
    assert started, "the sink saw no agents.changed"
    await started[0]
    assert seen == [("from the sink", True)]
    engine.close()
