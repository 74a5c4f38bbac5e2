"""Is a person looking at the tmux or screen window this program runs in? (SPEC §4.5)

A terminal multiplexer's server is a long-running program that an agent can
ask to start a command: ``tmux new-session -d 'arrowgate tui'`` runs the TUI on a
real pseudo-terminal whose parent is the tmux server, not the agent, and
``tmux send-keys`` then types into it. The walk up the parents meets no agent
(the server was started by the person long ago, or by the agent with a clean
environment, and is a child of init), so the operator check asks the
multiplexer itself what a person would see:

- **tmux**: the server this program runs under (its nearest ancestor named
  ``tmux``) must be the one ``$TMUX`` names (its socket answers with the
  ancestor's pid); this program's terminal must be one of its panes, the active
  pane of its window, and that window the current one of a session at least one
  client is attached to; and every client attached to a session that holds the
  window (grouped sessions, ``tmux new -t main``, share every window) must itself
  pass the operator check (a client started by an agent, under ``script`` or with
  an agent among its parents, lets that agent type into the session).
- **GNU screen**: the session this program runs under must be the one ``$STY``
  names (its pid is the ancestor's) and be attached (``screen -ls``). Screen does
  not say which processes are its clients, so they are not judged.

When it cannot tell (``$TMUX``/``$STY`` unset, the server does not answer) it
refuses, as the rest of the check does. A person who runs the TUI in their own
tmux and types into it passes: their window is shown and their client is theirs.
The multiplexer is asked through the server's own executable
(``/proc/PID/exe``), not whatever ``tmux`` comes first on ``$PATH``.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

__all__ = ["Ask", "Process", "Verdict", "ask_server", "multiplexer_refusal"]


class Process(Protocol):
    """What is read of a process (`engine.effects.operator.ProcInfo` is one)."""

    @property
    def pid(self) -> int: ...
    @property
    def tty(self) -> int: ...  # /proc's tty_nr; 0 for none
    @property
    def argv(self) -> tuple[str, ...]: ...


class Verdict(Protocol):
    """The operator check's answer (`engine.effects.operator.OperatorCheck` is one)."""

    @property
    def ok(self) -> bool: ...
    @property
    def reason(self) -> str: ...


class Ask(Protocol):
    """Runs the multiplexer whose server is ``server`` with ``args``; its standard output,
    or None when it could not be run or (``any_status`` False) it failed."""

    def __call__(self, server: int, program: str, args: Sequence[str], *,
                 any_status: bool = False) -> str | None: ...


#: Seconds a multiplexer has to answer.
ASK_TIMEOUT_S = 5.0


def ask_server(server: int, program: str, args: Sequence[str], *,
               any_status: bool = False) -> str | None:
    """`Ask` for real: the server's own executable where ``/proc`` shows it, else
    ``program`` from ``$PATH``."""
    exe = f"/proc/{server}/exe"
    command = [exe if os.path.exists(exe) else program, *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=ASK_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if any_status or done.returncode == 0 else None


def _program(argv: tuple[str, ...]) -> str:
    word = argv[0] if argv else ""
    # tmux's server names itself "tmux: server"; screen's is "SCREEN".
    return os.path.basename(word.split(":", 1)[0].split(None, 1)[0] if word else "").lower()


def multiplexer_refusal(me: Process, chain: Sequence[Process], environ: Mapping[str, str],
                        ask: Ask, judge: Callable[[int], Verdict], *,
                        terminal: str | None = None) -> str | None:
    """Why the multiplexer this process runs under shows it to no person, or None
    (none among ``chain``, its parents, or a person looks at it; see above).

    Args:
        me: this process (its terminal is the pane's).
        chain: its parents, nearest first.
        environ: its environment (``TMUX``, ``STY``).
        ask: runs the multiplexer (`ask_server`; tests feed their own).
        judge: the operator check of another process (an attached client), by pid.
        terminal: the path of this process's terminal, where ``me`` has no terminal
            number (a process table read from ``ps``).
    """
    for info in chain:
        name = _program(info.argv)
        if name == "tmux":
            return _tmux(me, info, environ, ask, judge, terminal)
        if name == "screen":
            return _screen(info, environ, ask)
    return None


def _tmux(me: Process, server: Process, environ: Mapping[str, str], ask: Ask,
          judge: Callable[[int], Verdict], terminal: str | None) -> str | None:
    where = f"tmux (server pid {server.pid})"
    socket = environ.get("TMUX", "").split(",", 1)[0]
    if not socket:
        return f"it runs inside {where}, but TMUX, which names its socket, is not set"

    def query(*args: str) -> list[list[str]] | None:
        out = ask(server.pid, "tmux", ["-S", socket, *args])
        return None if out is None else [line.split("\t") for line in out.splitlines()]

    pid = query("display-message", "-p", "#{pid}")
    if not pid or pid[0] != [str(server.pid)]:
        return f"it runs inside {where}, but the socket TMUX names ({socket}) is not that server's"
    panes = query("list-panes", "-a", "-F",
                  "#{pane_tty}\t#{session_id}\t#{window_active}\t#{pane_active}")
    # One line for each session that holds the pane's window: grouped sessions (``tmux
    # new -t main``) share every window, and ``link-window`` puts one in another session.
    mine = [p for p in panes or () if len(p) == 4 and (
        _same_terminal(p[0], me.tty) if me.tty else (terminal is not None and p[0] == terminal))]
    if not mine:
        return f"its terminal is not one of the panes of {where}"
    # The active pane is the window's (the same in every session); the current window
    # is each session's own.
    showing = {session for _tty, session, window_active, _pane in mine if window_active == "1"}
    if not showing or any(pane_active != "1" for *_rest, pane_active in mine):
        return (f"its tmux pane is not the one shown in its session ({where}): "
                "a person types into the pane they see")
    holding = {session for _tty, session, _window, _pane in mine}
    clients = query("list-clients", "-F", "#{client_pid}\t#{session_id}")
    if clients is None:
        return f"{where} did not say which clients are attached"
    # Every client of every session holding the pane: one attached to a session that
    # shows another window now can switch to the pane's at any moment and type there.
    # ASCII digits only: ``"²".isdigit()`` is true, and `int` refuses it.
    reach = [(c[0], c[1]) for c in clients if len(c) == 2 and c[1] in holding
             and c[0].isascii() and c[0].isdigit()]
    if not any(session in showing for _pid, session in reach):
        return (f"no client is attached to a tmux session that shows its pane ({where}): "
                "no person is looking at it")
    attached = list(dict.fromkeys(pid for pid, _session in reach))
    for client in attached:
        verdict = judge(int(client))
        if not verdict.ok:
            return f"a client attached to its tmux session (pid {client}) is refused: " \
                   f"{verdict.reason}"
    return None


def _screen(server: Process, environ: Mapping[str, str], ask: Ask) -> str | None:
    where = f"GNU screen (pid {server.pid})"
    sty = environ.get("STY", "")
    if sty.split(".", 1)[0] != str(server.pid):
        return f"it runs inside {where}, but STY does not name that session"
    listing = ask(server.pid, "screen", ["-ls", sty], any_status=True)
    if listing is None:
        return f"{where} did not say whether its session is attached"
    for line in listing.splitlines():
        if line.strip().startswith(sty + "\t") or line.strip().split("\t")[0] == sty:
            if "(Attached)" in line:
                return None
            break
    return f"its screen session ({where}) is not attached: no person is looking at it"


_PTS = re.compile(r"/dev/pts/(\d+)\Z")


def _same_terminal(path: str, tty_nr: int) -> bool:
    """Whether the terminal device ``path`` is the one /proc calls ``tty_nr``."""
    if not tty_nr:
        return False
    major, minor = (tty_nr >> 8) & 0xFFF, (tty_nr & 0xFF) | ((tty_nr >> 12) & 0xFFF00)
    found = _PTS.match(path)
    if found:  # /dev/pts/N is device 136:N (devpts takes its minors from one major)
        return (major, minor) == (136, int(found.group(1)))
    try:
        dev = os.stat(path).st_rdev
    except OSError:
        return False
    return (os.major(dev), os.minor(dev)) == (major, minor)
