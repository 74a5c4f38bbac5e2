"""`arrowgate log verify` gives the same verdict on a store another process is writing
as on a quiet one: it reads the rows in one read snapshot and the anchor after that
snapshot began (an anchor ahead of it is checked in a renewed snapshot), so a live
writer is never taken for tampering.

(Found by a helper: with `calls:batch` load, 7 of 10 verifies said "row N is not the
newest row the anchor knows: rows were added or the chain was rewritten", exit 1.)"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.unit.cli_process import demo_db, run

WRITER = r"""
import asyncio, sys, time
from engine import Engine, World

async def main(path):
    engine = Engine.open(path, world=World(net=None, fs=None))
    print("ready", flush=True)
    # Until the test kills it: six verifies on a loaded machine can take more than any
    # fixed time (the bound only ends a writer whose test died without killing it).
    end = time.time() + 600
    while time.time() < end:
        # An allowed call that reaches a node: one log row each.
        await engine.call_many([("standup", "agents.readScreen", "shell", None, None)] * 20)
    engine.close()

asyncio.run(main(sys.argv[1]))
"""


def test_verify_of_a_live_store_finds_nothing(tmp_path: Path) -> None:
    db = demo_db(tmp_path)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(db)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        answers = []
        for _ in range(6):
            done = run("log", "verify", "--db", str(db), "--json")
            answers.append((done.returncode, done.stdout.strip()))
        assert writer.poll() is None, "the writer stopped early: the test proves nothing"
    finally:
        writer.kill()
        writer.wait()
        if writer.stdout is not None:
            writer.stdout.close()
    # Nobody touched the log: every verification must say so.
    bad = [a for a in answers if a[0] != 0 or not json.loads(a[1])["ok"]]
    assert not bad, bad
