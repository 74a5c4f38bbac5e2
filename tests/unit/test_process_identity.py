"""`engine.effects.processes`: a process named in the store is judged gone only where its
pid means that very process (this boot and pid namespace, the same start time).

(Found in round 21, with the terminal claims that outlived a killed process.)
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from engine.effects import processes

pytestmark = pytest.mark.skipif(processes.identity() is None,
                                reason="no /proc here: no process is ever judged gone")


def test_this_process_is_not_gone() -> None:
    assert not processes.gone(processes.identity())


def test_an_exited_process_is_gone_and_a_reused_pid_does_not_revive_it() -> None:
    me = processes.identity()
    assert me is not None
    place, pid, started = me.rsplit(" ", 2)
    # The same pid with another start time: the pid was reused by this process.
    assert processes.gone(f"{place} {pid} {int(started) + 1}")
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    assert processes.gone(f"{place} {child.stdout.strip()} {started}")


@pytest.mark.parametrize("named", [
    None, "", "x", "another-boot pid:[1] 1 1",
    "{place} -1 5", "{place} 1e3 5", "{place} " + "9" * 5000 + " 5", "{place} 12 ",
    "{place} ١٢ 5",  # digits, but not ASCII ones
])
def test_what_cannot_be_judged_is_not_gone(named: str | None) -> None:
    me = processes.identity()
    assert me is not None
    place = me.rsplit(" ", 2)[0]
    assert not processes.gone(None if named is None else named.replace("{place}", place))
