"""SPEC §8: each arrow log row holds the fields the spec names — sequence number, time,
workspace, arrow (none when no arrow connected the two), card, package and version hash,
call, target, the full payload, the causal chain, outcome, error code and reason, and who
approved — one row for each decision (``ok``, ``queued``, ``held``, ``denied``,
``rate-limited``) and one for each later resolution (``approved``, ``rejected``,
``expired``, ``cancelled``); a refused call's row keeps the first 4 KiB of its payload
with the full length and SHA-256. On both stores, read again after a restart, and the
log verifies.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from engine import Engine
from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install

KIB = 1024


async def _canvas(engine: Engine, folder: Path) -> str:
    """Card c1 wired to a waiting agent aw (ew), a dangerous one ad (ed), a working one
    aq (eq) and a terminal t1 (et); returns the package's version hash."""
    folder.mkdir()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.log", {"agents.prompt": {},
                                                      "terminals.write": {},
                                                      "clipboard.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.log"},
                          workspace="w1")
    for agent, fields in (("aw", {"status": "waiting"}), ("ad", {"dangerous": True}),
                          ("aq", {"status": "working"})):
        await engine.add_node({"id": agent, "type": "agent", **fields}, workspace="w1")
        await engine.add_arrow({"id": f"e{agent[1]}", "from": "c1", "to": agent})
    await engine.add_node({"id": "t1", "type": "terminal"}, workspace="w1")
    await engine.add_arrow({"id": "et", "from": "c1", "to": "t1"})
    return engine.state.packages["acme.log"].hash


def _fields(row: dict[str, Any]) -> tuple[Any, ...]:
    """What a row says of its call, beside its number, time and chain."""
    return (row["workspace"], row["arrow"], row["card"], row["package"], row["call"],
            row["target"], row["payload"], row["outcome"], row["code"], row["reason"],
            row["approver"])


async def test_every_decision_and_resolution_is_a_row_with_every_field(
        make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """A completed command, a delivered, a queued and a held prompt, a refusal, a rate
    limit, then an approval, a rejection, an expiry and a cancellation: each a row with
    every field SPEC §8 names, in order, the same after a restart."""
    # GIVEN a card wired to three agents and a terminal
    engine = make_engine()
    version = await _canvas(engine, tmp_path / "ws")
    start = engine.log_end()
    # WHEN it makes one call of each kind, and holds are answered, expire and are cancelled
    assert (await engine.call("c1", "terminals.run", "t1", {"command": "ls -la"})).allowed
    assert (await engine.call("c1", "agents.prompt", "aw", {"text": "go"})).allowed
    queued = await engine.call("c1", "agents.prompt", "aq", {"text": "later"})
    held = [await engine.call("c1", "agents.prompt", "ad", {"text": f"hold {i}"})
            for i in range(3)]
    assert queued.outcome == "queued" and [d.outcome for d in held] == ["held"] * 3
    assert (await engine.call("c1", "clipboard.copyText", None, {"text": "one"})).allowed
    refused = await engine.call("c1", "agents.prompt", "t1", {"text": "to a terminal"})
    limited = await engine.call("c1", "clipboard.copyText", None, {"text": "two"})
    assert (refused.reason, limited.outcome) == ("wrong-target", "rate-limited")
    await engine.approve_hold(held[0].prompt,
                              text_sha256=hashlib.sha256(b"hold 0").hexdigest())
    await engine.reject_hold(held[1].prompt)
    clock.t += 301.0
    await engine.expire_due()
    await engine.remove_arrow("eq")
    # THEN each is a row of its own, with the fields the spec names
    expected = [
        ("w1", "et", "c1", "acme.log", "terminals.run", "t1", "ls -la", "ok", None, None,
         None),
        ("w1", "ew", "c1", "acme.log", "agents.prompt", "aw", "go", "queued", None, None,
         None),
        ("w1", "eq", "c1", "acme.log", "agents.prompt", "aq", "later", "queued", None,
         None, None),
        *[("w1", "ed", "c1", "acme.log", "agents.prompt", "ad", f"hold {i}", "held", None,
           None, None) for i in range(3)],
        ("w1", None, "c1", "acme.log", "clipboard.copyText", None, "one", "ok", None, None,
         None),
        ("w1", "et", "c1", "acme.log", "agents.prompt", "t1", "to a terminal", "denied",
         "PERMISSION_DENIED", "wrong-target", None),
        ("w1", None, "c1", "acme.log", "clipboard.copyText", None, "two", "rate-limited",
         "RATE_LIMITED", "clipboard", None),
        ("w1", "ed", "c1", "acme.log", "agents.prompt", "ad", "hold 0", "approved", None,
         None, "operator"),
        ("w1", "ed", "c1", "acme.log", "agents.prompt", "ad", "hold 1", "rejected",
         "PROMPT_REJECTED", None, "operator"),
        ("w1", "ed", "c1", "acme.log", "agents.prompt", "ad", "hold 2", "expired",
         "HOLD_EXPIRED", None, None),
        ("w1", "eq", "c1", "acme.log", "agents.prompt", "aq", "later", "cancelled",
         "PERMISSION_DENIED", "not-connected", None),
    ]
    for opened in (engine, make_engine()):  # and after a restart
        rows = [r for r in opened.log_rows() if r["seq"] > start]
        assert [_fields(r) for r in rows] == expected
        assert [r["seq"] for r in rows] == list(range(start + 1, start + 1 + len(expected)))
        assert all(r["version"] == version for r in rows)
        times = [r["t"] for r in rows]
        assert times == sorted(times) and times[0] == 1000.0 and times[-1] == 1301.0
        # a prompt's rows carry its chain (card, agent); a command's none of a tool call's
        chains = {r["payload"]: r["chain"] for r in rows if r["call"] == "agents.prompt"}
        assert chains["go"] == ["c1", "aw"] and chains["hold 2"] == ["c1", "ad"]
        assert opened.verify_log().ok


async def test_a_refused_rows_payload_is_its_first_4_kib_with_length_and_digest(
        make_engine: Any, tmp_path: Path) -> None:
    """A refused 100 KiB command keeps its first 4 KiB, its length and its SHA-256 (an
    accepted one its whole text and neither), on both stores, after a restart, and the
    log verifies."""
    # GIVEN a card wired to a terminal
    engine = make_engine()
    await _canvas(engine, tmp_path / "ws")
    command = "echo " + "€" * (34 * KIB)  # 3 bytes each: 4 KiB ends inside a character
    whole = command.encode()
    # WHEN it runs the command on an agent (refused) and on the terminal (accepted)
    assert (await engine.call("c1", "terminals.run", "aw", {"command": command})).reason \
        == "wrong-target"
    assert (await engine.call("c1", "terminals.run", "t1", {"command": command})).allowed
    # THEN the refused row keeps the start, cut at a character, with length and digest
    for opened in (engine, make_engine()):
        denied, ok = opened.log_rows()[-2:]
        kept = denied["payload"].encode()
        assert len(kept) <= 4 * KIB and whole.startswith(kept) and len(kept) > 4 * KIB - 3
        assert (denied["payload_bytes"], denied["payload_sha256"]) == \
            (len(whole), hashlib.sha256(whole).hexdigest())
        assert (ok["payload"], ok["payload_bytes"], ok["payload_sha256"]) == \
            (command, None, None)
        assert opened.verify_log().ok
