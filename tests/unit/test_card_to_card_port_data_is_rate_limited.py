"""Data a card sends another card on a port arrow counts in a rolling window (SPEC §8
"Bounds": no card can exhaust the store), on SQLite and on PostgreSQL.

Each delivery is a row on the port arrow holding the data whole (up to ``max_payload``,
256 KiB), and card-to-card data needs no permission, so nothing else bounds it: it
counts under the key ``port-data``, 60 deliveries in any 60 s, in the windows of SPEC
§6 (the spawn tree's root's, kept across a restart); one more is ``RATE_LIMITED`` with
``retry_after``, logged as any refusal (4 KiB of it), and not delivered.

(Found in round 27: ``POST /v1/emit`` from one card to another was answered and logged
whole as fast as a card sent it.)
"""

from __future__ import annotations

from pathlib import Path

from engine.app.replay import VirtualClock
from engine.core.events import Event
from tests.conftest import manifest, offer_install, open_store


async def test_port_data_between_cards_counts_in_a_rolling_window(store: str,
                                                                  tmp_path: Path) -> None:
    """60 deliveries in a minute; the 61st is refused with retry_after, logged cut to
    4 KiB, not delivered; a restart keeps the window; a minute on, data flows again."""
    clock = VirtualClock(1000.0)
    events: list[Event] = []
    engine = open_store(store, clock=clock, sink=events.append)
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.src", {}, ports={"inputs": [],
                                                                "outputs": ["out"]}))
    await offer_install(engine, manifest("acme.dst", {}, ports={"inputs": ["in"],
                                                                "outputs": []}))
    await engine.add_node({"id": "src", "type": "card", "package": "acme.src"}, workspace="w1")
    await engine.add_node({"id": "dst", "type": "card", "package": "acme.dst"}, workspace="w1")
    await engine.add_arrow({"id": "p1", "from": "src", "from_port": "out", "to": "dst",
                            "to_port": "in"})
    # GIVEN 60 deliveries within one minute
    for i in range(60):
        assert (await engine.emit("src", "out", f"chunk {i}"))["p1"].outcome == "ok"
        clock.t += 0.5
    # WHEN the card sends once more, 8 KiB
    refused = (await engine.emit("src", "out", "x" * 8192))["p1"]
    # THEN it is refused with when it may send again, and the data goes nowhere
    assert (refused.outcome, refused.code, refused.reason) == (
        "rate-limited", "RATE_LIMITED", "port-data")
    assert refused.retry_after is not None and 29 < refused.retry_after <= 30
    delivered = [e for e in events if e.type == "port.data" and e.card == "dst"]
    assert len(delivered) == 60
    row = engine.log_rows(arrow="p1")[-1]
    assert (row["outcome"], row["code"]) == ("rate-limited", "RATE_LIMITED")
    assert len(str(row["payload"]).encode()) <= 4096
    engine.close()
    again = open_store(store, clock=clock)
    try:
        assert (await again.emit("src", "out", "y"))["p1"].code == "RATE_LIMITED"
        clock.t += 31
        assert (await again.emit("src", "out", "z"))["p1"].outcome == "ok"
    finally:
        again.close()
