"""Withdrawing an offered package (issue 18 item 10): operator only, durable, recorded."""

from __future__ import annotations

from typing import Any

import pytest

from engine import ApprovalRefused, Engine, InvalidRequest

from ..conftest import manifest, offer_install


async def test_an_operator_removes_an_offered_package(world: Engine, make_engine: Any) -> None:
    """The package is gone (also after a restart) and the history names it and its hash."""
    # GIVEN a package offered, not installed
    await offer_install(world, manifest("acme.offered", {"network": {"hosts": ["a.example"]}}),
                        grant=None)
    offered_hash = world.state.packages["acme.offered"].hash
    # WHEN the operator removes it
    await world.remove_package("acme.offered")
    # THEN it is gone, durably, and the consent history says who removed what
    assert "acme.offered" not in world.state.packages
    assert "acme.offered" not in make_engine().state.packages
    last = world.history.entries(package="acme.offered")[-1]
    assert (last["principal"], last["action"], last["accepted"]) == ("operator",
                                                                    "package.remove", True)
    assert last["subject"]["hash"] == offered_hash
    assert world.history.verify().ok
    # AND it cannot be reviewed or installed any more, until offered again
    with pytest.raises(InvalidRequest, match="NOT_FOUND"):
        await world.install("acme.offered")
    await offer_install(world, manifest("acme.offered", {}), grant=None)
    await world.install("acme.offered")


async def test_only_an_operator_removes_a_package(world: Engine) -> None:
    """An agent or a card on the canvas may not withdraw a package; the attempt is recorded."""
    await offer_install(world, manifest("acme.offered", {}), grant=None)
    for by in ("agent:a1", "card:c1", "root"):
        with pytest.raises(ApprovalRefused):
            await world.remove_package("acme.offered", by=by)
    assert "acme.offered" in world.state.packages
    refused = [e for e in world.history.entries(package="acme.offered") if not e["accepted"]]
    assert [e["principal"] for e in refused] == ["agent:a1", "card:c1", "root"]


async def test_an_installed_package_is_refused_and_kept(world: Engine) -> None:
    """Removing an installed package changes nothing: its grants stay; the refusal is recorded."""
    grants = set(world.state.grants["acme.prompter"])
    with pytest.raises(InvalidRequest, match="is installed") as err:
        await world.remove_package("acme.prompter")
    assert err.value.reason == "installed"
    assert world.state.packages["acme.prompter"].installed
    assert world.state.grants["acme.prompter"] == grants
    last = world.history.entries(package="acme.prompter")[-1]
    assert (last["action"], last["accepted"]) == ("package.remove", False)


async def test_an_unknown_package_is_not_found(world: Engine) -> None:
    """A name that no package has is NOT_FOUND and records nothing."""
    before = len(world.history.entries())
    with pytest.raises(InvalidRequest, match="NOT_FOUND"):
        await world.remove_package("acme.nothing")
    assert len(world.history.entries()) == before


async def test_cards_of_a_removed_package_stay_refused(world: Engine) -> None:
    """A card of the withdrawn package stays on the canvas, and its calls stay refused."""
    await offer_install(world, manifest("acme.offered", {"agents.prompt": {}}), grant=None)
    await world.add_node({"id": "c9", "type": "card", "package": "acme.offered"},
                         workspace="w1")
    await world.add_arrow({"id": "e9", "from": "c9", "to": "a1"})
    await world.remove_package("acme.offered")
    assert world.state.canvas.node("c9") is not None
    decision = await world.call("c9", "agents.prompt", "a1", {"text": "hi"})
    assert (decision.outcome, decision.code) == ("denied", "PACKAGE_NOT_INSTALLED")
