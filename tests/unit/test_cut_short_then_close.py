"""Every wait ends at shutdown, even when one was cut short (client gone, token revoked) in the same turn.

(Found by a review, round 14, when it did not hold: the shutdown watcher rescheduled a timeout already expiring and died, leaving the other waits to their own timeouts.)


`Service.unless_closing`'s ``cut_short`` reschedules the wait's `asyncio.Timeout` to
now; for the one turn of the loop between the timeout firing (the Timeout is then
*expiring*) and the wait's task leaving it (which removes it from ``_cuts``), the
Timeout is still in ``_cuts``. If the shutdown watcher (`Service._cut_at_close`) runs
in that turn, ``cut.reschedule`` raises ``RuntimeError: Cannot change state of
expiring Timeout``: the watcher dies with it ("Task exception was never retrieved")
and every wait after that one in the set runs on to its own timeout (up to 300 s)
instead of ending at shutdown. Before 2f437f3 nothing but the watcher itself
rescheduled a cut, so none could be expiring when it ran.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from engine.service.context import Service


async def test_a_wait_cut_short_as_the_server_closes_leaves_no_wait_behind() -> None:
    """Every wait ends at shutdown, even when one was cut short in the same turn."""
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, ctx: errors.append(ctx))
    service = Service(engine=None, tokens=None)  # type: ignore[arg-type]  # unused here

    async def forever() -> None:
        await loop.create_future()

    # GIVEN many waits in progress, each with its own Watch ends
    watches = [SimpleNamespace(ends=(loop.create_future(), loop.create_future()))
               for _ in range(30)]
    waits = [loop.create_task(service.unless_closing(forever(), w)) for w in watches]
    for _ in range(3):
        await asyncio.sleep(0)
    # WHEN the first one's client goes, and the server begins to close two turns later
    # (the turn the first wait's Timeout expires in, ahead of its expiry)
    loop.call_soon(loop.call_soon, service.closing.set)
    watches[0].ends[1].set_result(None)
    # THEN every wait ends (None: cut short), and the shutdown watcher did not fail
    done, pending = await asyncio.wait(waits, timeout=2)
    for task in pending:
        task.cancel()
    assert service._cutter is not None and service._cutter.done()
    assert service._cutter.exception() is None, repr(service._cutter.exception())
    assert not pending, f"{len(pending)} waits not ended at shutdown"
    assert [t.result() for t in done] == [None] * len(waits)
    assert not errors, errors
