"""A grants screen's consent dialog lists the package's cards inert, on its own lines.

Revoke, grant and remove each ask "Every card of the package (c1, c2) ..." in
a dialog drawn over several lines. A card id stored before ids were checked
for control characters (round 15) may hold a line break; put into the dialog
raw, it wrote lines of the card's making into what the person consents to
("Nothing changes: ..."), and an id holding ", " read as two cards.

(Found in round 20: `GrantsScreen` joined the card ids raw into the body that
`ConfirmScreen` draws with ``multiline=True``.)
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import pytest
from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tui.screens.confirm import ConfirmScreen

from .conftest import settle
from .world import make_app, open_engine

#: The line the card's id would add to the dialog.
FORGED = "Nothing changes: its cards keep every permission they have."
CARD = "c1\n\n" + FORGED


async def _old_cards(path: Path, clock: VirtualClock) -> None:
    """A card of acme.standup and one of the offered acme.reader, ids with line breaks
    (as a database written before round 15 holds); terminals.write revoked to re-grant."""
    engine = open_engine(path, clock)
    try:
        with mock.patch("engine.services.nodes.id_problem", lambda _kind, _value: None):
            await engine.add_node({"id": CARD, "type": "card", "package": "acme.standup"},
                                  workspace="w1")
            await engine.add_node({"id": "r1\n\n" + FORGED, "type": "card",
                                   "package": "acme.reader"}, workspace="w1")
        await engine.revoke("acme.standup", "terminals.write")
    finally:
        engine.close()


def _select(app: object, table_id: str, key: str) -> None:
    table = app.screen.query_one(table_id, DataTable)  # type: ignore[attr-defined]
    table.focus()
    table.move_cursor(row=table.get_row_index(key))


@pytest.mark.parametrize(("package", "permission", "key"), [
    ("acme.standup", "agents.prompt", "v"),
    ("acme.standup", "terminals.write", "g"),
    ("acme.reader", None, "d"),
], ids=["revoke", "grant", "remove"])
async def test_a_card_id_adds_no_line_to_the_consent_dialog(
        tui_db: Path, tui_clock: VirtualClock, package: str, permission: str | None,
        key: str) -> None:
    """What the person consents to is the dialog's text only: each card id on one line."""
    await _old_cards(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        _select(app, "#packages", package)
        await settle(pilot)
        if permission is not None:
            _select(app, "#permissions", permission)
        await pilot.press(key)
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        lines = str(dialog._body).split("\n")
        assert FORGED not in lines, lines
        assert any(("Every card" in line or "Its cards" in line) and FORGED in line
                   for line in lines), lines


async def test_a_card_id_with_a_comma_is_one_card_in_the_list(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    """An id holding ", " is told apart from two cards: it is quoted."""
    engine = open_engine(tui_db, tui_clock)
    try:
        await engine.add_node({"id": "c1, jotter", "type": "card", "package": "acme.standup"},
                              workspace="w1")
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        _select(app, "#packages", "acme.standup")
        await settle(pilot)
        _select(app, "#permissions", "agents.prompt")
        await pilot.press("v")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert '"c1, jotter"' in str(dialog._body), str(dialog._body)
