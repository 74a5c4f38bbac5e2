"""A hold's RISK line names the agent the text goes to as one id, quoted where the id holds
a space or a comma, as the rest of the dialog does.

Rule (SPEC §7: the hold shows the agent; the TUI's ids are quoted where they hold what
separates words, `engine.core.text.quoted`): the RISK line wrote the agent's id bare into
its sentence, so an agent whose id is "ops, which only reads files." was said to be
"agent ops, which only reads files., which runs in dangerous mode": the id's words read as
the dialog's own, telling the person what the agent does. The lines below it quote it.

(Found by helper tui32 in round 32.)
"""

from __future__ import annotations

from pathlib import Path

from engine.app.replay import VirtualClock
from tui.screens.hold import HoldScreen

from .conftest import open_hold
from .world import make_app, open_engine

AGENT = "ops, which only reads files."


async def test_the_risk_line_quotes_an_agent_id_of_words(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    # GIVEN a dangerous agent whose id reads as words, and a prompt held for it
    engine = open_engine(tui_db, tui_clock)
    try:
        await engine.add_node({"id": AGENT, "type": "agent", "dangerous": True},
                              workspace="w1")
        await engine.add_arrow({"id": "e7", "from": "standup", "to": AGENT})
        decision = await engine.call("standup", "agents.prompt", AGENT, {"text": "hi"})
        assert decision.outcome == "held", decision
        held = decision.prompt
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40)) as pilot:
        # WHEN the person opens its approve dialog
        dialog = await open_hold(pilot, held)
        assert isinstance(dialog, HoldScreen)
        # THEN the RISK line names the agent quoted, as one id
        risk = str(dialog.query_one("#hold-risk").render())
        assert f'agent "{AGENT}", which runs in dangerous mode' in risk, risk
    app.engine.close()
