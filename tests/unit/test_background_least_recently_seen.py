"""SPEC §6 "background": the least recently seen background cards beyond 8 are suspended.

Rule: a workspace's cards are on screen until the moment it is hidden, so hiding a shown
workspace marks its cards seen *now* (hiding an already hidden one changes nothing).
Cards last seen an hour earlier, in a workspace shown briefly and hidden again, are the
least recently seen and are the ones suspended.

(Found by a helper: the cards were marked seen only after the workspace was already in
the hidden set, so hiding never marked them, and the cards just looked at were
suspended first.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock

from ..conftest import manifest, offer_install


async def test_cards_hidden_just_now_are_the_most_recently_seen(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """Hiding w1 after an hour's work keeps w1's cards and suspends w2's older ones."""
    engine = make_engine()
    for ws in ("w1", "w2"):
        (tmp_path / ws).mkdir()
        await engine.create_workspace(ws, tmp_path / ws)
    await offer_install(engine, manifest("acme.bg", {"background": {}}))
    for ws in ("w1", "w2"):
        for i in range(8):
            await engine.add_node({"id": f"{ws}c{i}", "type": "card", "package": "acme.bg",
                                   "background": True}, workspace=ws)
    # w2 is shown for a second at t=1000 and hidden again.
    engine.set_workspace_hidden("w2", True)
    engine.set_workspace_hidden("w2", False)
    clock.t += 1
    engine.set_workspace_hidden("w2", True)
    # The person keeps working in w1 for an hour, then switches away from it.
    clock.t += 3600
    status = engine.set_workspace_hidden("w1", True)
    suspended = sorted(c for c, s in status.items() if s == "suspended")
    # w1's cards were on screen a moment ago; w2's an hour ago.
    assert suspended == [f"w2c{i}" for i in range(8)], status
