"""On the canvas map each node is one box ``[id]``: an id holding ``[``, ``]`` or what
separates ids is drawn quoted, ``["a] [b"]``, so it never reads as two boxes.

Found in round 21: a node ``a] [b`` was drawn ``[a] [b]``, two boxes ``a`` and ``b``.
"""

from __future__ import annotations

import networkx as nx

from tui.screens.map import draw_map


def _drawn(*ids: str) -> str:
    graph = nx.Graph()
    graph.add_nodes_from(ids)
    return str(draw_map(graph, 60, 8, selected=None, lit=set(), dangerous=set()))


def test_an_id_with_brackets_is_one_quoted_box() -> None:
    assert '["a] [b"]' in _drawn("a] [b")
    assert '["x][y"]' in _drawn("x][y")
    assert '["c]"]' in _drawn("c]")


def test_a_plain_id_is_drawn_as_it_is() -> None:
    assert "[c1]" in _drawn("c1")
