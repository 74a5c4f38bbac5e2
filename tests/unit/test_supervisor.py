"""The supervisor drivers start every process under (engine.effects.drivers.supervise).

Run for real, as the drivers run it: its exit status is the command's, it
forwards stop signals, it ends what is left of the tree once the command has
ended (SIGTERM, the grace, SIGKILL), `STOP_NOW` ends it all at once, and it
starts nothing without the driver's go.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engine.effects.drivers.supervise import STOP_NOW, command_line
from engine.effects.drivers.supervised import start_supervised
from engine.effects.operator import DrivenRegistry

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the child subreaper is Linux's")


class Supervised:
    """A supervisor started by a test, as `start_supervised` starts it."""

    def __init__(self, argv: list[str], *, grace: float = 2.0, go: bool = True) -> None:
        go_read, go_write = os.pipe()
        report_read, report_write = os.pipe()
        self.proc = subprocess.Popen(
            command_line(argv, go=go_read, report=report_write, grace=grace),
            pass_fds=(go_read, report_write), start_new_session=True,
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        os.close(go_read)
        os.close(report_write)
        if go:
            os.write(go_write, b"1")
        os.close(go_write)
        with os.fdopen(report_read, "rb") as fh:
            self.report = fh.read()
        assert self.proc.stdout is not None
        self.stdout = self.proc.stdout

    def line(self) -> str:
        """The command's next line of output."""
        return self.stdout.readline().decode().strip()

    def wait(self) -> int:
        """The supervisor's exit status, as asyncio and subprocess give it."""
        code = self.proc.wait(timeout=60)
        self.stdout.close()
        return code


def alive(pid: int) -> bool:
    """The process exists (a zombie counts: it has not been reaped)."""
    return Path(f"/proc/{pid}").exists()


@pytest.mark.parametrize(("script", "status"), [
    ("exit 3", 3), ("exit 0", 0), ("kill -TERM $$", -signal.SIGTERM),
    ("kill -KILL $$", -signal.SIGKILL)])
def test_the_exit_status_is_the_commands(script: str, status: int) -> None:
    """An exit code, or a death by a signal, reads as the command's own."""
    assert Supervised(["sh", "-c", script]).wait() == status


def test_a_stop_signal_is_forwarded_to_the_command() -> None:
    """SIGTERM to the supervisor reaches the command, which decides how it ends."""
    run = Supervised(["sh", "-c", "trap 'exit 7' TERM; echo ready; "
                                  "while :; do sleep 0.05; done"])
    assert run.line() == "ready"
    run.proc.send_signal(signal.SIGTERM)
    assert run.wait() == 7


def test_what_is_left_is_ended_with_sigterm_first() -> None:
    """A leftover that ends on SIGTERM is not made to wait out the grace."""
    run = Supervised(["sh", "-c", "sleep 300 & echo $!"], grace=30)
    leftover = int(run.line())
    started = time.monotonic()
    assert run.wait() == 0
    assert time.monotonic() - started < 15 and not alive(leftover)


def test_what_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    """A leftover that ignores SIGTERM, detached from the command's session and group,
    is killed once the grace is over, and reaped."""
    # The command ends once the leftover ignores SIGTERM (it says so in a file).
    said = tmp_path / "pid"
    run = Supervised(["sh", "-c", f"setsid -f sh -c 'trap \"\" TERM; echo $$ > {said}; "
                                  f"exec sleep 300'; while [ ! -s {said} ]; do sleep 0.02; "
                                  f"done; cat {said}"], grace=0.3)
    leftover = int(run.line())
    assert run.wait() == 0
    assert not alive(leftover)


def test_stop_now_kills_the_whole_tree_at_once() -> None:
    """`STOP_NOW` SIGKILLs the command and what it detached; the status reads as SIGKILL."""
    run = Supervised(["sh", "-c", "setsid -f sh -c 'trap \"\" TERM; echo $$; exec sleep 300'; "
                                  "trap '' TERM; sleep 300"], grace=30)
    leftover = int(run.line())
    started = time.monotonic()
    run.proc.send_signal(STOP_NOW)
    assert run.wait() == -signal.SIGKILL
    assert time.monotonic() - started < 15 and not alive(leftover)


def test_a_command_that_cannot_start_is_reported(tmp_path: Path) -> None:
    """Why exec failed goes to the report pipe (errno first); the status is 127."""
    run = Supervised([str(tmp_path / "missing")])
    assert run.report.split(b" ", 1)[0] == b"2"
    assert run.wait() == 127


def test_nothing_starts_without_the_go(tmp_path: Path) -> None:
    """A driver that gives up before recording it (no go byte): the command never runs."""
    marker = tmp_path / "ran"
    run = Supervised(["sh", "-c", f"touch {marker}"], go=False)
    assert run.wait() == 127 and not marker.exists()


async def test_start_supervised_raises_what_exec_said_and_forgets_it(tmp_path: Path) -> None:
    """A missing program is a FileNotFoundError naming it, and no record is left."""
    registry = DrivenRegistry(tmp_path / "driven")
    with pytest.raises(FileNotFoundError) as caught:
        await start_supervised([str(tmp_path / "missing")], node="a1", registry=registry,
                               start_new_session=True)
    assert caught.value.filename == str(tmp_path / "missing")
    assert registry.records() == []


async def test_start_supervised_records_the_supervisor_before_the_command(
        tmp_path: Path) -> None:
    """The record (the supervisor's pid and session) exists when the command runs."""
    registry = DrivenRegistry(tmp_path / "driven")
    proc = await start_supervised(["sh", "-c", f"ls {tmp_path / 'driven'}"], node="a1",
                                  registry=registry, start_new_session=True,
                                  stdout=subprocess.PIPE)
    out, _ = await proc.communicate()
    assert out.decode().split() == [str(proc.pid)]
    [record] = registry.records()
    assert (record.pid, record.sid, record.node) == (proc.pid, proc.pid, "a1")


async def test_start_supervised_that_cannot_record_leaves_nothing_behind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A registry that cannot record the supervisor fails the start with its error; the
    supervisor is ended and waited for, and its report pipe closed.

    (Found by a helper: only BrokenPipeError was handled; anything else leaked the
    pipe and left the supervisor unwaited.)
    """
    registry = DrivenRegistry(tmp_path / "driven")
    started: list[asyncio.subprocess.Process] = []
    spawn = asyncio.create_subprocess_exec

    async def spawned(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        started.append(await spawn(*args, **kwargs))
        return started[-1]

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise PermissionError("the registry cannot be written")

    monkeypatch.setattr(asyncio, "create_subprocess_exec", spawned)
    monkeypatch.setattr(registry, "mark", refuse)
    fds = len(os.listdir("/proc/self/fd"))
    with pytest.raises(PermissionError):
        await start_supervised(["sh", "-c", "exit 0"], node="a1", registry=registry,
                               start_new_session=True)
    [proc] = started
    assert proc.returncode is not None  # ended and reaped
    assert len(os.listdir("/proc/self/fd")) == fds
    assert registry.records() == []
