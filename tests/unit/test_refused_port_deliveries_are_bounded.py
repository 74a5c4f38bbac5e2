"""SPEC §8 "Bounds": data an agent or a terminal sends out on a port and a card refuses is
logged like any refusal: its row keeps the first 4 KiB of the payload with the full length
and SHA-256, and beyond ``denial_log_limit`` such refusals in 60 s are counted toward one
`suppressed` row of the node that sent them (its id as the row's target), written before
that node's next port row and at close.

(Found by a helper: `Nodes.output` wrote every refused delivery with its whole payload and
never counted it, so an agent replying in a loop onto a card that may not read it wrote
unbounded rows.)"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from engine import Engine
from engine.store.log import PAYLOAD_KEPT

from ..conftest import manifest, offer_install


async def _reader(world: Engine, port_from: str = "a1", port: str = "reply") -> None:
    # A card with an input port that does not declare agents.output.
    await offer_install(world, manifest("acme.reader", {"cards.connected": {}},
                                        ports={"inputs": ["in"], "outputs": []}))
    await world.add_node({"id": "r1", "type": "card", "package": "acme.reader"},
                         workspace="w1")
    await world.add_arrow({"id": "pr", "from": port_from, "from_port": port, "to": "r1",
                           "to_port": "in"})


async def test_a_refused_reply_keeps_4_kib_of_it(world: Engine) -> None:
    """A long reply refused on a port keeps its first 4 KiB, full length and SHA-256."""
    await _reader(world)
    text = "r" * 50_000
    await world.agent_replied("a1", text)
    row = world.log_rows(arrow="pr")[-1]
    assert (row["outcome"], row["reason"]) == ("denied", "not-declared"), row
    assert row["payload"] == text[:PAYLOAD_KEPT]
    assert row["payload_bytes"] == len(text)
    assert row["payload_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert world.verify_log().ok


async def test_refusals_beyond_the_limit_are_summed_up_for_the_sender(
        world: Engine, clock: Any) -> None:
    """Past denial_log_limit, a sender's refused deliveries make one `suppressed` row."""
    await _reader(world)
    await world.set_settings("w1", {"denial_log_limit": 2})
    # GIVEN an agent replying five times in a minute onto a card that may not read it
    for i in range(5):
        await world.agent_replied("a1", f"reply {i}")
    # THEN two rows of their own, three only counted
    assert [r["outcome"] for r in world.log_rows(arrow="pr")] == ["denied", "denied"]
    # WHEN the agent's next refused reply is logged, a minute later
    clock.t += 61
    await world.agent_replied("a1", "reply 5")
    # THEN the summary comes first, naming the sender
    rows = [r for r in world.log_rows() if r["target"] == "a1" and r["call"] == "port:reply"
            or r["outcome"] == "suppressed"]
    assert [r["outcome"] for r in rows] == ["denied", "denied", "suppressed", "denied"], rows
    summary = rows[2]
    assert (summary["target"], summary["workspace"], summary["card"]) == ("a1", "w1", None)
    assert json.loads(summary["payload"])["count"] == 3
    assert summary["code"] == "PERMISSION_DENIED"
    assert world.verify_log().ok


async def test_a_terminal_exit_loop_is_summed_up_at_close(make_engine: Any, db_path: Path,
                                                        world: Engine) -> None:
    """A terminal's refused exit codes past the limit are summed up at close."""
    await _reader(world, "t1", "exit")
    await world.set_settings("w1", {"denial_log_limit": 1})
    for code in range(4):
        await world.command_exited("t1", code)
    world.close()
    again: Engine = make_engine()
    rows = [r for r in again.log_rows() if r["target"] == "t1"]
    assert [r["outcome"] for r in rows] == ["denied", "suppressed"], rows
    assert json.loads(rows[-1]["payload"])["count"] == 3
    assert again.verify_log().ok
