"""Two ``arrowgate serve`` on one database: what one server has committed, the other
answers about at once.

SPEC §10.1: "Tokens are kept (hashed) in the store, so every server on one store
accepts them"; SPEC §10: "every rule above holds across all engines on one
database". A route that reads the engine's state catches up with the store first
(`Engine.catch_up`), as every operation does (`Context.tick`): a prompt made on A
is known to B's ``GET /v1/prompts/{id}``, its ``/wait`` and its ``GET /v1/holds``,
and a card placed through A may open B's event stream.

(Found by a helper: those routes answered from B's memory, which caught up only at
its next timer tick, up to 1 s later: the prompt was ``404`` on B, missing from B's
holds, and the card ``CARD_UNKNOWN`` to B's event stream.)
"""

from __future__ import annotations

from pathlib import Path

from tests.service.servers_on_one_store import Server, mint, ok, setup


def test_a_prompt_made_on_one_server_is_known_to_the_other_at_once(
        two: tuple[Server, Server], tmp_path: Path) -> None:
    """A prompt held through server A is visible on B at once: its state, its wait and
    B's hold list."""
    a, b = two
    setup(a.client(), tmp_path / "ws")
    c1 = mint(a.client(), "card:c1")
    card_a, card_b, op_b = a.client(c1), b.client(c1), b.client()
    seen = []
    for i in range(3):
        d = ok(card_a.post("/v1/calls", json={"card": "c1", "call": "agents.prompt",
                                              "target": "y1", "args": {"text": f"t{i}"}}))
        assert d["outcome"] == "held", d
        pid = d["value"]["prompt"]
        # The card asks another server on the store about the prompt it was just told of.
        got = card_b.get(f"/v1/prompts/{pid}")
        waited = card_b.get(f"/v1/prompts/{pid}/wait", params={"timeout": 0})
        listed = [h["id"] for h in ok(op_b.get("/v1/holds"))]
        seen.append((pid, got.status_code, waited.status_code, pid in listed))
    assert all(s[1:] == (200, 200, True) for s in seen), seen


def test_a_card_placed_through_one_server_can_listen_on_the_other(
        two: tuple[Server, Server], tmp_path: Path) -> None:
    """A card placed (and its token minted) through server A opens its event stream on B
    at once, not ``CARD_UNKNOWN``."""
    a, b = two
    op_a = a.client()
    setup(op_a, tmp_path / "ws")
    statuses = []
    for i in range(3):
        ok(op_a.post("/v1/workspaces/w1/nodes", json={"id": f"k{i}", "type": "card",
                                                      "package": "acme.t"}))
        token = mint(op_a, f"card:k{i}")
        with b.client(token, timeout=5).stream("GET", "/v1/events") as stream:
            statuses.append(stream.status_code)
    assert statuses == [200, 200, 200], statuses
