"""SPEC §8: every prompt and terminal command, accepted or not, is logged with its payload,
and "Bounds": a refused call's row keeps the first 4 KiB of its payload with the full
length and SHA-256. Data a card puts on a port is such a payload whichever way it is
refused: bad data (a lone surrogate, over ``max_payload``), a port the card does not
have, a context that names no tool call, or data that is not text for a prompt or
command port; its row keeps it as the same text sent as ``agents.prompt`` keeps it.

(Found by spec26: a refused emit's row had no payload at all, so a card could send a
prompt down a port and leave nothing of it in the log.)"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from engine import Engine
from engine.store.log import PAYLOAD_KEPT

from ..conftest import manifest, offer_install

LIMIT = 1024


async def _world(open_engine: Any, tmp_path: Path) -> Engine:
    """On both stores (`open_engine`): the rows are each store's own."""
    engine: Engine = open_engine()
    await engine.create_workspace("w1", tmp_path, settings={"max_payload": LIMIT})
    await offer_install(engine, manifest("acme.out", {"agents.prompt": {}},
                                         ports={"inputs": [], "outputs": ["out"]}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.out"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "p1", "from": "c1", "from_port": "out", "to": "a1",
                            "to_port": "prompt"})
    return engine


def _kept(row: dict[str, Any]) -> tuple[Any, Any, Any]:
    return row["payload"], row["payload_bytes"], row["payload_sha256"]


async def test_a_refused_emit_keeps_its_text_as_a_refused_prompt_does(
        open_engine: Any, tmp_path: Path) -> None:
    engine = await _world(open_engine, tmp_path)
    for text in ("go\ud800on", "p" * (LIMIT + 1), "é" * (PAYLOAD_KEPT + 10)):
        refused = await engine.emit("c1", "out", text)
        assert refused[""].code == "INVALID_ARGUMENT"
        emitted = engine.log_rows(card="c1")[-1]
        call = await engine.call("c1", "agents.prompt", "a1", {"text": text})
        assert call.code == "INVALID_ARGUMENT"
        called = engine.log_rows(card="c1")[-1]
        assert emitted["payload"] is not None
        assert _kept(emitted) == _kept(called)
    long = engine.log_rows(card="c1")[-1]
    raw = ("é" * (PAYLOAD_KEPT + 10)).encode()
    assert long["payload_bytes"] == len(raw)
    assert long["payload_sha256"] == hashlib.sha256(raw).hexdigest()
    assert engine.verify_log().ok


async def test_an_emit_refused_before_its_data_is_looked_at_keeps_it(
        open_engine: Any, tmp_path: Path) -> None:
    """No such port, or a context naming no tool call: the row keeps what was sent."""
    engine = await _world(open_engine, tmp_path)
    assert (await engine.emit("c1", "nope", "rm -rf"))[""].reason == "port"
    assert engine.log_rows(card="c1")[-1]["payload"] == "rm -rf"
    assert (await engine.emit("c1", "out", "rm -rf", context="t9"))[""].reason == "context"
    assert engine.log_rows(card="c1")[-1]["payload"] == "rm -rf"


async def test_data_that_is_not_text_keeps_its_json(open_engine: Any, tmp_path: Path) -> None:
    """A prompt port takes text: other data is refused on the arrow, its JSON kept."""
    engine = await _world(open_engine, tmp_path)
    data = {"text": "do it", "n": [1, 2]}
    out = await engine.emit("c1", "out", data)
    assert (out["p1"].code, out["p1"].reason) == ("INVALID_ARGUMENT", "data")
    row = engine.log_rows(arrow="p1")[-1]
    assert json.loads(row["payload"]) == data
    # Over max_payload as JSON (under 4 KiB): refused at check 3, kept whole.
    big = {"t": ["x" * 100] * 20}
    assert (await engine.emit("c1", "out", big))[""].reason == "data"
    assert json.loads(engine.log_rows(card="c1")[-1]["payload"]) == big
