"""On the canvas map a quoted id too long for its box is cut inside its quotes: the box
reads ``["abc…"]`` — one quoted id, visibly cut — never an open quote that runs on into
the box's end or the next box, and the cut never leaves a backslash that would escape
the closing quote.

Found in round 22: the label was cut after quoting, so ``"a] [bbbbbbbbbbbbb"`` was drawn
``["a] [bbbbbbb…]``: the closing quote gone, the id read as running on.
"""

from __future__ import annotations

import re

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.screens.map import draw_map

#: A quoted, cut box: a quote, escaped text, the cut mark, the closing quote.
_CUT_BOX = re.compile(r'\["(?:[^"\\]|\\.)*…"\]')


def _drawn(node: str) -> str:
    graph = nx.Graph()
    graph.add_node(node)
    return str(draw_map(graph, 60, 5, selected=None, lit=set(), dangerous=set()))


def test_a_long_quoted_id_is_cut_inside_its_quotes() -> None:
    drawn = _drawn("a] [bbbbbbbbbbbbbbbbbbbbbbbb")
    assert _CUT_BOX.search(drawn), drawn
    assert '["a] [b' in drawn


def test_the_cut_leaves_no_backslash_before_the_closing_quote() -> None:
    for n in range(1, 12):
        drawn = _drawn("x y" + "z" * n + '\\"' * 10)
        if "…" in drawn:
            assert _CUT_BOX.search(drawn), drawn


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from('ab []"\\→界'), min_size=13, max_size=40))
def test_every_long_quoted_id_reads_quoted_and_cut(node: str) -> None:
    drawn = _drawn(node).strip()
    if drawn.startswith('["') and "…" in drawn:
        assert _CUT_BOX.fullmatch(drawn), drawn
