"""A refused file call's message names the path it was given once, and a long one cut
(`engine.core.text.clipped`: its start and end, the number of characters left out
between them): a path of up to 4 KB is the card's own input, whole in the call's log
row, not echoed back whole in every refusal.

Found in round 22: the refusal quoted the whole path (up to 4,096 bytes) in its words,
so every refused call of a card that sent long paths carried them back in full.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

#: A path longer than any refusal should quote: 40 folders of 99 characters.
_LONG = "/".join(f"{i:02d}" + "d" * 97 for i in range(40))


@pytest.mark.parametrize(("call", "path", "reason"), [
    ("fs.readText", _LONG + "/.env", "secret-path"),
    ("fs.writeText", ".git/" + _LONG + "/end.txt", "protected-path"),
    ("fs.readText", _LONG + "/nothing.txt", "missing"),
])
async def test_a_long_path_is_named_once_and_cut(make_engine, tmp_path: Path, call: str,
                                                 path: str, reason: str) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data",
                                                                trash=tmp_path / "trash")))
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    args = {"path": path, **({"text": "x"} if call == "fs.writeText" else {})}
    decision = await engine.call("c1", call, args=args)
    assert decision.reason == reason, decision.message
    message = decision.message
    assert len(message) < 700, len(message)
    assert message.count(path[:60]) == 1 and message.count(path[-12:]) == 1, message
    assert "characters left out" in message, message
    assert engine.log_rows()[-1]["payload"] == path  # the log row keeps it whole
