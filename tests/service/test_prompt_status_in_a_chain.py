"""``arrowgate__prompt_status`` (SPEC §10.2): the agent whose tool call led to a held
prompt reads that prompt's state later — also when it is not the first agent of
the causal chain — and an agent hops away, which made no such call, does not.

(Found by a review, round 14: an agent was shown the prompts whose chain *began*
with it. An agent itself prompted through a card (its chain ``a1 → c1 → y1``)
that then calls a tool of another card making a held prompt (``… → y1 → c3 →
a4``) was told the held prompt's id by its tool call, but ``GET
/v1/prompts/{id}`` answered it 404, while a1 — not connected to c3, not the
caller — read it.)
"""

from __future__ import annotations

from pathlib import Path

from tests.service.conftest import Running, mint

TOOLS = {"name": "acme.search", "version": "1.0.0", "permissions": {"agents.prompt": {}},
         "tools": ["ping"]}
#: c3's package: another than c1's, whose cards are held together (a prompt of one is
#: told to a tool call open to another: README, the loop guard and its package's cards).
OTHER = {**TOOLS, "name": "acme.lookup"}


def test_the_agent_whose_tool_call_made_a_held_prompt_reads_it(
        unix_server: Running, tmp_path: Path) -> None:
    op = unix_server.client()
    (tmp_path / "ws").mkdir()
    steps = [("/v1/workspaces", {"id": "w1", "folder": str(tmp_path / "ws")}),
             ("/v1/packages", {"manifest": TOOLS}),
             ("/v1/packages/acme.search/install", {"grant": "required"}),
             ("/v1/packages", {"manifest": OTHER}),
             ("/v1/packages/acme.lookup/install", {"grant": "required"})]
    steps += [("/v1/workspaces/w1/nodes", node) for node in (
        {"id": "c1", "type": "card", "package": "acme.search"},
        {"id": "c3", "type": "card", "package": "acme.lookup"},
        {"id": "a1", "type": "agent", "status": "waiting"},
        {"id": "y1", "type": "agent", "status": "waiting"},
        {"id": "a4", "type": "agent", "status": "waiting", "dangerous": True})]
    steps += [("/v1/workspaces/w1/arrows", {"id": f"e{i}", "from": s, "to": d})
              for i, (s, d) in enumerate((("a1", "c1"), ("c1", "y1"), ("y1", "c3"),
                                          ("c3", "a4")))]
    for path, body in steps:
        r = op.post(path, json=body)
        assert r.status_code in (200, 201), (path, r.text)
    a1, y1 = (unix_server.client(mint(op, f"agent:{a}")) for a in ("a1", "y1"))
    c1, c3 = (unix_server.client(mint(op, f"card:{c}")) for c in ("c1", "c3"))
    # a1 → c1 (tool call) → y1 (a prompt, delivered: y1 now works in a1's chain)
    tc1 = a1.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "ping"}).json()
    sent = c1.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "please look"}, "context": tc1["id"]})
    assert sent.json()["outcome"] == "queued", sent.text
    # y1 → c3 (its own tool call) → a4 (dangerous: held)
    tc2 = y1.post("/v1/tool-calls", json={"agent": "y1", "card": "c3", "tool": "ping"}).json()
    assert tc2["state"] == "open", tc2
    held = c3.post("/v1/calls", json={"card": "c3", "call": "agents.prompt", "target": "a4",
                                      "args": {"text": "rm -rf"}, "context": tc2["id"]}).json()
    assert held["outcome"] == "held", held
    # y1's tool call tells it of the held prompt at once ...
    waited = y1.get(f"/v1/tool-calls/{tc2['id']}/wait", params={"timeout": 0}).json()
    assert [h["prompt"] for h in waited["held"]] == [held["prompt"]]
    # ... and y1 may ask for its state later (arrowgate__prompt_status)
    r = y1.get(f"/v1/prompts/{held['prompt']}")
    assert r.status_code == 200, r.text
    assert r.json()["state"] == "held"
    # The chain's first agent did not make that tool call and is not connected to c3.
    assert a1.get(f"/v1/prompts/{held['prompt']}").status_code == 404
