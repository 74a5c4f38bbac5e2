"""SPEC §5: every refusal carries "a message a person can read". A card (or an agent)
naming a target, a card, a call, a tool, a port or an argument of a mebibyte is
refused with a message of a line or two: each name it quotes cut with "…" and its
length; the Decision's structured fields keep what the caller sent, whole, for a
program to match on.

(Found in round 31: the message echoed the names whole, a 5 MB target id in a 5 MB
message, a 5 MB agent id in a 15 MB one (it was named three times), carried whole
in the service's answer, the MCP tool result and the command line's output.)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from engine import Engine
from engine.core.decision import Decision

BIG = "x" * (1 << 20)
#: A message quoting each name at most ~100 characters stays far below this.
BOUND = 4000

#: Each entry point: how a caller sends BIG, and which field of the Decision keeps it.
CALLS: dict[str, tuple[Callable[[Engine], Awaitable[Any]], str | None]] = {
    "target": (lambda e: e.call("c1", "agents.prompt", BIG, {"text": "hi"}), "target"),
    "card": (lambda e: e.call(BIG, "agents.prompt", "a1", {"text": "hi"}), "card"),
    "call": (lambda e: e.call("c1", BIG, "a1", {"text": "hi"}), None),
    "argument-name": (lambda e: e.call("c1", "agents.prompt", "a1", {"text": "hi", BIG: 1}),
                      None),
    "context": (lambda e: e.call("c1", "agents.prompt", "a1", {"text": "hi"}, context=BIG),
                None),
    "tool": (lambda e: e.tool("a1", "c1", BIG, {}), None),
    "tool-card": (lambda e: e.tool("a1", BIG, "relay", {}), "card"),
    "tool-agent": (lambda e: e.tool(BIG, "c1", "relay", {}), "target"),
    "port": (lambda e: e.emit("c1", BIG, "data"), None),
}


@pytest.mark.parametrize("where", list(CALLS))
async def test_a_refusal_naming_a_mebibyte_id_has_a_message_of_a_line(world: Engine,
                                                                      where: str) -> None:
    """The message names the id cut, with its length; the structured field keeps it whole."""
    # GIVEN a caller sending a name of 1 MiB
    send, field = CALLS[where]
    # WHEN it is refused
    answer = await send(world)
    decision: Decision = next(iter(answer.values())) if isinstance(answer, dict) else answer
    # THEN the message a person reads is a line, saying how long the name was
    assert not decision.allowed, decision.message[:200]
    assert len(decision.message) < BOUND, (len(decision.message), decision.message[:300])
    assert len(decision.to_json()["message"]) < BOUND
    if where != "context":  # a context no call has is refused without naming it
        assert f"{len(BIG)} characters" in decision.message, decision.message[:300]
    # AND a program still matches on what it sent
    if field is not None:
        assert getattr(decision, field) == BIG
    assert world.verify_log().ok


async def test_a_long_id_the_canvas_holds_is_cut_in_the_message_only(world: Engine) -> None:
    """A real card with a 5,000-character id: named cut in its refusal, whole in its fields."""
    card = "c" * 5000
    await world.add_node({"id": card, "type": "card", "package": "acme.prompter"},
                         workspace="w1")
    decision = await world.call(card, "agents.prompt", "a1", {"text": "hi"})  # no arrow
    assert (decision.code, decision.reason) == ("PERMISSION_DENIED", "not-connected")
    assert decision.card == card
    assert len(decision.message) < BOUND, len(decision.message)
    assert "5000 characters" in decision.message
    assert world.log_rows()[-1]["card"] == card  # its row names it whole, as before


#: Operations a card or an agent may ask for, naming an id of 1 MiB: each refused.
ASKED: dict[str, Callable[[Engine], Awaitable[Any]]] = {
    "answer-a-tool-call": lambda e: e.answer_tool(BIG, result=1, by="card:c1"),
    "cancel-a-tool-call": lambda e: e.cancel_tool(BIG, by="agent:a1"),
    "wait-for-a-tool-call": lambda e: e.wait_tool(BIG, timeout=0),
    "wait-for-a-prompt": lambda e: e.wait(BIG),
    "revoke-a-permission": lambda e: e.revoke("acme.prompter", BIG, by="card:c1"),
    "review-a-package": lambda e: e.review(BIG),
}


@pytest.mark.parametrize("what", list(ASKED))
async def test_an_error_naming_a_mebibyte_id_has_a_message_of_a_line(world: Engine,
                                                                     what: str) -> None:
    """An operation refused as an error (NOT_FOUND, INVALID_ARGUMENT) is told in a line too."""
    from engine.core.errors import ConsentError

    with pytest.raises(ConsentError) as refused:
        await ASKED[what](world)
    message = refused.value.message
    assert len(message) < BOUND, (len(message), message[:300])
    assert len(str(refused.value)) < BOUND
    assert f"{len(BIG)} characters" in message, message[:300]


def test_an_error_quoting_a_long_name_whole_is_still_a_few_lines() -> None:
    """A raise site that quotes a caller's name whole: the message is cut, with a mark."""
    from engine.core.errors import NotFound

    error = NotFound(f"no node {BIG!r}")
    assert error.message.startswith("NOT_FOUND: no node 'xxx")
    assert len(error.message) < 2 * BOUND + 100, len(error.message)
    assert "characters left out" in error.message
