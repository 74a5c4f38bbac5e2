"""A card removed by another process and its id given to a new card, of another
package or of the same one: the new card's token is never sent the removed card's
events.

A card's event feed asks the consent history, as a stream opens, whether its
card was removed since the feed was made (`Feeds.get`). (Found by two reviews,
round 14: the server kept the removed card's feed and its ring under the id,
since only the server that removed a card dropped its feed; then a feed was made
anew only when the card's package changed, so a person who deleted a card and put
a fresh one of the same app back let the new card's token replay the old card's
tool calls.)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.service.conftest import Running, mint
from tests.service.test_events import read_frames
from tests.service.test_removed_node_tokens import OTHER
from tests.service.test_tool_calls import build


def _elsewhere(db: Path, package: str) -> None:
    """Another engine on the store (as the command line's ``--db`` opens one) removes c2
    and adds a new c2 of ``package``."""
    from engine import Engine, World

    async def main() -> None:
        engine = Engine.open(db, world=World(net=None, fs=None))
        try:
            await engine.remove_node("c2")
            await engine.add_node({"id": "c2", "type": "card", "package": package},
                                  workspace="w1")
            await engine.add_arrow({"id": "e4", "from": "a1", "to": "c2"})
        finally:
            engine.close()

    asyncio.run(main())


def _card_took_a_secret(running: Running, tmp_path: Path) -> tuple[Any, Any, dict, dict]:
    """c2 (acme.search) wired to a1, other.pkg installed; c2's stream takes a tool call
    with a secret. The operator's client, a1's, the tokens, and that event's frame."""
    tokens = build(running, tmp_path / "ws")  # c2 of acme.search
    op, a1 = running.client(), running.client(tokens["a1"])
    assert op.post("/v1/packages", json={"manifest": OTHER}).status_code in (200, 201)
    assert op.post("/v1/packages/other.pkg/install",
                   json={"grant": "required"}).status_code == 200
    assert op.post("/v1/workspaces/w1/arrows",
                   json={"id": "e3", "from": "a1", "to": "c2"}).status_code == 201
    with running.client(tokens["c2"]).stream("GET", "/v1/events") as stream:
        opened = a1.post("/v1/tool-calls", json={"agent": "a1", "card": "c2", "tool": "search",
                                                 "args": {"query": "the old card's secret"}})
        assert opened.json()["state"] == "open"
        (frame,) = read_frames(stream, 1)
    return op, a1, tokens, frame


def _resumed_without_the_secret(card: Any, a1: Any, frame: dict) -> None:
    """``card`` resumes from before ``frame``; what it is sent first (a new tool call's
    event, its own news) is never the old card's tool call."""
    with card.stream("GET", "/v1/events",
                     headers={"Last-Event-ID": str(int(frame["id"]) - 1)}) as stream:
        assert a1.post("/v1/tool-calls", json={"agent": "a1", "card": "c2", "tool": "search",
                                               "args": {"query": "new"}}).status_code == 200
        (first,) = read_frames(stream, 1)
    assert "the old card's secret" not in json.dumps(first), first


@pytest.mark.parametrize("package", ["other.pkg", "acme.search"])
def test_a_card_removed_by_another_process_does_not_replay_to_its_successor(
        serve_at: Callable[..., Running], tmp_path: Path, package: str) -> None:
    """The new card c2's token is never sent the removed c2's events, whoever removed it."""
    running = serve_at()
    op, a1, _tokens, frame = _card_took_a_secret(running, tmp_path)
    # GIVEN the command line (another process) removes c2 and adds a new card c2
    _elsewhere(running.db, package)
    # WHEN the new card's token resumes its stream on the running server, THEN it is
    # sent its own news, never the old card's tool call
    _resumed_without_the_secret(running.client(mint(op, "card:c2")), a1, frame)


def test_a_card_given_another_package_does_not_replay_its_old_events(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    """A card made another package's (``PATCH`` of its ``package``): the code now behind
    its token is another vendor's, and is never sent what the card took before."""
    running = serve_at()
    op, a1, tokens, frame = _card_took_a_secret(running, tmp_path)
    assert op.patch("/v1/nodes/c2", json={"package": "other.pkg"}).status_code == 200
    _resumed_without_the_secret(running.client(tokens["c2"]), a1, frame)
