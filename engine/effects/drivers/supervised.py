"""Starting a driven process under the supervisor, recorded before it runs.

`start_supervised` is what the drivers call instead of
``asyncio.create_subprocess_exec``: the process it returns is the
supervisor (`engine.effects.drivers.supervise`), whose pid, start time and
session go into `DrivenRegistry` *before* the supervisor is let start the
real command. Every process of the command's tree, however it detaches,
then has the recorded supervisor among its parents (the operator check
walks up to it).
"""

from __future__ import annotations

import asyncio
import os
import select
from collections.abc import Sequence
from typing import Any

from engine.effects.drivers.supervise import STOP_NOW, command_line
from engine.effects.operator import DrivenRegistry

__all__ = ["start_supervised", "stop_now"]

# The most of a report read: an errno and its text.
_REPORT_MAX = 4096


async def start_supervised(argv: Sequence[str], *, node: str, registry: DrivenRegistry,
                           tty: int | None = None, pass_fds: Sequence[int] = (),
                           **spawn: Any) -> asyncio.subprocess.Process:
    """Start ``argv`` under the supervisor, recorded in ``registry`` as driven by ``node``.

    The supervisor leads the session (``start_new_session`` or a ``preexec_fn``
    that calls ``setsid`` must be among ``spawn``: the command shares it).

    Args:
        argv: the real command.
        node: the node that drives it, named in the operator check's refusals.
        registry: where the supervisor is recorded (pid, start time, session, ``tty``).
        tty: the /proc tty_nr of the terminal the session holds, if any.
        pass_fds: descriptors the command gets, as ``create_subprocess_exec``'s.
        **spawn: the rest of ``create_subprocess_exec``'s keyword arguments.

    Returns:
        The supervisor's process: its exit status is the command's (a death
        by a signal included); the caller unmarks it from ``registry`` when
        it has ended.

    Raises:
        OSError: the supervisor, or the command under it, could not be
            started (``ENOENT``, ``E2BIG``, ...); nothing is left recorded.
        ValueError: an argument cannot be passed to exec (a NUL in it).
    """
    go_read, go_write = os.pipe()
    report_read, report_write = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            *command_line(list(argv), go=go_read, report=report_write),
            pass_fds=(*pass_fds, go_read, report_write), **spawn)
    except BaseException:
        for fd in (go_write, report_read):
            os.close(fd)
        raise
    finally:
        for fd in (go_read, report_write):
            os.close(fd)
    marked = False
    try:
        registry.mark(proc.pid, node, sid=proc.pid, tty=tty)
        marked = True
        # The go: only now, recorded, may the command start.
        os.write(go_write, b"1")
    except BrokenPipeError:
        pass  # the supervisor is gone already (stopped): its status says how
    except BaseException:
        # Not recorded, or no go given (a registry that cannot be written, say):
        # no one would own the run. It ends here, waited for, with its report
        # pipe closed and no record left; the command never had its go.
        os.close(go_write)
        go_write = -1
        os.close(report_read)
        _stop(proc)
        if marked:
            registry.unmark(proc.pid)
        await proc.wait()
        raise
    finally:
        if go_write != -1:
            os.close(go_write)
    try:
        report = await _read_to_end(report_read)
    except BaseException:
        # Cancelled while it starts: no one would own the run, so it ends
        # here (its whole tree: the supervisor may have started the command).
        _stop(proc)
        registry.unmark(proc.pid)
        raise
    if not report:
        return proc
    registry.unmark(proc.pid)
    await proc.wait()
    code, _, text = report.decode("utf-8", "replace").partition(" ")
    raise OSError(int(code) if code.isdigit() else 0, text, argv[0])


def _stop(proc: asyncio.subprocess.Process) -> None:
    """Ask the supervisor to end its whole tree now."""
    stop_now(proc)


def stop_now(proc: asyncio.subprocess.Process, *, wait: float = 0.0) -> None:
    """Ask ``proc``'s supervisor to SIGKILL its whole tree (`STOP_NOW`).

    With ``wait``, block up to that many seconds until the supervisor has
    exited (not reaped: asyncio reaps it). For a caller that stops a run and
    will not await it (a removed node's driver): once this returns, the run's
    pipes are at their end, as when a driver killed the run's process group
    itself, so the loop closes them before it ends.
    """
    if proc.returncode is not None:
        return
    try:
        os.kill(proc.pid, STOP_NOW)
    except ProcessLookupError:
        return
    if wait <= 0 or not hasattr(os, "pidfd_open"):
        return
    try:
        pidfd = os.pidfd_open(proc.pid)
    except OSError:
        return  # gone already, or a kernel without pidfds
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        poller.poll(int(wait * 1000))  # readable once the process has exited
    finally:
        os.close(pidfd)


async def _read_to_end(fd: int) -> bytes:
    """What a pipe's writers wrote (at most `_REPORT_MAX` bytes) until they all closed
    it, without blocking the loop; closes ``fd``."""
    loop = asyncio.get_running_loop()
    chunks: list[bytes] = []
    ended: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        try:
            data = os.read(fd, _REPORT_MAX)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data and sum(map(len, chunks)) < _REPORT_MAX:
            chunks.append(data)
        elif not data and not ended.done():
            ended.set_result(None)

    try:
        os.set_blocking(fd, False)
        loop.add_reader(fd, readable)
        try:
            await ended
        finally:
            loop.remove_reader(fd)
    finally:
        os.close(fd)
    return b"".join(chunks)[:_REPORT_MAX]
