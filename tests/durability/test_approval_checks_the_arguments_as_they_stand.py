"""At a hold's approval the engine checks checks 1–9 of SPEC §5 again and refuses the
prompt with the error of the first rule that no longer holds, logged as ``cancelled`` with
that code (SPEC §7) — check 3 too: a prompt whose text no longer fits the workspace's
``max_payload`` (lowered while it was held) is refused ``INVALID_ARGUMENT`` naming
``text``, never delivered, on SQLite and on PostgreSQL, across a restart.

A settings change cancels nothing by itself (it is no consent change, SPEC §4.3): the
prompt stays held, shown whole to the person, until they answer it.
"""

from __future__ import annotations

from pathlib import Path

from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install, open_store

TEXT = "x" * 5000


async def test_a_text_past_a_lowered_max_payload_is_refused_at_approval(
        store: str, tmp_path: Path) -> None:
    """Held under the default max_payload; lowered to 1 KiB; approved: cancelled
    INVALID_ARGUMENT (text), as a new call is refused now, and logged so."""
    clock = VirtualClock(1000.0)
    engine = open_store(store, clock=clock)
    try:
        # GIVEN a 5,000-byte prompt held for the dangerous agent a1
        (tmp_path / "ws").mkdir()
        await engine.create_workspace("w1", tmp_path / "ws")
        await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"},
                              workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent", "dangerous": True,
                               "status": "waiting"}, workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
        held = await engine.call("c1", "agents.prompt", "a1", {"text": TEXT})
        assert held.outcome == "held" and held.prompt is not None, held
        pid = held.prompt
        # WHEN max_payload is lowered below the text, and the engine opened again
        await engine.set_settings("w1", {"max_payload": 1024})
        assert engine.prompt(pid).state == "held"  # a setting cancels nothing itself
    finally:
        engine.close()
    again = open_store(store, clock=clock)
    try:
        digest = again.prompt(pid).text_sha256
        answer = await again.approve_hold(pid, text_sha256=digest)
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
    finally:
        again.close()
