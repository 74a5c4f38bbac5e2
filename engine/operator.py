"""Is a person operating this program? (SPEC §4.5)

A program that gives consent — the TUI approving a hold, ``arrowgate import``
drawing arrows — must decide that a person operates it. It refuses when:

- standard input is not a terminal (a pipe, a script, a test harness);
- the environment carries a coding agent's marker (``CLAUDECODE``,
  ``CODEX_SANDBOX``, ``GEMINI_CLI``, ...), or arrowgate's own
  ``ARROWGATE_DRIVEN``, which its drivers set for every process they start,
  so a card typing into a terminal cannot start a TUI there and approve;
- a coding agent's process is among its ancestors;
- it cannot tell: the process tree cannot be read.

There is deliberately no switch to turn the check off: anything an agent can
set, an agent can set.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["AGENT_ENV_MARKERS", "AGENT_PROGRAMS", "OperatorCheck", "ancestors", "operator_check"]

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


@dataclass(frozen=True, slots=True)
class OperatorCheck:
    """The verdict, with the reason a person reads when it refuses."""

    ok: bool
    reason: str = ""


def ancestors(pid: int | None = None) -> list[list[str]] | None:
    """The command lines of the process's ancestors, nearest first; None if unreadable."""
    pid = os.getppid() if pid is None else pid
    out: list[list[str]] = []
    seen: set[int] = set()
    proc = Path("/proc")
    while pid > 1 and pid not in seen:
        seen.add(pid)
        if proc.is_dir():
            try:
                raw = (proc / str(pid) / "cmdline").read_bytes()
                stat = (proc / str(pid) / "stat").read_text()
            except OSError:
                return None
            argv = [a for a in raw.decode("utf-8", "replace").split("\0") if a]
            if not argv:  # a kernel thread or a process that hid its arguments
                argv = [stat[stat.find("(") + 1:stat.rfind(")")]]
            # The field after the closing parenthesis of the name: state, then ppid.
            parent = int(stat[stat.rfind(")") + 2:].split()[1])
        else:
            try:
                line = subprocess.run(["ps", "-o", "ppid=,command=", "-p", str(pid)],
                                      capture_output=True, text=True, timeout=5,
                                      check=True).stdout.strip()
                ppid_text, _, command = line.partition(" ")
                parent, argv = int(ppid_text), command.split()
            except (OSError, ValueError, subprocess.SubprocessError):
                return None
        out.append(argv)
        pid = parent
    return out


def _agent_in(argv: list[str]) -> str | None:
    # node scripts and Python entry points: look at the first few words.
    for word in argv[:3]:
        name = os.path.basename(word).lower()
        for suffix in (".js", ".mjs", ".py", ".exe"):
            name = name.removesuffix(suffix)
        if name in AGENT_PROGRAMS:
            return name
    return None


def operator_check(*, isatty: Callable[[], bool] | None = None,
                   environ: Mapping[str, str] | None = None,
                   tree: Callable[[], Iterable[list[str]] | None] | None = None) -> OperatorCheck:
    """Decide whether a person operates this process (see the module docstring).

    The arguments replace the real terminal, environment and process tree,
    for tests.
    """
    isatty = isatty or (lambda: os.isatty(0))
    environ = os.environ if environ is None else environ
    tree = tree or ancestors
    try:
        tty = isatty()
    except (OSError, ValueError):
        tty = False
    if not tty:
        return OperatorCheck(False, "standard input is not a terminal, so no person is "
                                    "known to be at the keyboard")
    markers = [name for name in AGENT_ENV_MARKERS if environ.get(name)]
    if markers:
        return OperatorCheck(False, f"running inside a coding agent or an arrowgate-driven "
                                    f"terminal (environment: {', '.join(markers)})")
    lines = tree()
    if lines is None:
        return OperatorCheck(False, "cannot read the process tree, so cannot rule out an agent")
    for argv in lines:
        agent = _agent_in(argv)
        if agent:
            return OperatorCheck(False, f"a coding agent ({agent}) is among this program's "
                                        f"parent processes: {' '.join(argv)[:80]}")
    return OperatorCheck(True)
