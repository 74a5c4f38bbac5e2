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


class _Grouped(FakeTmux):
    """A server whose pane /dev/pts/3 is in a window linked into two sessions of one group
    (``tmux new -t main``): listed once for each, as tmux lists them (by session name).

    ``rows`` are (session, window current in it); ``clients`` (pid, session)."""

    def __init__(self, rows: Sequence[tuple[str, str]],
                 clients: Sequence[tuple[int, str]]) -> None:
        super().__init__()
        self.rows, self.grouped_clients = rows, clients

    def __call__(self, server: int, program: str, args: Sequence[str], *,
                 any_status: bool = False) -> str | None:
        if "list-panes" in args:
            return "/dev/pts/9\t$9\t1\t1\n" + "".join(
                f"/dev/pts/3\t{session}\t{current}\t1\n" for session, current in self.rows)
        if "list-clients" in args:
            return "".join(f"{pid}\t{session}\n" for pid, session in self.grouped_clients)
        return super().__call__(server, program, args, any_status=any_status)


def test_a_person_in_a_grouped_session_passes(tmp_path: Path) -> None:
    """The person's client is attached to the second session of a group (``tmux new -t
    main``), which shows the pane; the first session, listed first, shows another window
    of the group. (Round 26, tui26: refused, as only the first listing was read.)"""
    verdict = check(tmp_path, _Grouped([("$0", "0"), ("$2", "1")], [(700, "$2")]))
    assert verdict.ok, verdict


def test_a_grouped_session_no_client_looks_at_is_refused(tmp_path: Path) -> None:
    """An agent's detached session grouped with the person's, showing the TUI's window
    while the person's own session shows another: no client sees the pane."""
    verdict = check(tmp_path, _Grouped([("$0", "0"), ("$2", "1")], [(700, "$0")]))
    assert not verdict.ok and "no client is attached" in verdict.reason, verdict
    hidden = check(tmp_path / "2", _Grouped([("$0", "0"), ("$2", "0")], [(700, "$0")]))
    assert not hidden.ok and "not the one shown" in hidden.reason, hidden


def test_every_client_of_every_session_holding_the_pane_is_judged(tmp_path: Path) -> None:
    """A client attached to another session of the group can switch to the pane's window
    at any moment and type into it: one attached from an agent is refused, even while the
    session the person looks at is the one listed first. (Round 26, tui26: passed, as
    only the first listed session's clients were judged.)"""
    verdict = check(tmp_path, _Grouped([("$0", "1"), ("$2", "0")], [(700, "$0"), (820, "$2")]))
    assert not verdict.ok and "pid 820" in verdict.reason, verdict


def _tty_nr(path: str) -> int:
    dev = os.stat(path).st_rdev
    major, minor = os.major(dev), os.minor(dev)
    return (minor & 0xFF) | (major << 8) | ((minor & ~0xFF) << 12)


@pytest.mark.skipif(shutil.which("tmux") is None or not Path("/proc/self/stat").exists(),
                    reason="needs tmux and /proc")
def test_a_real_grouped_session_shows_the_pane_to_its_client(tmp_path: Path) -> None:
    """The real thing: a window of session ``main`` shown by the grouped session ``work``
    (``tmux new -t main``), to which a client is attached (from a terminal of another
    tmux server), is seen by that client; a window only ``main`` shows, with no client
    attached to ``main``, is seen by no one."""
    from engine.effects.multiplexer import ask_server, multiplexer_refusal
    from engine.effects.operator import OperatorCheck, ProcFS

    inner, outer = str(tmp_path / "inner"), str(tmp_path / "outer")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "TERM": "xterm"}

    def tmux(socket: str, *args: str) -> str:
        return subprocess.run(["tmux", "-S", socket, *args], env=env, check=True, timeout=30,
                              capture_output=True, text=True).stdout

    tmux(inner, "new-session", "-d", "-s", "main", "-x", "80", "-y", "24", "sleep 60")
    try:
        tmux(inner, "new-window", "-d", "-t", "main:1", "sleep 60")
        tmux(inner, "new-session", "-d", "-t", "main", "-s", "work")
        tmux(inner, "select-window", "-t", "work:1")
        tmux(outer, "new-session", "-d", "-x", "80", "-y", "24", f"tmux -S {inner} attach -t work")
        deadline = time.monotonic() + 30
        while not (clients := tmux(inner, "list-clients", "-F", "#{client_pid}").split()):
            assert time.monotonic() < deadline, "the client never attached"
            time.sleep(0.05)
        server = int(tmux(inner, "display-message", "-p", "#{pid}").strip())
        shown = tmux(inner, "display-message", "-p", "-t", "work:1", "#{pane_tty}").strip()
        unseen = tmux(inner, "display-message", "-p", "-t", "main:0", "#{pane_tty}").strip()
        chain = [ProcFS().get(server)]
        assert chain[0] is not None
        judged: list[int] = []

        def judge(pid: int) -> OperatorCheck:
            judged.append(pid)
            return OperatorCheck(True)

        def refusal(tty: str) -> str | None:
            me = ProcFS().get(os.getpid())
            assert me is not None
            from dataclasses import replace

            return multiplexer_refusal(replace(me, tty=_tty_nr(tty)), chain,
                                       {"TMUX": f"{inner},{server},0"}, ask_server, judge)

        assert refusal(shown) is None
        assert judged == [int(clients[0])]
        reason = refusal(unseen)
        assert reason is not None and "no client is attached" in reason, reason
    finally:
        for socket in (outer, inner):
            subprocess.run(["tmux", "-S", socket, "kill-server"], env=env, timeout=30,
                           check=False, capture_output=True)
