"""SPEC §3, §10: live output (``agents.onOutput``) reaches a card only while the card
may see it as the store stands when it is sent: once another engine removed the
arrow, revoked ``agents.output`` or removed the card, the output sent here next
reaches no card, though this engine made no operation since.

Rule: an event is gated when sent (SPEC §3), and a revoke holds "from that
moment" on every engine of the store (SPEC §10); live output stands on no state
change of its own, so before it is offered to the cards this engine catches up
with the store (as a watch's changes do, round 19), and a store that cannot be
read withholds it from the cards (fail closed).

(Found in round 22: a driver's output was judged on this engine's state as it
stood, which takes in another engine's commits only at its next operation or
timer tick; output printed after an arrow was removed through another server, or
the command line, still reached the card.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import StoreFailed
from tests.conftest import manifest, offer_install
from tests.durability.wiring import Recording


async def _watching(make_engine: Any, tmp_path: Path) -> tuple[Any, Recording, Any]:
    """Engine A with card c1 (``agents.output``) wired by arrow e1 to terminal t1, which
    A drives, c1 allowed its live output: A, t1's driver and c1's subscription."""
    a = make_engine()
    (tmp_path / "ws").mkdir()
    await a.create_workspace("w1", tmp_path / "ws")
    await offer_install(a, manifest("acme.o", {"agents.output": {}}))
    await a.add_node({"id": "c1", "type": "card", "package": "acme.o"}, workspace="w1")
    await a.add_node({"id": "t1", "type": "terminal"}, workspace="w1")
    await a.add_arrow({"id": "e1", "from": "c1", "to": "t1"})
    driver = Recording("t1")
    await a.attach_driver("t1", driver)
    assert (await a.call("c1", "agents.onOutput", "t1")).outcome == "ok"
    sub = a.subscribe("c1")
    # The watch works: output before the change reaches the card.
    driver.host.output("t1", "before")
    assert [e.data["text"] for e in sub.ready() if e.type == "agents.onOutput"] == ["before"]
    return a, driver, sub


@pytest.mark.parametrize("change", ["remove-arrow", "revoke", "remove-card"])
async def test_output_after_a_change_by_another_engine_reaches_no_card(
        make_engine: Any, tmp_path: Path, change: str) -> None:
    a, driver, sub = await _watching(make_engine, tmp_path)
    b = make_engine()
    if change == "remove-arrow":
        await b.remove_arrow("e1")
    elif change == "revoke":
        await b.revoke("acme.o", "agents.output")
    else:
        await b.remove_node("c1")
    driver.host.output("t1", "after the change")
    taken = [e.data for e in sub.ready() if e.type == "agents.onOutput"]
    assert taken == [], f"output after the change reached the card: {taken}"


async def test_output_the_store_cannot_judge_reaches_no_card(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, driver, sub = await _watching(make_engine, tmp_path)

    def unreadable() -> None:
        raise StoreFailed("the store cannot be reached")

    monkeypatch.setattr(a._ctx.store, "sync", unreadable)
    driver.host.output("t1", "unjudged")
    taken = [e.data for e in sub.ready() if e.type == "agents.onOutput"]
    assert taken == [], f"output the store could not judge reached the card: {taken}"
