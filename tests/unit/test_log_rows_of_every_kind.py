"""SPEC §8: a row for each decision (``ok``, ``queued``, ``held``, ``denied``,
``rate-limited``) and for each later resolution of a held or queued prompt
(``approved``, ``rejected``, ``expired``, ``cancelled``); each row with the fields the
spec lists, and the rows one hash chain."""

from __future__ import annotations

from typing import Any

from engine import Engine

from ..conftest import manifest, offer_install

#: The fields SPEC §8 lists for every row, as `Engine.log_rows` names them.
FIELDS = {"seq", "t", "workspace", "arrow", "card", "package", "version", "call", "target",
          "payload", "chain", "outcome", "code", "reason", "approver", "prev", "hash"}


async def test_every_kind_of_row_carries_the_fields_of_its_decision(
        make_engine: Any, tmp_path: Any, clock: Any) -> None:
    engine: Engine = make_engine()
    await engine.create_workspace("w1", tmp_path, settings={"hold_timeout": 300})
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}, tools=["ping"]))
    version = "sha256:" + engine.state.packages["acme.p"].hash.removeprefix("sha256:")
    for node in ({"id": "c1", "type": "card", "package": "acme.p"},
                 {"id": "a1", "type": "agent", "status": "working"},
                 {"id": "a2", "type": "agent", "dangerous": True},
                 {"id": "a3", "type": "agent"}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "a2"})
    await engine.add_arrow({"id": "e3", "from": "a3", "to": "c1"})
    start = clock.t

    queued = await engine.call("c1", "agents.prompt", "a1", {"text": "q"})
    held = await engine.call("c1", "agents.prompt", "a2", {"text": "h1"})
    await engine.approve_hold(held.prompt, text_sha256=engine.prompt(held.prompt).text_sha256)
    rejected = await engine.call("c1", "agents.prompt", "a2", {"text": "h2"})
    await engine.reject_hold(rejected.prompt)
    clock.t += 11
    expired = await engine.call("c1", "agents.prompt", "a2", {"text": "h3"})
    assert (await engine.call("c1", "agents.prompt", "ghost", {"text": "d"})).outcome == "denied"
    tc = await engine.tool("a3", "c1", "ping")
    in_chain = await engine.call("c1", "agents.prompt", "a1", {"text": "c"},
                                 context=tc.value["id"])
    assert in_chain.outcome == "queued"
    assert (await engine.call("c1", "agents.prompt", "a1", {"text": "x"})).outcome == "queued"
    limited = await engine.call("c1", "agents.prompt", "a1", {"text": "r"})
    assert limited.code == "RATE_LIMITED"
    await engine.answer_tool(tc.value["id"], result="pong", by="card:c1")
    clock.t += 301
    await engine.expire_due()
    assert engine.outcome(expired.prompt).code == "HOLD_EXPIRED"
    await engine.remove_arrow("e1")  # cancels the three queued on it
    assert engine.outcome(queued.prompt).reason == "not-connected"

    rows = engine.log_rows(card="c1")
    assert all(FIELDS <= row.keys() for row in rows)
    kinds = [(r["call"], r["arrow"], r["target"], r["payload"], r["outcome"], r["code"],
              r["reason"], r["approver"]) for r in rows]
    P = "agents.prompt"
    assert kinds == [
        (P, "e1", "a1", "q", "queued", None, None, None),
        (P, "e2", "a2", "h1", "held", None, None, None),
        (P, "e2", "a2", "h1", "approved", None, None, "operator"),
        (P, "e2", "a2", "h2", "held", None, None, None),
        (P, "e2", "a2", "h2", "rejected", "PROMPT_REJECTED", None, "operator"),
        (P, "e2", "a2", "h3", "held", None, None, None),
        (P, None, "ghost", "d", "denied", "PERMISSION_DENIED", "not-connected", None),
        ("tool:ping", "e3", "a3", "{}", "ok", None, None, None),
        (P, "e1", "a1", "c", "queued", None, None, None),
        (P, "e1", "a1", "x", "queued", None, None, None),
        (P, "e1", "a1", "r", "rate-limited", "RATE_LIMITED", "prompt", None),
        ("tool:ping", "e3", "a3", '"pong"', "answered", None, None, None),  # SPEC §9
        (P, "e2", "a2", "h3", "expired", "HOLD_EXPIRED", None, None),
        (P, "e1", "a1", "q", "cancelled", "PERMISSION_DENIED", "not-connected", None),
        (P, "e1", "a1", "c", "cancelled", "PERMISSION_DENIED", "not-connected", None),
        (P, "e1", "a1", "x", "cancelled", "PERMISSION_DENIED", "not-connected", None),
    ], kinds
    for row in rows:
        assert row["workspace"] == "w1" and row["card"] == "c1"
        assert row["package"] == "acme.p" and row["version"] == version
    # Times: each row at its decision or resolution (the expiry at its deadline).
    assert [r["t"] for r in rows[:5]] == [start] * 5
    assert rows[12]["t"] == start + 11 + 300
    # The chain: a prompt in a tool call carries it; one outside starts its own.
    assert rows[8]["chain"] == ["a3", "c1", "a1"]
    assert rows[0]["chain"] == ["c1", "a1"]
    # One hash chain over every row, in sequence.
    every = engine.log_rows()
    assert [r["seq"] for r in every] == list(range(1, len(every) + 1))
    assert all(b["prev"] == a["hash"] for a, b in zip(every, every[1:]))
    assert engine.verify_log().ok
