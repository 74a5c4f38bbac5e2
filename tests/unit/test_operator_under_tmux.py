"""The operator check under tmux and screen: the window must be one a person looks at.

An agent can ask a tmux server to run the TUI (``tmux new-session -d 'arrowgate tui'``)
and type into it (``tmux send-keys``): the TUI's parents are then the tmux server and
init, never the agent. The check asks the server: the pane must be the one its session
shows, a client must be attached to that session, and every attached client must pass
the check itself. A person in their own tmux passes.

(Found by helper tui25: a TUI started in a detached tmux session passed the check.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from engine.effects.operator import DrivenRegistry, ProcFS, operator_check

from .test_operator import BASH, INIT, PTS, ROOT, SSHD, fake_proc

SOCKET = "/tmp/tmux-1000/default"
SERVER = {"pid": 500, "ppid": 1, "sid": 500, "tty": 0,
          "argv": ["tmux", "new-session", "-d", "arrowgate tui"]}
TUI = {"pid": 600, "ppid": 500, "sid": 600, "tty": PTS + 3, "argv": ["arrowgate", "tui"]}
PERSON_CLIENT = {"pid": 700, "ppid": 400, "sid": 400, "tty": PTS, "argv": ["tmux", "attach"]}
CLAUDE = {"pid": 800, "ppid": 1, "sid": 800, "tty": 0, "argv": ["node", "/usr/bin/claude"]}
SCRIPT = {"pid": 810, "ppid": 800, "sid": 810, "tty": 0,
          "argv": ["script", "-qc", "tmux attach", "/dev/null"]}
AGENT_CLIENT = {"pid": 820, "ppid": 810, "sid": 820, "tty": PTS + 7,
                "argv": ["tmux", "attach"]}
PROCS = [INIT, SSHD, BASH, SERVER, TUI, PERSON_CLIENT, CLAUDE, SCRIPT, AGENT_CLIENT]


class FakeTmux:
    """A tmux server's answers: the pane of /dev/pts/3 in session $0, and its clients."""

    def __init__(self, *, clients: Sequence[int] = (700,), window_active: str = "1",
                 pid: int = 500) -> None:
        self.clients, self.window_active, self.pid = clients, window_active, pid
        self.asked: list[tuple[int, str, list[str]]] = []

    def __call__(self, server: int, program: str, args: Sequence[str], *,
                 any_status: bool = False) -> str | None:
        self.asked.append((server, program, list(args)))
        assert list(args[:2]) == ["-S", SOCKET], args
        if "display-message" in args:
            return f"{self.pid}\n"
        if "list-panes" in args:
            return (f"/dev/pts/9\t$1\t1\t1\n/dev/pts/3\t$0\t{self.window_active}\t1\n")
        if "list-clients" in args:
            return "".join(f"{c}\t$0\n" for c in self.clients) + "999\t$1\n"
        raise AssertionError(args)


def check(tmp_path: Path, ask: Any, *, environ: dict[str, str] | None = None) -> Any:
    table = ProcFS(fake_proc(tmp_path / "proc", PROCS), self_pid=600)
    return operator_check(isatty=lambda: True, table=table, ask=ask,
                          environ={"TERM": "tmux", "TMUX": f"{SOCKET},500,0"}
                          if environ is None else environ,
                          registry=DrivenRegistry(tmp_path / "none"))


def test_a_person_in_their_own_tmux_passes(tmp_path: Path) -> None:
    """Their pane shown, their client attached from their own terminal."""
    tmux = FakeTmux()
    assert check(tmp_path, tmux).ok
    assert all(program == "tmux" and server == 500 for server, program, _ in tmux.asked)


def test_a_detached_tmux_session_is_refused(tmp_path: Path) -> None:
    """No client attached: no person is looking at it (``tmux new-session -d``)."""
    verdict = check(tmp_path, FakeTmux(clients=()))
    assert not verdict.ok and "no client is attached" in verdict.reason, verdict


def test_a_client_attached_from_an_agent_is_refused(tmp_path: Path) -> None:
    """A client under ``script`` under an agent lets the agent type into the session."""
    verdict = check(tmp_path, FakeTmux(clients=(700, 820)))
    assert not verdict.ok and "pid 820" in verdict.reason and "script" in verdict.reason, \
        verdict


def test_a_window_not_shown_is_refused(tmp_path: Path) -> None:
    """A window made in the background of the person's session (``new-window -d``)."""
    verdict = check(tmp_path, FakeTmux(window_active="0"))
    assert not verdict.ok and "not the one shown" in verdict.reason, verdict


def test_tmux_that_cannot_be_asked_is_refused(tmp_path: Path) -> None:
    """TMUX unset (``env -u TMUX``), or naming another server's socket: it cannot tell."""
    unset = check(tmp_path, FakeTmux(), environ={"TERM": "tmux"})
    assert not unset.ok and "TMUX" in unset.reason, unset
    other = check(tmp_path / "2", FakeTmux(pid=4242))
    assert not other.ok and "not that server's" in other.reason, other


@pytest.mark.skipif(shutil.which("tmux") is None or not Path("/proc/self/stat").exists(),
                    reason="needs tmux and /proc")
def test_a_real_detached_tmux_session_is_refused(tmp_path: Path) -> None:
    """The real thing: the check run in a pane of a detached session, as an agent starts it."""
    socket, out = tmp_path / "sock", tmp_path / "verdict"
    code = ("from engine.effects.operator import operator_check; import sys; "
            f"v = operator_check(); open({str(out)!r}, 'w').write(repr(v))")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "PYTHONPATH": str(ROOT), "TERM": "xterm"}
    subprocess.run(["tmux", "-S", str(socket), "new-session", "-d", "-x", "80", "-y", "24",
                    f"{sys.executable} -c \"{code}\"; sleep 30"], env=env, check=True,
                   timeout=30)
    try:
        deadline = time.monotonic() + 30
        while not out.exists() or not out.read_text():
            assert time.monotonic() < deadline, "the pane never ran the check"
            time.sleep(0.05)
        verdict = out.read_text()
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], env=env, timeout=30,
                       check=False)
    assert "ok=False" in verdict and "tmux" in verdict, verdict


class _NoTtyTable:
    """A process table that knows no terminal numbers (``ps`` where there is no /proc)."""

    def __init__(self, table: ProcFS) -> None:
        self._table = table

    def self_pid(self) -> int:
        return self._table.self_pid()

    def get(self, pid: int) -> Any:
        from dataclasses import replace

        info = self._table.get(pid)
        return None if info is None else replace(info, tty=0 if pid == 600 else info.tty)


def test_without_proc_the_pane_is_found_by_the_terminals_path(tmp_path: Path) -> None:
    """Where the process table knows no terminal number, this process's own terminal path
    finds its pane: a person in their own tmux is not refused for want of /proc."""
    table = _NoTtyTable(ProcFS(fake_proc(tmp_path / "proc", PROCS), self_pid=600))
    verdict = operator_check(isatty=lambda: True, table=table, ask=FakeTmux(),
                             environ={"TERM": "tmux", "TMUX": f"{SOCKET},500,0"},
                             registry=DrivenRegistry(tmp_path / "none"),
                             terminal=lambda: "/dev/pts/3")
    assert verdict.ok, verdict
    other = operator_check(isatty=lambda: True, table=table, ask=FakeTmux(),
                           environ={"TERM": "tmux", "TMUX": f"{SOCKET},500,0"},
                           registry=DrivenRegistry(tmp_path / "none"),
                           terminal=lambda: "/dev/pts/9")  # the pane of another session
    assert not other.ok, other


class _PsLikeTable(_NoTtyTable):
    """As ``ps`` reads processes: no terminal numbers, no environments."""

    def get(self, pid: int) -> Any:
        from dataclasses import replace

        info = self._table.get(pid)
        return None if info is None else replace(info, tty=0, environ=None)


def test_without_proc_attached_clients_are_judged_by_their_parents(tmp_path: Path) -> None:
    """Where neither environments nor terminals can be read (``ps``), a client is judged
    by its parents' command lines, as every ancestor is there: the person's passes, one
    under ``script`` under an agent does not."""
    table = _PsLikeTable(ProcFS(fake_proc(tmp_path / "proc", PROCS), self_pid=600))

    def run(clients: Sequence[int]) -> Any:
        return operator_check(isatty=lambda: True, table=table, ask=FakeTmux(clients=clients),
                              environ={"TERM": "tmux", "TMUX": f"{SOCKET},500,0"},
                              registry=DrivenRegistry(tmp_path / "none"),
                              terminal=lambda: "/dev/pts/3")

    assert run((700,)).ok, run((700,))
    refused = run((700, 820))
    assert not refused.ok and "script" in refused.reason, refused


class _OddPids(FakeTmux):
    """A server (or something posing as one) that answers a client pid in digits
    `int` does not read: superscripts, other scripts' digits."""

    def __call__(self, server: int, program: str, args: Sequence[str], *,
                 any_status: bool = False) -> str | None:
        if "list-clients" in args:
            return "\u00b2\t$0\n\u0667\t$0\n"
        return super().__call__(server, program, args, any_status=any_status)


def test_a_client_pid_that_is_no_number_is_no_client(tmp_path: Path) -> None:
    """Refused as no client attached, never a crash of the check (round 25, rv25:
    ``"²".isdigit()`` is true and ``int("²")`` raises)."""
    verdict = check(tmp_path, _OddPids())
    assert not verdict.ok and "no client is attached" in verdict.reason, verdict
