"""SPEC §7, §10: what a catch-up applied before the store failed it is still told, once.

Rule: a catch-up puts another engine's changes in place one by one; when the
store fails it midway (an error reading a row, the connection gone — not a
catch-up found impossible), what it had applied stays in this engine's state and
is told with the next catch-up that succeeds (the changes read again, or the
whole reload), as the engine that made them told its own listeners: a hold
approved elsewhere still reaches the agent's driver here, once.

(Found in round 21: the next catch-up found those changes already in place, no
move at all, and told nothing: the approved prompt stayed ``delivered`` and never
reached the driver, the agent never worked on it.)
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import Any

import psycopg
import pytest

from engine import Engine
from engine.effects.drivers import ScriptedAgent
from engine.store import loading
from tests.conftest import manifest, offer_install, until


async def test_a_hold_approved_elsewhere_reaches_the_driver_after_a_failed_catch_up(
        open_engine: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    app: Engine = open_engine()
    (tmp_path / "ws").mkdir()
    await app.create_workspace("w1", tmp_path / "ws")
    await offer_install(app, manifest("acme.p", {"agents.prompt": {}}))
    await app.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await app.add_node({"id": "y1", "type": "agent", "name": "Y", "dangerous": True},
                       workspace="w1")
    await app.add_arrow({"id": "e1", "from": "c1", "to": "y1"})
    received: list[str] = []
    driver = ScriptedAgent("y1")
    submit = driver.submit

    def recording(text: str) -> None:
        received.append(text)
        submit(text)

    driver.submit = recording  # type: ignore[method-assign]
    await app.attach_driver("y1", driver)
    held = await app.call("c1", "agents.prompt", "y1", {"text": "clean"})
    assert held.outcome == "held", held

    tui: Engine = open_engine()  # another process, no driver
    await tui.approve_hold(str(held.prompt),
                           text_sha256=hashlib.sha256(b"clean").hexdigest())

    # The store fails once the prompt is in place, before the catch-up ends.
    newest_time = loading.newest_time
    failures: list[Exception] = [psycopg.OperationalError("the server is gone")
                                 if app.store.file is None
                                 else sqlite3.OperationalError("disk I/O error")]

    def failing_once(db: Any) -> float | None:
        if failures:
            raise failures.pop()
        return newest_time(db)

    monkeypatch.setattr(loading, "newest_time", failing_once)
    with pytest.raises(Exception):  # noqa: B017 - the store's own error, whichever it is
        app.catch_up()
    assert failures == [], "the catch-up did not fail: no test"
    assert app.state.prompts[str(held.prompt)].state == "delivered", "not applied: no test"

    app.catch_up()
    await until(lambda: received == ["clean"])
    app.catch_up()
    assert received == ["clean"], "handed to the driver more than once"
