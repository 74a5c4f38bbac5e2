"""Every change of consent is durable once the call that made it returns (SPEC §10
"Storage"): a process killed with SIGKILL the moment a revoke, an arrow's removal or a
hold's approval returned leaves it in the store, with its consent history entry and
its log rows, and a log that verifies; on both stores.

(The log rows of calls are held to the same by ``test_processes``' crash test.)
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.app.cli import main
from tests.conftest import manifest, offer_install
from tests.durability.targets import Target

ROOT = Path(__file__).resolve().parents[2]

#: One consent change, then "done" the moment it returned, then waiting to be killed.
CHANGER = textwrap.dedent("""
    import asyncio, sys
    from engine import Engine, World

    where, step, held = sys.argv[1], sys.argv[2], sys.argv[3]

    async def main():
        world = World(net=None, fs=None)
        engine = (Engine.open(store=where, world=world) if where.startswith("postgresql")
                  else Engine.open(where, world=world))
        if step == "revoke":
            await engine.revoke("acme.p", "agents.prompt")
        elif step == "remove-arrow":
            await engine.remove_arrow("e2")
        else:
            await engine.approve_hold(held, text_sha256=engine.prompt(held).text_sha256)
        print("done", flush=True)
        await asyncio.Event().wait()  # killed here, before anything else runs

    asyncio.run(main())
""")


async def _world(target: Target, folder: Path) -> str:
    """c1 (acme.p) wired to a1 (e1) and to the dangerous y1 (e2); a prompt held on e2.
    Returns the held prompt's id."""
    engine = target.open()
    try:
        (folder / "ws").mkdir(exist_ok=True)
        await engine.create_workspace("w1", folder / "ws")
        await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
        await engine.add_node({"id": "y1", "type": "agent", "dangerous": True}, workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
        await engine.add_arrow({"id": "e2", "from": "c1", "to": "y1"})
        held = await engine.call("c1", "agents.prompt", "y1", {"text": "deploy"})
        assert held.outcome == "held" and held.prompt is not None
        return held.prompt
    finally:
        await engine.aclose()


def _change_and_die(target: Target, step: str, held: str) -> None:
    """Run ``step`` in a process of its own and SIGKILL it the moment the call returned."""
    proc = subprocess.Popen([sys.executable, "-c", CHANGER, target.location, step, held],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    proc.send_signal(signal.SIGKILL)
    _out, err = proc.communicate(timeout=60)
    assert line.strip() == "done", err


@pytest.mark.parametrize("step", ["revoke", "remove-arrow", "approve"])
async def test_a_consent_change_survives_a_kill_right_after_it_returned(
        target: Target, tmp_path: Path, step: str) -> None:
    # GIVEN a store with a grant, an arrow and a held prompt on it
    held = await _world(target, tmp_path)
    # WHEN a process changes consent and is killed with SIGKILL as soon as the call returns
    _change_and_die(target, step, held)
    # THEN an engine opened afterwards finds the change made, recorded and logged
    engine = target.open()
    try:
        state = engine.state
        actions = [e["action"] for e in engine.history.entries()]
        outcomes = [r["outcome"] for r in engine.log_rows(arrow="e2")]
        if step == "revoke":
            assert not state.granted("acme.p", "agents.prompt")
            assert actions[-1] == "revoke"
            assert outcomes == ["held", "cancelled"]
        elif step == "remove-arrow":
            assert state.canvas.arrow("e2") is None
            assert outcomes == ["held", "cancelled"]
        else:
            prompt = engine.prompt(held)
            assert prompt is not None and prompt.state in ("queued", "delivered")
            assert outcomes == ["held", "approved"]
        assert engine.verify_log().ok
    finally:
        await engine.aclose()
    assert main(["log", "verify", *target.args()]) == 0
