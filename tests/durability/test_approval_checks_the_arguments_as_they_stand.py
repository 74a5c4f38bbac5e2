"""At a hold's approval the engine checks checks 1–9 of SPEC §5 again and refuses the
prompt with the error of the first rule that no longer holds, logged as ``cancelled`` with
that code (SPEC §7) — check 3 too: a prompt whose text no longer fits the workspace's
``max_payload`` is refused ``INVALID_ARGUMENT`` naming ``text``, never delivered, on
SQLite and on PostgreSQL, across a restart.

A change an engine makes to the settings cancels such a prompt at once (round 32,
tests/durability/test_a_settings_change_cancels_the_prompts_it_makes_impossible.py); the
approval's own check is for a change no re-check followed: here ``max_payload`` lowered in
the store while no engine ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import manifest, offer_install
from tests.durability.targets import Target

TEXT = "x" * 5000


async def test_a_text_past_a_lowered_max_payload_is_refused_at_approval(
        make_engine: Any, target: Target, tmp_path: Path) -> None:
    """Held under the default max_payload; lowered to 1 KiB in the store; approved:
    cancelled INVALID_ARGUMENT (text), as a new call is refused now, and logged so."""
    engine = make_engine()
    # GIVEN a 5,000-byte prompt held for the dangerous agent a1
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "dangerous": True,
                           "status": "waiting"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    held = await engine.call("c1", "agents.prompt", "a1", {"text": TEXT})
    assert held.outcome == "held" and held.prompt is not None, held
    pid = held.prompt
    engine.close()
    # WHEN max_payload is lowered below the text while no engine runs
    target.execute({
        "sqlite": "update workspaces set settings = json_set(settings, '$.max_payload', 1024)",
        "postgresql": "update workspaces set settings = "
                      "jsonb_set(settings::jsonb, '{max_payload}', '1024')::text"})
    again = make_engine()
    assert again.state.workspaces["w1"].settings.max_payload == 1024
    assert again.prompt(pid).state == "held"  # no re-check followed the change
    answer = await again.approve_hold(pid, text_sha256=again.prompt(pid).text_sha256)
    # THEN the approval refuses it with check 3's error, as a new call would get it
    now = await again.call("c1", "agents.prompt", "a1", {"text": TEXT})
    assert (answer.outcome, answer.code, answer.reason) == (
        "denied", "INVALID_ARGUMENT", "text"), answer
    assert (now.code, now.reason) == (answer.code, answer.reason)
    assert again.prompt(pid).state == "cancelled"
    # AND it is logged as cancelled with that code, approved by nobody's yes
    rows = [r for r in again.log_rows(arrow="e1") if r["prompt"] == pid]
    assert [(r["outcome"], r["code"], r["reason"]) for r in rows] == [
        ("held", None, None), ("cancelled", "INVALID_ARGUMENT", "text")]
    assert again.verify_log().ok
