"""A process a driven run or terminal detaches entirely is still driven (SPEC §4.5, §10.1).

``setsid -f env -i …`` gives a process a session of its own and a clean
environment, and its parent exits: without the supervisor it was re-parented
to init, and nothing tied it to the agent. These play it for real: the
detached process is refused by the operator check and the service's peer
check, naming the driven node, and is gone (reaped, no zombie) once the run
or the terminal has ended.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.effects.drivers import CommandAgent, PtyTerminal
from engine.effects.operator import DrivenRegistry

pytestmark = pytest.mark.skipif(
    not (sys.platform.startswith("linux") and shutil.which("setsid") and shutil.which("env")),
    reason="needs Linux (the child subreaper) and util-linux setsid")

ROOT = Path(__file__).resolve().parents[2]

#: Run detached with an empty environment: says what it is and what the checks
#: say of it, then sleeps (a leftover the run's end must take away).
PROBE = """\
import json, os, sys, time
sys.path.insert(0, sys.argv[2])
from engine.effects.operator import ProcFS, operator_check, peer_check
me = ProcFS().get(os.getpid())
here = operator_check(isatty=lambda: True, require_terminal=False)
peer = peer_check(os.getpid(), require_terminal=False)
out = {"pid": me.pid, "ppid": me.ppid, "sid": me.sid, "start": me.start,
       "env": sorted(os.environ), "operator": [here.ok, here.reason],
       "peer": [peer.ok, peer.reason]}
tmp = sys.argv[1] + ".tmp"
open(tmp, "w").write(json.dumps(out))
os.replace(tmp, sys.argv[1])
time.sleep(120)
"""


class Host:
    """Enough of a DriverHost: keeps replies and exit codes."""

    def __init__(self) -> None:
        self.replies: list[tuple[str, str | None]] = []

    def output(self, node: str, text: str) -> None:
        pass

    def exited(self, node: str, code: int) -> None:
        pass

    def status(self, node: str, status: str) -> None:
        pass

    def replied(self, node: str, text: str, *, status: str = "waiting",
                length: int | None = None, note: str | None = None) -> None:
        self.replies.append((text, note))


def detach(tmp_path: Path) -> tuple[str, Path]:
    """The shell words that detach the probe entirely, and the file it reports to."""
    probe, out = tmp_path / "probe.py", tmp_path / "verdict.json"
    probe.write_text(PROBE)
    words = ["setsid", "-f", "env", "-i", sys.executable, str(probe), str(out), str(ROOT)]
    return " ".join(shlex.quote(w) for w in words), out


async def report_of(out: Path) -> dict[str, Any]:
    """The probe's report, once written."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 120
    while not out.exists():
        assert loop.time() < deadline, "the detached probe never reported"
        await asyncio.sleep(0.05)
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def gone(report: dict[str, Any]) -> bool:
    """The probe's process no longer exists, not even as a zombie (same pid, same start)."""
    try:
        stat = Path(f"/proc/{report['pid']}/stat").read_text()
    except OSError:
        return True
    return int(stat[stat.rfind(")") + 2:].split()[19]) != report["start"]


def assert_detached_and_refused(report: dict[str, Any], node: str) -> None:
    """The probe really was detached (own session, clean environment, its parent
    gone) and both checks refused it, naming the node."""
    assert report["sid"] == report["pid"], report
    assert "ARROWGATE_DRIVEN" not in report["env"], report
    for verdict in (report["operator"], report["peer"]):
        ok, reason = verdict
        assert not ok and f"arrowgate drives (node {node})" in reason, report


async def test_a_child_a_run_detaches_is_refused_and_ended_with_the_run(
        tmp_path: Path) -> None:
    """A run's command detaches a child with a clean environment and ends: the child is
    refused as driven while the run lasts, and gone once it has ended."""
    # GIVEN a run that detaches the probe, waits for its report, and ends
    command, out = detach(tmp_path)
    script = f"{command}; while [ ! -s {shlex.quote(str(out))} ]; do sleep 0.05; done; echo ran"
    agent, host = CommandAgent("a1", ["sh", "-c", script]), Host()
    await agent.start(host, str(tmp_path))  # type: ignore[arg-type]
    try:
        # WHEN it runs
        agent.submit("go")
        report = await report_of(out)
        # THEN the probe is below the run's recorded supervisor, refused by both checks
        supervisor = agent._proc.pid  # type: ignore[union-attr]
        assert report["ppid"] == supervisor
        assert_detached_and_refused(report, "a1")
        await agent._task  # type: ignore[misc]
    finally:
        await agent.aclose()
    # AND the run's reply is its output, and the probe is gone with it, not a zombie
    assert host.replies == [("ran", None)]
    assert gone(report), report
    assert all(r.pid != supervisor for r in DrivenRegistry().records())


async def test_stopping_a_run_ends_what_it_detached(tmp_path: Path) -> None:
    """A run that times out is stopped with all its tree, detached parts included."""
    command, out = detach(tmp_path)
    agent, host = CommandAgent("a1", ["sh", "-c", f"{command}; sleep 300"], timeout=3), Host()
    await agent.start(host, str(tmp_path))  # type: ignore[arg-type]
    try:
        agent.submit("go")
        report = await report_of(out)
        assert_detached_and_refused(report, "a1")
        await agent._task  # type: ignore[misc]
    finally:
        await agent.aclose()
    # The run's status as it always was: killed (SIGKILL), after the timeout.
    assert host.replies == [("", "[stopped after 3 s]\n[exit -9]")]
    assert gone(report), report


@pytest.mark.skipif(not shutil.which("bash"), reason="needs bash")
async def test_a_child_a_terminal_detaches_is_refused_and_ended_with_it(
        tmp_path: Path) -> None:
    """Typed into a driven terminal, the detach is refused as driven; closing the
    terminal ends the detached child."""
    command, out = detach(tmp_path)
    terminal = PtyTerminal("t1")
    await terminal.start(Host(), str(tmp_path))  # type: ignore[arg-type]
    try:
        terminal.run(command)
        report = await report_of(out)
        assert report["ppid"] == terminal._proc.pid  # type: ignore[union-attr]
        assert_detached_and_refused(report, "t1")
    finally:
        await terminal.aclose()
    assert gone(report), report
