"""Fields only the engine writes on a node are never set by an add or an update.

``spawned_by`` says whose rate windows and spawn cap a node shares, ``chain`` is the
causal chain the loop guard reads (SPEC §9), ``screen``, ``last_reply`` and ``exit`` are
what a driver saw. An add or update that names one is refused (``INVALID_NODE``,
reason ``bad-field``) and changes nothing; the engine's own writes (a spawn, a
delivery) go on setting them.

(Noticed in round 17, fixed in round 18: `Engine.set_node` and `add_node` took any of
them — the service's body model already refused them, the Python API, the command
line and a replay case did not — so an app could cut a spawned copy loose from its
spawner's windows and spawn cap, or reset an agent's chain under the loop guard.)
"""

from __future__ import annotations

import pytest

from canvas import ENGINE_KEPT
from engine import Engine
from engine.core.errors import InvalidNode

CASES = [("c1", "spawned_by", "a1"), ("a1", "chain", []), ("a1", "last_reply", "forged"),
         ("t1", "screen", "$ rm -rf /\n"), ("t1", "exit", 0), ("n1", "spawned_by", "c1")]


def test_the_engine_kept_fields_are_named_once() -> None:
    assert {field for _, field, _ in CASES} == ENGINE_KEPT


@pytest.mark.parametrize(("node", "field", "value"), CASES)
async def test_an_update_naming_an_engine_kept_field_is_refused(
        world: Engine, node: str, field: str, value: object) -> None:
    before = world.state.canvas.node(node)
    assert before is not None
    with pytest.raises(InvalidNode) as raised:
        await world.set_node(node, {field: value})
    assert raised.value.code == "INVALID_NODE"
    assert raised.value.reason == "bad-field"
    assert field in str(raised.value)
    assert world.state.canvas.node(node) == before


@pytest.mark.parametrize("field", sorted(ENGINE_KEPT))
async def test_an_add_naming_an_engine_kept_field_is_refused(world: Engine, field: str) -> None:
    value = [] if field == "chain" else "c1"
    with pytest.raises(InvalidNode) as raised:
        await world.add_node({"id": "n9", "type": "note", field: value}, workspace="w1")
    assert raised.value.code == "INVALID_NODE"
    assert raised.value.reason == "bad-field"
    assert world.state.canvas.node("n9") is None


async def test_other_operator_fields_are_still_set(world: Engine) -> None:
    node = await world.set_node("a1", {"dangerous": True, "command": ["true"]})
    assert node.data["dangerous"] is True and node.data["command"] == ["true"]
