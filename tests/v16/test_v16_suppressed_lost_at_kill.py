"""SPEC §8 "Bounds": refusals beyond ``denial_log_limit`` are summed up in one
``suppressed`` row "before that card's next logged row and at close"; SPEC §10: every
log row is durable once the call that made it returns. The summary lives only in
memory (engine/core/limits.py DenialLog.held, written by Recorder.flush_suppressed at
Engine.close): a process killed (SIGKILL, OOM, power cut) after a flood of refusals
leaves no trace of them at all — a careful user expects the log to say that they
happened, as the rows they stand for would have."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from engine import Engine, World

_CHILD = r"""
import asyncio, os, signal, sys
sys.path.insert(0, {root!r})
from pathlib import Path
from engine import Engine, World
from tests.conftest import manifest, offer_install

async def main():
    engine = Engine.open({db!r}, world=World(net=None, fs=None))
    Path({ws!r}).mkdir(exist_ok=True)
    await engine.create_workspace("w1", {ws!r})
    await engine.set_settings("w1", {{"denial_log_limit": 2}})
    await offer_install(engine, manifest("acme.probe", {{"agents.prompt": {{}}}}))
    await engine.add_node({{"id": "c1", "type": "card", "package": "acme.probe"}},
                          workspace="w1")
    for i in range(50):  # probing for agents it is not connected to
        await engine.call("c1", "agents.prompt", f"a{{i}}", {{"text": "hi"}})
    print("answered", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""


def test_a_flood_of_suppressed_refusals_survives_a_kill(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    root = str(Path(__file__).resolve().parents[2])
    child = subprocess.run([sys.executable, "-c", _CHILD.format(root=root, db=str(db),
                                                                ws=str(tmp_path / "ws"))],
                           capture_output=True, text=True, timeout=25)
    assert "answered" in child.stdout, child.stderr
    engine = Engine.open(db, world=World(net=None, fs=None))
    try:
        rows = engine.log_rows(card="c1")
        logged = sum(1 for r in rows if r["outcome"] == "denied")
        summed = sum(json.loads(r["payload"])["count"] for r in rows
                     if r["outcome"] == "suppressed")
        # Today: 2 denied rows and nothing else; 48 answered refusals left no trace.
        assert logged + summed == 50, (logged, summed)
    finally:
        engine.close()
