"""`POST /v1/emit` refuses a `context` naming no tool call of the card, as `POST /v1/calls` does.

(Found by a hostile test, round 14, when it did not hold: emit dropped it and delivered the data.)

The same prompt to the same agent, once as `agents.prompt` and once as port data
(`prompt` input port, which SPEC §3 counts as agents.prompt), with
`"context": "nope"`: the call is `INVALID_ARGUMENT` (reason `context`, "no tool
call of this card has that id"), the emit is `queued` — the bad context is
silently dropped (`Calls._context_chain` answers None for it). SPEC §5 check 3:
arguments that do not fit the call are INVALID_ARGUMENT; the two ways of
prompting should decide alike (the Python `engine.emit` does the same).
"""

from __future__ import annotations

from tests.service.conftest import build_canvas


def test_emit_with_an_unknown_context_is_refused_like_the_call(unix_server, tmp_path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    assert op.post("/v1/workspaces/w1/arrows", json={
        "id": "p1", "from": "c1", "to": "a1", "from_port": "out", "to_port": "prompt"}
    ).status_code == 201
    call = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "a1",
                                      "args": {"text": "x"}, "context": "nope"}).json()
    assert (call["outcome"], call["code"], call["reason"]) == \
        ("denied", "INVALID_ARGUMENT", "context")
    out = op.post("/v1/emit", json={"card": "c1", "port": "out", "data": "x",
                                    "context": "nope"}).json()["decisions"]
    decision = next(iter(out.values()))
    assert (decision["outcome"], decision["code"]) == ("denied", "INVALID_ARGUMENT"), decision
