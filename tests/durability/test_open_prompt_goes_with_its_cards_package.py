"""A prompt held or queued for a card goes with the package that card had when it made it:
when a person changes the card's package, its open prompts are cancelled (``PERMISSION_DENIED``,
``not-connected``), as if the card had been removed, on SQLite and PostgreSQL alike.

SPEC §7: the hold shows the card, *package*, arrow, agent and text, and a person approves
what they were shown; §4.3: revoking a package's permission cancels the prompts *of that
package* still queued or held. A card whose ``package`` was changed (`Engine.set_node`) is
no longer a card of the package that made the prompt: approving the hold would deliver,
under the other package's grant, a prompt shown as the first one's, and revoking the first
package's permission would no longer reach it.

Found in round 22: `Prompts.recheck` judged an open prompt with the card's package of now,
so a hold shown as "from card c1 (acme.prompter)" was approved and delivered after c1 had
become a card of another package, and outlived the revoke of acme.prompter's
``agents.prompt``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Engine, NotFound, file_digests


def _manifest(name: str) -> dict[str, Any]:
    return {"name": name, "version": "1.0.0", "permissions": {"agents.prompt": {}}}


async def _canvas(engine: Engine, folder: Path, *, dangerous: bool) -> None:
    """acme.prompter's card c1 wired to agent a1; other.tool installed with agents.prompt."""
    folder.mkdir(exist_ok=True)
    await engine.create_workspace("w1", folder)
    for name in ("acme.prompter", "other.tool"):
        await engine.offer(name, _manifest(name), file_digests({"index.js": f"// {name}"}))
        await engine.install(name)
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.prompter"},
                          workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1", "tool": "codex",
                           "status": "waiting" if dangerous else "working",
                           "dangerous": dangerous}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})


async def test_a_hold_is_cancelled_when_its_card_changes_package(
        open_engine: Any, tmp_path: Path) -> None:
    """The hold made by acme.prompter's card is never delivered as other.tool's."""
    # GIVEN a prompt held for a person, made by c1 while it was a card of acme.prompter
    app: Engine = open_engine()
    await _canvas(app, tmp_path / "ws", dangerous=True)
    held = await app.call("c1", "agents.prompt", "a1", {"text": "rm -rf build"})
    assert held.outcome == "held"
    digest = app.prompt(held.prompt).text_sha256
    # WHEN a person, in another process, makes c1 a card of other.tool
    tui: Engine = open_engine()
    await tui.set_node("c1", {"package": "other.tool"})
    # THEN the hold is cancelled at once, on both engines, not-connected
    for engine in (tui, app):
        engine.catch_up()
        out = engine.outcome(held.prompt)
        assert (engine.prompt(held.prompt).state, out.code, out.reason) == \
            ("cancelled", "PERMISSION_DENIED", "not-connected"), engine
    # AND an approval of what the person was shown delivers nothing
    with pytest.raises(NotFound):
        await app.approve_hold(held.prompt, text_sha256=digest)
    assert app.prompt(held.prompt).state == "cancelled"
    assert [r["outcome"] for r in app.log_rows(arrow="e1")] == ["held", "cancelled"]


async def test_a_queued_prompt_is_cancelled_when_its_card_changes_package(
        open_engine: Any, tmp_path: Path) -> None:
    """A queued prompt too: revoking acme.prompter's agents.prompt must reach it, so it
    cannot wait on as other.tool's."""
    app: Engine = open_engine()
    await _canvas(app, tmp_path / "ws", dangerous=False)
    queued = await app.call("c1", "agents.prompt", "a1", {"text": "hello"})
    assert queued.outcome == "queued" and app.prompt(queued.prompt).state == "queued"
    await app.set_node("c1", {"package": "other.tool"})
    out = app.outcome(queued.prompt)
    assert (app.prompt(queued.prompt).state, out.code, out.reason) == \
        ("cancelled", "PERMISSION_DENIED", "not-connected")
    await app.set_node("a1", {"status": "waiting"})  # nothing left to deliver
    assert app.prompt(queued.prompt).state == "cancelled"
