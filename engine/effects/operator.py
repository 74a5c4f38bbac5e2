"""Is a person operating this program? (SPEC §4.5)

A program that gives consent — the TUI approving a hold, ``arrowgate import``
drawing arrows — must decide that a person operates it. It refuses when:

- standard input is not a terminal (a pipe, a script, a test harness), or
  the process has no controlling terminal;
- its own environment carries a coding agent's marker (``CLAUDECODE``,
  ``CODEX_SANDBOX``, ``GEMINI_CLI``, ...), or arrowgate's own
  ``ARROWGATE_DRIVEN``, which its drivers set for every process they start,
  so a card typing into a terminal cannot start a TUI there and approve;
- any ancestor, or the leader of its session, is a coding agent (by its
  command line), carries such a marker in *its* environment (read from
  ``/proc/PID/environ`` where readable: ``env -u CLAUDECODE`` changes only
  what the descendants inherit, not what the agent's own process shows), is
  a program that fakes a terminal for another (``script``, ``expect``,
  ``unbuffer``, ``socat``, ...: the usual way to pass the terminal test from
  inside an agent), or is a process arrowgate's drivers started;
- its session or its controlling terminal belongs to a process arrowgate's
  drivers started (drivers record each process they start — pid, start
  time, session and terminal — in `DrivenRegistry`, which lives at a fixed
  place in the user's home that no environment variable moves);
- it runs in a tmux or GNU screen window no person is looking at: a session
  with no client attached, a window or pane its session does not show, a client
  attached from an agent (`engine.effects.multiplexer`: the multiplexer's server
  is a parent that an agent can ask to start a command and type into it);
- it cannot tell: the process table cannot be read.

There is deliberately no switch to turn the check off: anything an agent can
set, an agent can set. The check stops an agent from approving on its own by
running the approving program; it is not a wall against a program that
already runs as the same user (see the README, "The operator check").
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from .multiplexer import Ask, ask_server, multiplexer_refusal

__all__ = [
    "AGENT_ENV_MARKERS",
    "AGENT_PROGRAMS",
    "PTY_PROGRAMS",
    "DrivenRegistry",
    "OperatorCheck",
    "ProcFS",
    "ProcInfo",
    "ProcessTable",
    "default_registry",
    "operator_check",
    "peer_check",
]

#: Environment variables that coding agents set for the commands they run.
AGENT_ENV_MARKERS = (
    "ARROWGATE_DRIVEN", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED", "CODEX_THREAD_ID", "GEMINI_CLI", "CURSOR_AGENT",
    "AIDER_CHAT", "OPENCODE", "GOOSE_TERMINAL", "AMP_THREAD_ID", "CLINE_ACTIVE",
    "AGENT_SESSION_ID",
)
#: Program names of coding agents, matched against each ancestor's command line.
AGENT_PROGRAMS = frozenset({
    "claude", "claude-code", "codex", "gemini", "aider", "cursor-agent", "goose", "opencode",
    "amp", "cline", "copilot", "continue", "openhands", "devin", "q", "kiro",
})
#: Programs that run another program on a pseudo-terminal they hold: with one
#: of them as an ancestor, "standard input is a terminal" says nothing about a
#: person (``setsid -f script -qec "arrowgate import …"``).
PTY_PROGRAMS = frozenset({
    "script", "expect", "unbuffer", "empty", "socat", "sshpass", "pexpect", "ptyrun",
})
# Words in an interpreter's command line that give a pty-faking one away
# (python -c "import pty; pty.spawn(...)", node-pty, ...).
_PTY_WORDS = ("pty.spawn", "pexpect", "node-pty", "ptyprocess", "openpty", "forkpty")


@dataclass(frozen=True, slots=True)
class OperatorCheck:
    """The verdict, with the reason a person reads when it refuses."""

    ok: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ProcInfo:
    """What the check reads about one process."""

    pid: int
    ppid: int
    sid: int  #: session id (the pid of the session's leader)
    tty: int  #: controlling terminal as /proc's tty_nr; 0 for none
    start: int  #: start time (clock ticks since boot): with pid, names one process
    argv: tuple[str, ...]
    environ: Mapping[str, str] | None = None  #: None where it cannot be read


class ProcessTable(Protocol):
    """Reads processes; `ProcFS` for the real one, tests feed their own."""

    def self_pid(self) -> int:
        """This process's pid."""
        ...

    def get(self, pid: int) -> ProcInfo | None:
        """The process, or None when it cannot be read."""
        ...


class ProcFS:
    """The process table of a Linux ``/proc`` (or a folder laid out the same way)."""

    def __init__(self, root: str | Path = "/proc", *, self_pid: int | None = None) -> None:
        self.root = Path(root)
        self._self = os.getpid() if self_pid is None else self_pid

    def available(self) -> bool:
        """True when the folder exists."""
        return self.root.is_dir()

    def self_pid(self) -> int:
        """This process's pid."""
        return self._self

    def get(self, pid: int) -> ProcInfo | None:
        """Read ``stat``, ``cmdline`` and (where readable) ``environ`` of ``pid``."""
        base = self.root / str(pid)
        try:
            stat = (base / "stat").read_text(errors="replace")
            raw = (base / "cmdline").read_bytes()
            # The fields after the closing parenthesis of the name (which
            # may itself hold spaces and parentheses): state, ppid, pgrp,
            # session, tty_nr, ...; field 22 of the line is the start time.
            rest = stat[stat.rfind(")") + 2:].split()
            ppid, sid, tty, start = int(rest[1]), int(rest[3]), int(rest[4]), int(rest[19])
        except (OSError, ValueError, IndexError):
            return None
        argv = tuple(a for a in raw.decode("utf-8", "replace").split("\0") if a)
        if not argv:  # a kernel thread or a process that hid its arguments
            argv = (stat[stat.find("(") + 1:stat.rfind(")")],)
        environ: dict[str, str] | None
        try:
            env_raw = (base / "environ").read_bytes()
            environ = {}
            for item in env_raw.decode("utf-8", "replace").split("\0"):
                name, sep, value = item.partition("=")
                if sep:
                    environ[name] = value
        except OSError:
            environ = None  # another user's process: its command line still counts
        return ProcInfo(pid, ppid, sid, tty, start, argv, environ)


class _PsTable:
    """Where there is no /proc (macOS): parent and command line from ``ps``."""

    def self_pid(self) -> int:
        return os.getpid()

    def get(self, pid: int) -> ProcInfo | None:
        try:
            line = subprocess.run(["ps", "-o", "ppid=,sess=,command=", "-p", str(pid)],
                                  capture_output=True, text=True, timeout=5,
                                  check=True).stdout.strip()
            ppid_text, sid_text, command = (line.split(None, 2) + ["", ""])[:3]
            return ProcInfo(pid, int(ppid_text), int(sid_text or 0), 0, 0,
                            tuple(command.split()))
        except (OSError, ValueError, subprocess.SubprocessError):
            return None


def _default_table() -> ProcessTable:
    proc = ProcFS()
    return proc if proc.available() else _PsTable()


# --------------------------------------------------------------- driven processes
def _tty_pair(tty_nr: int) -> tuple[int, int]:
    """(major, minor) of a /proc tty_nr."""
    return (tty_nr >> 8) & 0xFFF, (tty_nr & 0xFF) | ((tty_nr >> 12) & 0xFFF00)


def tty_nr_of(fd: int) -> int:
    """The /proc tty_nr of the terminal device open on ``fd``."""
    dev = os.fstat(fd).st_rdev
    major, minor = os.major(dev), os.minor(dev)
    return (minor & 0xFF) | (major << 8) | ((minor & ~0xFF) << 12)


def default_registry_dir() -> Path:
    """``~/.local/state/arrowgate/driven`` of the user in the password database.

    Not ``$HOME`` nor any other environment variable: an agent could point
    those somewhere empty for the check while the drivers record elsewhere.
    """
    try:
        home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        home = Path.home()
    return home / ".local" / "state" / "arrowgate" / "driven"


@dataclass(frozen=True, slots=True)
class DrivenRecord:
    """A process an arrowgate driver started."""

    pid: int
    start: int
    sid: int | None
    tty: int | None
    node: str


@dataclass
class DrivenRegistry:
    """The processes arrowgate's drivers started, one small file each, by pid.

    Drivers `mark` what they start and `unmark` it when it ends; a record
    whose process is gone (or whose pid was reused: the start time differs)
    is ignored.
    """

    folder: Path = field(default_factory=default_registry_dir)

    def mark(self, pid: int, node: str, *, sid: int | None = None, tty: int | None = None,
             table: ProcessTable | None = None) -> None:
        """Record a started process; best effort (a registry that cannot be written
        leaves the environment marker)."""
        info = (table or _default_table()).get(pid)
        record = {"pid": pid, "start": info.start if info else 0, "sid": sid, "tty": tty,
                  "node": node}
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = self.folder / f".{pid}.tmp"
            tmp.write_text(json.dumps(record))
            os.replace(tmp, self.folder / str(pid))
        except OSError:
            pass

    def unmark(self, pid: int) -> None:
        """Forget a process that ended."""
        try:
            (self.folder / str(pid)).unlink()
        except OSError:
            pass

    def records(self) -> list[DrivenRecord]:
        """Every record that parses (a damaged one is skipped, never trusted as a person)."""
        out: list[DrivenRecord] = []
        try:
            names = sorted(p for p in os.listdir(self.folder) if p.isdigit())
        except OSError:
            return out
        for name in names:
            try:
                data = json.loads((self.folder / name).read_text())
                out.append(DrivenRecord(int(data["pid"]), int(data.get("start") or 0),
                                        _opt_int(data.get("sid")), _opt_int(data.get("tty")),
                                        str(data.get("node", ""))))
            except (OSError, ValueError, TypeError, KeyError, AttributeError):
                continue
        return out


def _opt_int(value: object) -> int | None:
    return value if type(value) is int else None


def default_registry() -> DrivenRegistry:
    """The registry at its fixed place (`default_registry_dir`)."""
    return DrivenRegistry()


# --------------------------------------------------------------------- the check
def _chain(table: ProcessTable, pid: int) -> list[ProcInfo] | None:
    out: list[ProcInfo] = []
    seen: set[int] = set()
    while pid > 1 and pid not in seen and len(out) < 4096:
        seen.add(pid)
        info = table.get(pid)
        if info is None:
            return None
        out.append(info)
        pid = info.ppid
    return out


def _program(word: str) -> str:
    name = os.path.basename(word).lower()
    for suffix in (".js", ".mjs", ".cjs", ".py", ".exe"):
        name = name.removesuffix(suffix)
    return name


def _agent_in(argv: tuple[str, ...] | list[str]) -> str | None:
    # node scripts and Python entry points: look at the first few words.
    for word in argv[:3]:
        name = _program(word)
        if name in AGENT_PROGRAMS:
            return name
    return None


def _pty_faker_in(argv: tuple[str, ...]) -> str | None:
    for word in argv[:2]:
        name = _program(word)
        if name in PTY_PROGRAMS:
            return name
    text = " ".join(argv)[:4096]
    return next((w for w in _PTY_WORDS if w in text), None)


def _markers(environ: Mapping[str, str] | None) -> list[str]:
    if environ is None:
        return []
    return [name for name in AGENT_ENV_MARKERS if environ.get(name)]


def _describe(info: ProcInfo) -> str:
    return f"{' '.join(info.argv)[:80]} (pid {info.pid})"


def operator_check(*, isatty: Callable[[], bool] | None = None,
                   environ: Mapping[str, str] | None = None,
                   table: ProcessTable | None = None,
                   registry: DrivenRegistry | None = None,
                   require_terminal: bool = True,
                   include_self: bool = False,
                   ask: Ask = ask_server,
                   terminal: Callable[[], str | None] | None = None,
                   _depth: int = 0) -> OperatorCheck:
    """Decide whether a person operates this process (see the module docstring).

    The first four arguments and ``ask`` (how a tmux or screen server is asked
    what it shows) replace the real terminal, environment, process table,
    registry of driven processes and multiplexers, for tests. ``require_terminal``
    False judges a process that is not reached through a keyboard (a service's
    client, such as a canvas app's window): its tree must hold no agent, but it
    need not have a terminal. ``include_self`` judges the process's own command
    line as well as its ancestors' (for a peer, which may be an agent itself).
    ``terminal`` gives the path of the process's terminal where the process table
    has no terminal numbers (``ps``): by default this process's own standard input's,
    and none for another process.
    """
    isatty = isatty or (lambda: os.isatty(0))
    environ = os.environ if environ is None else environ
    table = table or _default_table()
    registry = registry or default_registry()
    try:
        tty = isatty()
    except (OSError, ValueError):
        tty = False
    if not tty and require_terminal:
        return OperatorCheck(False, "standard input is not a terminal, so no person is "
                                    "known to be at the keyboard")
    markers = _markers(environ)
    if markers:
        return OperatorCheck(False, f"running inside a coding agent or an arrowgate-driven "
                                    f"terminal (environment: {', '.join(markers)})")
    me = table.get(table.self_pid())
    chain = _chain(table, me.ppid) if me is not None else None
    if me is None or chain is None:
        return OperatorCheck(False, "cannot read the process tree, so cannot rule out an agent")
    if require_terminal and isinstance(table, ProcFS) and me.tty == 0:
        return OperatorCheck(False, "this process has no controlling terminal, so no person "
                                    "is known to be at the keyboard")
    # The session leader (the shell a terminal started, or what called
    # setsid) is looked at like an ancestor, whether or not it is one.
    suspects = [me, *chain] if include_self else list(chain)
    if me.sid > 1 and me.sid != me.pid and all(p.pid != me.sid for p in chain):
        leader = table.get(me.sid)
        if leader is not None:
            suspects.append(leader)
    # Only records whose process still runs (same pid, same start time): a
    # stale record must not make a reused pid, session or terminal suspect.
    driven = {}
    for r in registry.records():
        alive = table.get(r.pid)
        if alive is not None and alive.start == r.start:
            driven[(r.pid, r.start)] = r
    driven_sessions = {r.sid: r for r in driven.values() if r.sid}
    driven_ttys = {_tty_pair(r.tty): r for r in driven.values() if r.tty}
    if me.sid in driven_sessions:
        return OperatorCheck(False, f"running in the session of a process arrowgate drives "
                                    f"(node {driven_sessions[me.sid].node})")
    if me.tty and _tty_pair(me.tty) in driven_ttys:
        return OperatorCheck(False, f"running on the terminal of a process arrowgate drives "
                                    f"(node {driven_ttys[_tty_pair(me.tty)].node})")
    for info in suspects:
        role = "the leader of this session" if info.pid == me.sid else \
            "among this program's parent processes"
        # A driven process first: its reason names the node (a driver's
        # supervisor carries ARROWGATE_DRIVEN too, which names none).
        record = driven.get((info.pid, info.start)) or driven_sessions.get(info.sid)
        if record is not None:
            return OperatorCheck(False, f"a process arrowgate drives (node {record.node}) is "
                                        f"{role}: {_describe(info)}")
        agent = _agent_in(info.argv)
        if agent:
            return OperatorCheck(False, f"a coding agent ({agent}) is {role}: "
                                        f"{_describe(info)}")
        found = _markers(info.environ)
        if found:
            return OperatorCheck(False, f"a process {role} runs inside a coding agent or an "
                                        f"arrowgate-driven terminal (its environment: "
                                        f"{', '.join(found)}): {_describe(info)}")
        faker = _pty_faker_in(info.argv)
        if faker:
            return OperatorCheck(False, f"a program that fakes a terminal ({faker}) is {role}, "
                                        f"so the terminal says nothing about a person: "
                                        f"{_describe(info)}")
    if require_terminal:
        if terminal is None:
            terminal = _own_terminal if table.self_pid() == os.getpid() else _no_terminal
        refusal = _multiplexed(me, chain, environ, table, registry, ask, _depth,
                               terminal() if me.tty == 0 else None)
        if refusal:
            return OperatorCheck(False, refusal)
    return OperatorCheck(True)


#: Multiplexers within multiplexers judged before the check gives up (refusing).
_MAX_DEPTH = 3


def _own_terminal() -> str | None:
    try:
        return os.ttyname(0)
    except OSError:
        return None


def _no_terminal() -> str | None:
    return None


def _multiplexed(me: ProcInfo, chain: list[ProcInfo], environ: Mapping[str, str],
                 table: ProcessTable, registry: DrivenRegistry, ask: Ask,
                 depth: int, terminal: str | None) -> str | None:
    """`multiplexer_refusal`, judging each attached client as a peer of its own."""

    def judge(pid: int) -> OperatorCheck:
        if depth + 1 >= _MAX_DEPTH:
            return OperatorCheck(False, "multiplexers nested too deep to judge")
        client = table.get(pid)
        # Where /proc is read, what it cannot show is refused; where ``ps`` is the table
        # (no environments, no terminals), the client is judged as every ancestor is
        # there: by the command lines of its parents.
        procfs = isinstance(table.base if isinstance(table, _Seen) else table, ProcFS)
        if client is None or (procfs and client.environ is None):
            return OperatorCheck(False, f"cannot read process {pid}, so cannot rule out an "
                                        "agent")
        if procfs and client.tty == 0:
            return OperatorCheck(False, f"process {pid} has no controlling terminal")
        return operator_check(isatty=lambda: True, environ=client.environ or {},
                              table=_Seen(table, pid), registry=registry, ask=ask,
                              terminal=_no_terminal, _depth=depth + 1)

    return multiplexer_refusal(me, chain, environ, ask, judge, terminal=terminal)


class _Seen:
    """A process table that calls another process its own (an attached client's view)."""

    def __init__(self, table: ProcessTable, pid: int) -> None:
        #: The table read (a `ProcFS` or ``ps``).
        self.base: ProcessTable = table.base if isinstance(table, _Seen) else table
        self._pid = pid

    def self_pid(self) -> int:
        return self._pid

    def get(self, pid: int) -> ProcInfo | None:
        return self.base.get(pid)


def peer_check(pid: int, *, table: ProcessTable | None = None,
               registry: DrivenRegistry | None = None,
               require_terminal: bool = True) -> OperatorCheck:
    """The operator check for another process, such as a service's client seen through
    its socket's peer credentials (SPEC §10.1): its own environment, terminal, session
    and ancestors are judged as `operator_check` judges this process's.

    Fails closed: a process whose environment cannot be read is refused. With
    ``require_terminal`` False (a GUI app's client), no terminal is needed, but
    the peer's own command line is judged too.
    """
    table = table or ProcFS(self_pid=pid)
    if table.self_pid() != pid:
        raise ValueError("the table must name the peer as its own process")
    info = table.get(pid)
    if info is None or info.environ is None:
        return OperatorCheck(False, f"cannot read process {pid}, so cannot rule out an agent")
    if require_terminal and info.tty == 0:
        return OperatorCheck(False, f"process {pid} has no controlling terminal, so no person "
                                    "is known to be at its keyboard")
    return operator_check(isatty=lambda: True, environ=info.environ, table=table,
                          registry=registry, require_terminal=require_terminal,
                          include_self=not require_terminal)
