"""The demo's agent calls a card's tool and the card answers (issue 17 item 4, SPEC §9)."""

from __future__ import annotations

import json
from pathlib import Path

from engine import Engine
from engine.app.demo import play_demo

SUMMARY = {"summary": "3 commits yesterday (drivers, events, the demo); nothing blocked."}


async def test_the_tool_answer_is_in_the_narrative_and_on_the_arrow_log(tmp_path: Path) -> None:
    engine = Engine.open(tmp_path / "app.db")
    lines: list[str] = []
    try:
        await play_demo(engine, tmp_path / "proj", lines.append)
        # The stand-in agent listed the tool as arrowgate mcp names it, and got the answer.
        assert "   claude lists its tools: standup__summarize_standup" in lines
        assert f"   claude gets the answer: {json.dumps(SUMMARY)}" in lines
        # The arrow's log has the call and its resolution, for the same tool call.
        rows = engine.log_rows(arrow="standup-claude", call="tool:summarize_standup")
        assert [(r["outcome"], r["target"]) for r in rows] == [("ok", "claude"),
                                                                ("answered", "claude")]
        assert rows[0]["prompt"] == rows[1]["prompt"]
        call = engine.tool_call(rows[0]["prompt"])
        assert call is not None and call.state == "answered" and call.result == SUMMARY
        assert "   log: tool:summarize_standup answered on arrow standup-claude" in lines
        assert engine.verify_log().ok
    finally:
        await engine.world.aclose()
        engine.close()
