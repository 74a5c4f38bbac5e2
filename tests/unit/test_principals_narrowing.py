"""Principals are plain strings compared exactly; narrowing only from the canvas (SPEC §4.5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import ApprovalRefused, Engine
from engine.core.principal import Principal

from ..conftest import manifest, offer_install


class _EqualsAnything:
    """An object that claims to equal whatever it is compared with."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("operator")


class _SneakyStr(str):
    """A str subclass with an ``__eq__`` that always says yes."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("operator")


@pytest.mark.parametrize("by", [_EqualsAnything(), _SneakyStr("nobody"), _SneakyStr("operator"),
                                b"operator", ["operator"], "Operator", "operator ", "\ud800"])
def test_only_a_plain_operator_string_is_an_operator(by: object) -> None:
    """An object or str subclass with a lying __eq__, bytes, lists or near-misses are unknown."""
    principal = Principal.parse(by)
    assert principal.kind == "unknown" and not principal.is_operator
    principal.raw.encode("utf-8")  # storable in the consent history


async def test_an_object_equal_to_everything_gives_no_consent(world: Engine) -> None:
    """An arrow drawn "by" an object whose __eq__ is always True is refused and recorded."""
    for by in (_EqualsAnything(), _SneakyStr("operator")):
        with pytest.raises(ApprovalRefused) as err:
            await world.add_arrow({"id": "x", "from": "c1", "to": "a2"}, by=by)
        assert err.value.reason == "unknown-principal"
    assert world.state.canvas.arrow("x") is None
    refused = [e for e in world.history.entries() if not e["accepted"]]
    assert [e["principal"] for e in refused] == ["<_EqualsAnything>", "<_SneakyStr>"]


async def _second_canvas(engine: Engine, tmp_path: Path) -> None:
    """Workspace w2 with its own card c9 (another package) and agent a9."""
    (tmp_path / "ws2").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w2", tmp_path / "ws2")
    await offer_install(engine, manifest("acme.other", {"network": {"hosts": ["api.example.com"]}}))
    await engine.add_node({"id": "c9", "type": "card", "package": "acme.other"}, workspace="w2")
    await engine.add_node({"id": "a9", "type": "agent", "name": "A9", "tool": "codex"},
                          workspace="w2")


async def test_revoke_from_another_canvas_is_refused(world: Engine, tmp_path: Path) -> None:
    """A card or agent of another workspace may not revoke a package it has no card of."""
    await _second_canvas(world, tmp_path)
    for by in ("agent:a9", "card:c9"):
        with pytest.raises(ApprovalRefused) as err:
            await world.revoke("acme.prompter", "terminals.write", by=by)
        assert err.value.reason == "unknown-principal"
    assert world.state.granted("acme.prompter", "terminals.write")
    # The package's own canvas may, and so may an operator.
    await world.revoke("acme.prompter", "terminals.write", by="agent:a2")
    await world.revoke("acme.other", "network", by="card:c9")
    assert not world.state.granted("acme.other", "network")


async def test_arrow_removal_from_another_canvas_is_refused(world: Engine,
                                                            tmp_path: Path) -> None:
    """Removing an arrow of w1 from an agent of w2 is refused; the arrow stays."""
    await _second_canvas(world, tmp_path)
    with pytest.raises(ApprovalRefused, match="unknown-principal"):
        await world.remove_arrow("e1", by="agent:a9")
    assert world.state.canvas.arrow("e1") is not None


async def test_delete_secret_only_from_canvases_it_serves(world: Engine, tmp_path: Path) -> None:
    """A secret serves the canvases whose cards may fetch its host; others may not delete it."""
    await _second_canvas(world, tmp_path)
    await world.set_secret("GH", "api.example.com", "s3cret")
    await world.set_secret("OTHER", "elsewhere.example.org", "x")
    for by in ("agent:a1", "card:c1", "agent:ghost"):
        with pytest.raises(ApprovalRefused, match="unknown-principal"):
            await world.delete_secret("GH", by=by)
    assert world.secret_is_set("GH")
    # No card fetches elsewhere.example.org: only an operator may delete it.
    with pytest.raises(ApprovalRefused, match="unknown-principal"):
        await world.delete_secret("OTHER", by="agent:a9")
    await world.delete_secret("GH", by="agent:a9")
    assert not world.secret_is_set("GH")
    await world.delete_secret("OTHER")
    assert not world.secret_is_set("OTHER")


