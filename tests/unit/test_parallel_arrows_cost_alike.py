"""Many plain arrows between the same two nodes cost each about what one costs.

Rule: hostile input never hangs the engine (no time superlinear in its size). A
JSON Canvas file (``arrowgate import``) may draw any number of arrows between
two nodes, and a store holds what was drawn: adding, loading and removing them
must stay about linear in their number.

(Found in round 30 by a time probe: the canvas kept each pair's plain arrows as
one sorted tuple, rebuilt from a set and sorted again for every arrow added, so
n arrows between two notes cost n² log n: 16,000 of them, a 1 MB canvas file,
took 25 s to preview for import, and as long again to open the store holding
them.)

The work is counted, not timed: the arrow ids are text that counts how often it
is compared or hashed, and the count may grow by a bounded number of steps per
arrow and per doubling of their number.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from canvas import Canvas
from canvas.model import Node
from engine import Engine
from engine.services.nodes import Nodes

#: Arrows drawn between the same two nodes.
N = 1024
#: Steps allowed per arrow: a few dict reads and a heap's log2(N) comparisons.
PER_ARROW = 48


class CountedId(str):
    """An arrow id that counts every comparison and hash made of it."""

    steps = 0

    def _count(self) -> None:
        CountedId.steps += 1

    def __hash__(self) -> int:
        self._count()
        return str.__hash__(self)

    def __eq__(self, other: object) -> bool:
        self._count()
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        self._count()
        return str.__ne__(self, other)

    def __lt__(self, other: str) -> bool:
        self._count()
        return str.__lt__(self, other)

    def __le__(self, other: str) -> bool:
        self._count()
        return str.__le__(self, other)

    def __gt__(self, other: str) -> bool:
        self._count()
        return str.__gt__(self, other)

    def __ge__(self, other: str) -> bool:
        self._count()
        return str.__ge__(self, other)


def _ids(n: int) -> list[CountedId]:
    # Shuffled by a fixed stride, so neither order of adding is the sorted one.
    return [CountedId(f"e{(i * 7919) % n:05d}") for i in range(n)]


def _two_notes() -> Canvas:
    canvas = Canvas()
    for node_id in ("n1", "n2"):
        canvas.add_node(Node.build({"id": node_id, "type": "note", "text": ""}, "w"))
    return canvas


def _steps(work: Any) -> int:
    CountedId.steps = 0
    work()
    return CountedId.steps


def test_adding_many_arrows_between_two_nodes_costs_each_alike() -> None:
    """Arrows added one by one between the same two nodes (an API's adds, another engine
    catching up) cost a bounded number of steps each; the smallest id is the one found."""
    canvas = _two_notes()
    ids = _ids(N)

    def add_all() -> None:
        for arrow_id in ids:
            canvas.add_arrow({"id": arrow_id, "from": "n1", "to": "n2"})

    steps = _steps(add_all)
    assert steps <= PER_ARROW * N, f"{N} arrows between two nodes took {steps} steps"
    found = canvas.arrow_between("n2", "n1")
    assert found is not None and found.id == min(ids)
    assert [a.id for a in canvas.arrows_of("n1")] == sorted(ids)


def test_loading_many_arrows_between_two_nodes_costs_each_alike() -> None:
    """A store's arrows put in place at open (`Canvas.restore`) cost a bounded number of
    steps each, however many join the same two nodes."""
    full = _two_notes()
    for arrow_id in _ids(N):
        full.add_arrow({"id": arrow_id, "from": "n2", "to": "n1"})
    nodes, arrows = full.nodes(), list(full.arrows())
    canvas = Canvas()

    steps = _steps(lambda: canvas.restore(nodes, arrows))
    assert steps <= PER_ARROW * N, f"loading {N} arrows between two nodes took {steps} steps"
    found = canvas.arrow_between("n1", "n2")
    assert found is not None and found.id == min(a.id for a in arrows)


def test_removing_a_node_with_many_arrows_costs_each_alike() -> None:
    """A node with many arrows to one neighbour is removed, its arrows with it, in a
    bounded number of steps per arrow; nothing of them is left."""
    canvas = _two_notes()
    for arrow_id in _ids(N):
        canvas.add_arrow({"id": arrow_id, "from": "n1", "to": "n2"})

    steps = _steps(lambda: canvas.remove_node("n2"))
    assert steps <= PER_ARROW * N, f"removing {N} arrows with their node took {steps} steps"
    assert canvas.arrows() == [] and canvas.arrows_of("n1") == []
    assert canvas.arrow_between("n1", "n2") is None


def test_removing_arrows_one_by_one_keeps_the_smallest_found() -> None:
    """Arrows between two nodes removed one at a time, smallest first: each time the
    smallest left is the arrow found, and none once all are gone."""
    canvas = _two_notes()
    ids = _ids(64)
    for arrow_id in ids:
        canvas.add_arrow({"id": arrow_id, "from": "n1", "to": "n2"})
    for gone, arrow_id in enumerate(sorted(ids)):
        found = canvas.arrow_between("n1", "n2")
        assert found is not None and found.id == arrow_id
        canvas.remove_arrow(arrow_id)
        assert len(canvas.arrows_of("n2")) == len(ids) - gone - 1
    assert canvas.arrow_between("n2", "n1") is None


async def test_importing_many_arrows_between_two_nodes_costs_each_alike(
        open_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A canvas file of many arrows between two notes is reviewed, imported and opened
    again in a bounded number of steps per arrow, on either store, every arrow drawn."""
    # The engine takes only ids that are exactly text: the counting ids pass its check
    # as the text they are, and go on counting inside the canvas.
    check_id = Nodes.check_id
    monkeypatch.setattr(Nodes, "check_id", staticmethod(
        lambda kind, value: check_id(kind, str(value) if isinstance(value, str) else value)))
    engine: Engine = open_engine()
    ids = _ids(N)
    doc = {"nodes": [{"id": n, "type": "text", "text": n, "x": 0, "y": 0, "width": 1,
                      "height": 1} for n in ("n1", "n2")],
           "edges": [{"id": i, "fromNode": "n1", "toNode": "n2", "toEnd": "none"}
                     for i in ids]}

    CountedId.steps = 0
    review = await engine.preview_import("w", tmp_path, doc)
    steps = CountedId.steps
    assert steps <= PER_ARROW * N, f"reviewing {N} arrows between two nodes took {steps} steps"
    assert review.arrows == N

    CountedId.steps = 0
    await engine.import_canvas("w", tmp_path, doc, review_sha256=review.sha256)
    steps = CountedId.steps
    assert steps <= PER_ARROW * N, f"importing {N} arrows between two nodes took {steps} steps"
    assert len(engine.state.canvas.arrows("w")) == N
    # Opened again, the arrows come from the store as plain text: the same canvas.
    again = open_engine()
    found = again.state.canvas.arrow_between("n2", "n1")
    assert found is not None and found.id == min(ids)
    assert len(again.state.canvas.arrows("w")) == N
