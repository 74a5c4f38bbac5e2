"""The update dialog says which of the widened declarations approving grants, and which not.

Rule (SPEC §4.4: widening needs consent; the engine's approval grants the permissions the
new version newly requires and keeps every other grant as it is): the dialog ended every
widening diff with "Approving grants what was widened." A new optional permission is not
granted by the approval (the card may ask for it later), and new host patterns of a
permission the person revoked are not reached (it stays revoked): the person was told
they were granting what they were not. Each case is said as the engine does it.

(Left by round 32's closing note; fixed by helper tui33 in round 33.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from engine import file_digests, parse_manifest
from engine.app.replay import VirtualClock
from engine.core.events import Update
from engine.core.review import diff_manifests
from tui.screens.confirm import ConfirmScreen
from tui.screens.grants import approval_grants

from .conftest import settle
from .world import make_app, open_engine

OLD: dict[str, Any] = {"name": "acme.x", "version": "1.0.0", "permissions": {
    "network": {"hosts": ["a.example.com"]}, "agents.output": {},
    "clipboard.write": {"optional": True}}}
GRANTED = {"network", "agents.output"}


def _said(new_permissions: dict[str, Any], granted: set[str], old: dict[str, Any] = OLD) -> str:
    new = {**old, "version": "1.1.0", "permissions": new_permissions}
    before, after = parse_manifest(old), parse_manifest(new)
    update = Update("acme.x", "sha256:x", diff_manifests(before, after))
    return approval_grants(before, after, update, granted)


CASES = [
    # (what the new version declares, granted now, what the dialog says)
    pytest.param(OLD["permissions"], GRANTED,
                 "Nothing is widened; approving accepts the changed files.", id="nothing"),
    pytest.param({**OLD["permissions"], "agents.prompt": {}}, GRANTED,
                 "Approving grants: +agents.prompt.", id="a-new-required-permission"),
    pytest.param({**OLD["permissions"], "network": {"hosts": ["a.example.com",
                                                             "b.example.com"]}}, GRANTED,
                 "Approving grants: network: +b.example.com.", id="hosts-of-a-granted-one"),
    pytest.param({**OLD["permissions"], "clipboard.write": {}}, GRANTED,
                 "Approving grants: clipboard.write: optional -> required.",
                 id="optional-made-required"),
    pytest.param({**OLD["permissions"], "agents.prompt": {"optional": True}}, GRANTED,
                 "Approving grants none of what is widened.\nApproving does not grant: "
                 "+agents.prompt (optional: the card may ask for it later).",
                 id="a-new-optional-permission"),
    pytest.param({**OLD["permissions"], "network": {"hosts": ["a.example.com",
                                                             "b.example.com"]}},
                 {"agents.output"},
                 "Approving grants none of what is widened.\nApproving does not grant: "
                 "network: +b.example.com (network was revoked and stays revoked).",
                 id="hosts-of-a-revoked-one"),
    pytest.param({**OLD["permissions"], "agents.prompt": {},
                  "network": {"hosts": ["*.example.com"], "optional": True}},
                 {"agents.output"},
                 "Approving grants: +agents.prompt.\nApproving does not grant: network: "
                 "+*.example.com (network is optional and not granted).", id="some-of-it"),
]


@pytest.mark.parametrize(("permissions", "granted", "said"), CASES)
def test_each_case_is_said_as_the_engine_approves(permissions: dict[str, Any],
                                                  granted: set[str], said: str) -> None:
    """What approving grants, for each kind of widening and grant state."""
    assert _said(permissions, granted) == said


async def _offer(engine: Any, raw: dict[str, Any]) -> None:
    await engine.offer(raw["name"], raw, file_digests({
        "manifest.json": json.dumps(raw, sort_keys=True), "index.js": f"// {raw['name']}"}))


async def test_the_dialog_says_it_and_the_approval_does_it(tui_db: Path,
                                                           tui_clock: VirtualClock) -> None:
    """GIVEN acme.x installed, its network revoked since, and an update that widens only
    network's hosts, WHEN the person opens the update's dialog, THEN it says approving
    grants none of it, AND approving leaves network revoked."""
    engine = open_engine(tui_db, tui_clock)
    try:
        await _offer(engine, OLD)
        await engine.install("acme.x")
        await engine.revoke("acme.x", "network")
        await engine.update("acme.x", manifest={**OLD, "version": "1.1.0", "permissions": {
            **OLD["permissions"], "network": {"hosts": ["a.example.com", "b.example.com"]}}})
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#packages", DataTable)
        table.focus()
        table.move_cursor(row=table.get_row_index("acme.x"))
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        body = str(dialog.query_one("#confirm-body", Static).render())
        assert "Approving grants what was widened" not in body, body
        assert "Approving grants none of what is widened." in body, body
        assert "network: +b.example.com (network was revoked and stays revoked)" in body, body
        await pilot.press("y")
        await settle(pilot)
        assert not app.engine.state.packages["acme.x"].is_pending
        assert "network" not in app.engine.state.grants["acme.x"]
    app.engine.close()


async def test_the_shared_canvas_update_names_what_it_grants(tui_db: Path,
                                                             tui_clock: VirtualClock) -> None:
    """acme.notes' pending version newly requires network with one host: both granted."""
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#packages", DataTable)
        table.focus()
        table.move_cursor(row=table.get_row_index("acme.notes"))
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        body = str(app.screen.query_one("#confirm-body", Static).render())
        assert "Approving grants: +network; network: +api.example.com." in body, body
        assert "does not grant" not in body, body
    app.engine.close()
