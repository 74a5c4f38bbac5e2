"""SPEC §3, §10: a terminal's claim lapses with the process that made it, where that can be told.

Rule: an engine that drives a terminal claims it in the store, and input through
any other engine is refused (`test_terminal_input_elsewhere_is_never_pretended`).
A claim whose process was killed (it never closed its engine) on this machine —
the same boot and pid namespace, where a pid names one process — is dropped at
the next input: no process drives the terminal, which is the simulated one
again. A claim made anywhere else (another machine, container or boot) cannot be
judged by its pid and keeps refusing.

(Found in round 21: a claim left by a killed process refused input to its
terminal through every other engine until a driver was started for it again.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from engine import Engine
from tests.conftest import manifest, offer_install
from tests.durability.targets import Target

_ROOT = Path(__file__).resolve().parents[2]


async def _terminal(app: Engine, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    await app.create_workspace("w1", tmp_path / "ws")
    await offer_install(app, manifest("acme.t", {"terminals.write": {}}))
    await app.add_node({"id": "c1", "type": "card", "package": "acme.t"}, workspace="w1")
    await app.add_node({"id": "t1", "type": "terminal"}, workspace="w1")
    await app.add_arrow({"id": "e1", "from": "c1", "to": "t1"})


def _claimed_then_killed(target: Target) -> None:
    """Run a process that drives t1 (its claim goes in the store), then SIGKILL it."""
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    with subprocess.Popen([sys.executable, "-m", "tests.durability.claimer",
                           target.location, "t1"], stdout=subprocess.PIPE, text=True,
                          cwd=_ROOT, env=env) as proc:
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
        finally:
            proc.kill()
            proc.wait(timeout=60)

async def test_a_killed_processs_claim_lapses(make_engine, target: Target,
                                              tmp_path: Path) -> None:
    app: Engine = make_engine()
    await _terminal(app, tmp_path)
    _claimed_then_killed(target)
    assert target.query("select count(*) from terminal_drivers") == [(1,)]
    d = await app.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert d.allowed and d.value == {"state": "ok"}, d
    assert target.query("select count(*) from terminal_drivers") == [(0,)]


async def test_a_claim_made_elsewhere_keeps_refusing(make_engine, target: Target,
                                                     tmp_path: Path) -> None:
    app: Engine = make_engine()
    await _terminal(app, tmp_path)
    _claimed_then_killed(target)
    # The same claim as if made in another boot (or machine, or container): its pid
    # says nothing here.
    target.execute("update terminal_drivers set process = 'another-boot pid:[1] 1 1'")
    d = await app.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert not d.allowed and d.code == "SCOPE_REFUSED" and d.reason == "elsewhere", d
    assert target.query("select count(*) from terminal_drivers") == [(1,)]
