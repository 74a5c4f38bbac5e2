"""Reach analysis on hand-built canvases (issue 6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from canvas import Arrow
from engine import Engine
from engine.app.reach import analyse

from ..conftest import manifest, offer_install


@pytest.fixture
async def chain(make_engine: Any, tmp_path: Path) -> Engine:
    """c1 → a1 ↔ k1 (tools) → a2 (dangerous) ↔ k2 → t1; c1 fetches; x1 is unwired."""
    engine = make_engine()
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws", settings={"hop_limit": 3})
    await offer_install(engine, manifest("acme.prompter", {
        "agents.prompt": {}, "network": {"hosts": ["api.github.com"]}}))
    await offer_install(engine, manifest("acme.relay", {"agents.prompt": {}},
                                         tools=["relay"]))
    await offer_install(engine, manifest("acme.ops", {"terminals.write": {}, "fs.read": {}},
                                         tools=["run"]))
    for node in ({"id": "c1", "type": "card", "package": "acme.prompter"},
                 {"id": "k1", "type": "card", "package": "acme.relay"},
                 {"id": "k2", "type": "card", "package": "acme.ops"},
                 {"id": "x1", "type": "card", "package": "acme.prompter"},
                 {"id": "a1", "type": "agent", "name": "Claude"},
                 {"id": "a2", "type": "agent", "name": "Codex", "dangerous": True},
                 {"id": "t1", "type": "terminal"}):
        await engine.add_node(node, workspace="w1")
    for arrow_id, a, b in (("e1", "c1", "a1"), ("e2", "k1", "a1"), ("e3", "k1", "a2"),
                           ("e4", "a2", "k2"), ("e5", "k2", "t1")):
        await engine.add_arrow({"id": arrow_id, "from": a, "to": b})
    return engine


async def test_direct_and_transitive_reach_with_arrows_and_grants(chain: Engine) -> None:
    """Each target comes with the path of arrows and grants it rests on."""
    reach = analyse(chain.state, "c1")
    direct = {(t.node, t.action) for t in reach.direct}
    assert direct == {("a1", "prompt"), ("host:api.github.com", "fetch")}
    by_node = {t.node: t for t in reach.targets}
    # a1 calls k1's tool, k1 prompts the dangerous a2, a2 calls k2, which runs in t1.
    t1 = by_node["t1"]
    assert [s.action for s in t1.path] == ["prompt", "tool", "prompt", "tool", "run commands"]
    assert [s.arrow for s in t1.path] == ["e1", "e2", "e3", "e4", "e5"]
    assert t1.path[2].grant == "acme.relay: agents.prompt"
    assert reach.dangerous_agents == ["a2"]
    assert "files:" in " ".join(by_node)
    text = "\n".join(reach.lines())
    assert "dangerous mode" in text and "c1 -prompt-> a1 (arrow e1; acme.prompter: agents.prompt)" \
        in text


async def test_hop_limit_and_revocation_cut_reach(chain: Engine) -> None:
    """Chains the loop guard refuses, and revoked grants, are not reach."""
    await chain.set_settings("w1", {"hop_limit": 1})
    assert {t.node for t in analyse(chain.state, "c1").targets} == \
        {"a1", "k1", "host:api.github.com"}
    await chain.set_settings("w1", {"hop_limit": 3})
    await chain.revoke("acme.relay", "agents.prompt")
    assert "a2" not in {t.node for t in analyse(chain.state, "c1").targets}


async def test_a_card_about_to_be_wired(chain: Engine) -> None:
    """An arrow not drawn yet shows what drawing it would add."""
    assert analyse(chain.state, "x1").direct[0].node == "host:api.github.com"
    proposed = Arrow("new", "x1", "a2", workspace="w1")
    reach = analyse(chain.state, "x1", extra_arrows=(proposed,))
    assert reach.dangerous_agents == ["a2"]
    assert {"k2", "t1"} <= {t.node for t in reach.transitive}


async def test_port_arrows_reach_one_way_only(chain: Engine) -> None:
    """A port arrow into a card's input gives data to it, not the other way round."""
    await offer_install(chain, manifest("acme.pipe", {}, ports={"inputs": ["in"],
                                                               "outputs": ["out"]}))
    for n in ("p1", "p2"):
        await chain.add_node({"id": n, "type": "card", "package": "acme.pipe"}, workspace="w1")
    await chain.add_arrow({"id": "pp", "from": "p1", "from_port": "out", "to": "p2",
                           "to_port": "in"})
    assert [(t.node, t.action) for t in analyse(chain.state, "p1").targets] == [("p2", "data")]
    assert analyse(chain.state, "p2").targets == ()
    with pytest.raises(KeyError):
        analyse(chain.state, "a1")


def _reference(state: Any, card: str | None, node_id: str | None,
               extra: tuple[Arrow, ...] = ()) -> list[tuple[str, Any]]:
    """What a search over the whole `capability_graph` finds (the former implementation)."""
    import networkx as nx

    from engine.app.reach import Step, Target, capability_graph

    start = card if card is not None else node_id
    assert start is not None
    workspace = state.canvas.node(start).workspace
    graph = capability_graph(state, workspace, extra)
    hop_limit = state.workspaces[workspace].settings.hop_limit
    order = ("prompt", "run commands", "tool", "data", "read and write",
             "read and write files", "fetch", "read files", "read output")

    def step(u: str, v: str) -> Step:
        best = sorted(graph.get_edge_data(u, v).values(),
                      key=lambda e: order.index(e["action"]))[0]
        return Step(u, v, best["action"], best["arrow"], best["grant"])

    found: list[tuple[str, Any]] = []
    backwards = card is None
    paths = nx.single_source_shortest_path(graph.reverse(copy=False) if backwards else graph,
                                           start)
    for other, route in sorted(paths.items(), key=lambda kv: (len(kv[1]), kv[0])):
        if other == start or (backwards and graph.nodes[other]["kind"] != "card"):
            continue
        route = route[::-1] if backwards else route
        steps = tuple(step(u, v) for u, v in zip(route, route[1:], strict=False))
        end = start if backwards else other
        attrs = graph.nodes[end]
        target = Target(end, attrs["kind"], steps[-1].action, steps,
                        dangerous=attrs["dangerous"], label=attrs["label"])
        if target.prompts <= hop_limit:
            found.append((other, target))
    return found


@pytest.mark.parametrize("seed", range(6))
async def test_searching_from_one_node_agrees_with_the_whole_graph(make_engine: Any,
                                                                    tmp_path: Path,
                                                                    seed: int) -> None:
    """analyse and reached_by find the very paths a search over the whole graph finds."""
    import random

    from engine.app.reach import reached_by

    rng = random.Random(seed)
    engine = make_engine()
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws", settings={"hop_limit": 3})
    packages = {
        "acme.prompt": {"agents.prompt": {}, "network": {"hosts": ["api.example.com"]}},
        "acme.tools": {"agents.prompt": {}, "terminals.write": {}, "fs.read": {}},
        "acme.out": {"agents.output": {}, "cards.connected": {}},
        "acme.pipe": {},
    }
    for name, perms in packages.items():
        extra: dict[str, Any] = {"ports": {"inputs": ["in"], "outputs": ["out"]}}
        if name == "acme.tools":
            extra["tools"] = ["run"]
        await offer_install(engine, manifest(name, perms, **extra))
    nodes: list[str] = []
    for i in range(14):
        kind = rng.choice(["card", "card", "card", "agent", "agent", "terminal", "note"])
        node: dict[str, Any] = {"id": f"n{i}", "type": kind}
        if kind == "card":
            node["package"] = rng.choice(sorted(packages))
        if kind == "agent":
            node["dangerous"] = rng.random() < 0.3
        await engine.add_node(node, workspace="w1")
        nodes.append(f"n{i}")
    cards = [n.id for n in engine.state.canvas.nodes(type="card")]
    for j in range(48):
        a, b = rng.sample(nodes, 2)
        raw: dict[str, Any] = {"id": f"e{rng.randrange(1000)}_{j}", "from": a, "to": b}
        if a in cards and b in cards and rng.random() < 0.5:
            raw.update(from_port="out", to_port="in")
        await engine.add_arrow(raw)
    if seed % 2:
        await engine.revoke("acme.tools", "terminals.write")
    state = engine.state
    proposed = (Arrow("(proposed)", cards[0], nodes[-1], workspace="w1"),) \
        if cards and cards[0] != nodes[-1] else ()
    longest = 0
    for node_id in nodes:
        found = reached_by(state, node_id)
        assert found == _reference(state, None, node_id), node_id
        longest = max([longest, *(len(t.path) for _, t in found)])
    assert longest >= 2  # the canvas has paths through other nodes to agree on
    for card in cards:
        assert [(t.node, t) for t in analyse(state, card).targets] == \
            _reference(state, card, None), card
    if proposed:
        assert [(t.node, t) for t in analyse(state, cards[0], extra_arrows=proposed).targets] \
            == _reference(state, cards[0], None, proposed)
