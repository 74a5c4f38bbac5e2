"""SPEC §3, §10: a terminal's claim lapses with the process that made it, where that can be told.

Rule: an engine that drives a terminal claims it in the store, and input through
any other engine is refused (`test_terminal_input_elsewhere_is_never_pretended`).
A claim whose process was killed (it never closed its engine) on this machine —
the same boot and pid namespace, where a pid names one process — is dropped at
the next input: no process drives the terminal, which is the simulated one
again. A claim made anywhere else (another machine, container or boot) cannot be
judged by its pid and keeps refusing while its lease runs
(`test_a_claim_from_another_machine_holds_while_its_lease_runs`).

(Found in round 21: a claim left by a killed process refused input to its
terminal through every other engine until a driver was started for it again.)
"""

from __future__ import annotations

from pathlib import Path

from engine import Engine
from tests.durability.targets import Target
from tests.durability.wiring import driving_process, wire_terminal


async def test_a_killed_processs_claim_lapses(make_engine, target: Target,
                                              tmp_path: Path) -> None:
    app: Engine = make_engine()
    await wire_terminal(app, tmp_path)
    with driving_process(target):
        pass
    assert target.query("select count(*) from terminal_drivers") == [(1,)]
    d = await app.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert d.allowed and d.value == {"state": "ok"}, d
    assert target.query("select count(*) from terminal_drivers") == [(0,)]


async def test_a_claim_made_elsewhere_keeps_refusing(make_engine, target: Target,
                                                     tmp_path: Path) -> None:
    app: Engine = make_engine()
    await wire_terminal(app, tmp_path)
    with driving_process(target):
        pass
    # The same claim as if made in another boot (or machine, or container): its pid
    # says nothing here.
    target.execute("update terminal_drivers set process = 'another-boot pid:[1] 1 1'")
    d = await app.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert not d.allowed and d.code == "SCOPE_REFUSED" and d.reason == "elsewhere", d
    assert target.query("select count(*) from terminal_drivers") == [(1,)]
