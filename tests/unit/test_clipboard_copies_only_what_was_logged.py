"""The clipboard gets a card's text only once the call's row is committed.

SPEC §8: nothing a card was allowed to do goes unlogged. A copy is carried out
after its batch commits (as a prompt reaches its agent and a command its terminal:
`World.committed`), so a commit that fails leaves the clipboard as it was and the
card is told `STORE_FAILED`.

(Found by a helper in round 18: the copy was made inside the write, before the
commit; a commit that then failed left the text on the clipboard with no row.)
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engine import Engine, StoreFailed


async def test_a_copy_whose_commit_failed_never_reaches_the_clipboard(
        world: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    await world.grant("acme.prompter", "clipboard.write")
    await asyncio.sleep(0)  # the grant's committed anchor record, written at the next turn
    anchor = world.anchor
    assert anchor is not None
    real_write = anchor.write

    def failing(state: Any) -> None:
        if state.pending is not None:
            raise OSError(28, "No space left on device")
        real_write(state)

    monkeypatch.setattr(anchor, "write", failing)
    with pytest.raises(StoreFailed):
        await world.call("c1", "clipboard.copyText", None, {"text": "the secret"})
    monkeypatch.undo()
    assert world.world.clipboard_texts == []
    assert (await world.call("c1", "clipboard.copyText", None, {"text": "ok"})).outcome == "ok"
    assert world.world.clipboard_texts == ["ok"]
