"""The operator check: a person at a terminal, no agent in sight (SPEC §4.5, issue 15 #9).

Most tests feed a fake ``/proc`` (a folder laid out like the real one) to the
check's process-table reader; one runs the real escape under ``script``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engine.effects.operator import DrivenRegistry, ProcFS, operator_check, peer_check

PTS = 136 << 8  # tty_nr of /dev/pts/0; /dev/pts/N is PTS + N
ROOT = Path(__file__).resolve().parents[2]


def fake_proc(folder: Path, procs: list[dict[str, Any]]) -> Path:
    """Write ``stat``, ``cmdline`` and ``environ`` for each process, as /proc shows them.

    Each process: pid, ppid, sid, tty (tty_nr, 0 for none), argv, env (None:
    unreadable, as another user's process), start (default 100 + pid).
    """
    for p in procs:
        base = folder / str(p["pid"])
        base.mkdir(parents=True)
        comm = os.path.basename(p["argv"][0])[:15]
        start = p.get("start", 100 + p["pid"])
        (base / "stat").write_text(
            f"{p['pid']} ({comm}) S {p['ppid']} {p['sid']} {p['sid']} {p['tty']} -1 4194304 "
            f"0 0 0 0 0 0 0 0 20 0 1 0 {start} 0 0\n")
        (base / "cmdline").write_bytes(b"\0".join(a.encode() for a in p["argv"]) + b"\0")
        if p.get("env", {}) is not None:
            env = p.get("env", {"TERM": "xterm", "HOME": "/home/alice"})
            (base / "environ").write_bytes(b"\0".join(f"{k}={v}".encode()
                                                      for k, v in env.items()) + b"\0")
    return folder


def check(tmp_path: Path, procs: list[dict[str, Any]], *, me: int,
          registry: DrivenRegistry | None = None, environ: dict[str, str] | None = None
          ) -> Any:
    table = ProcFS(fake_proc(tmp_path / "proc", procs), self_pid=me)
    return operator_check(isatty=lambda: True, environ=environ or {"TERM": "xterm"},
                          table=table, registry=registry or DrivenRegistry(tmp_path / "none"))


INIT = {"pid": 1, "ppid": 0, "sid": 1, "tty": 0, "argv": ["/sbin/init"], "env": None}
SSHD = {"pid": 300, "ppid": 1, "sid": 300, "tty": 0, "argv": ["sshd: alice@pts/0"],
        "env": None}
BASH = {"pid": 400, "ppid": 300, "sid": 400, "tty": PTS, "argv": ["-bash"]}


def test_a_person_at_a_terminal_passes(tmp_path: Path) -> None:
    """ssh, a login shell, arrowgate: nothing suspect, so it passes."""
    me = {"pid": 410, "ppid": 400, "sid": 400, "tty": PTS, "argv": ["arrowgate", "import"]}
    assert check(tmp_path, [INIT, SSHD, BASH, me], me=410).ok


def test_no_terminal_refuses(tmp_path: Path) -> None:
    """Piped or scripted standard input is not a person; nor is a process without a
    controlling terminal."""
    result = operator_check(isatty=lambda: False, environ={},
                            table=ProcFS(tmp_path, self_pid=1))
    assert not result.ok and "not a terminal" in result.reason
    me = {"pid": 410, "ppid": 400, "sid": 400, "tty": 0, "argv": ["arrowgate", "import"]}
    result = check(tmp_path, [INIT, SSHD, BASH, me], me=410)
    assert not result.ok and "no controlling terminal" in result.reason


def test_agent_environment_markers_refuse(tmp_path: Path) -> None:
    """CLAUDECODE and arrowgate's own driven-terminal marker in the inherited environment."""
    me = {"pid": 410, "ppid": 400, "sid": 400, "tty": PTS, "argv": ["arrowgate"]}
    for marker in ("CLAUDECODE", "CODEX_SANDBOX", "ARROWGATE_DRIVEN"):
        result = check(tmp_path / marker, [INIT, SSHD, BASH, me], me=410,
                       environ={marker: "1"})
        assert not result.ok and marker in result.reason


def test_an_agent_among_the_ancestors_refuses(tmp_path: Path) -> None:
    """A node-run agent two levels up is found by its script name."""
    agent = {"pid": 500, "ppid": 400, "sid": 400, "tty": PTS,
             "argv": ["node", "/usr/local/bin/claude", "--resume"]}
    shell = {"pid": 510, "ppid": 500, "sid": 400, "tty": PTS, "argv": ["bash", "-c", "x"]}
    me = {"pid": 520, "ppid": 510, "sid": 400, "tty": PTS, "argv": ["arrowgate"]}
    result = check(tmp_path, [INIT, SSHD, BASH, agent, shell, me], me=520)
    assert not result.ok and "claude" in result.reason and "pid 500" in result.reason


def test_env_u_does_not_hide_an_ancestors_own_environment(tmp_path: Path) -> None:
    """`env -u CLAUDECODE arrowgate …` from an agent renamed beyond recognition: the
    agent's own /proc/PID/environ still carries the marker."""
    agent = {"pid": 500, "ppid": 400, "sid": 400, "tty": PTS, "argv": ["node", "/opt/x/cli.js"],
             "env": {"CLAUDECODE": "1", "TERM": "xterm"}}
    me = {"pid": 520, "ppid": 500, "sid": 400, "tty": PTS, "argv": ["arrowgate"]}
    result = check(tmp_path, [INIT, SSHD, BASH, agent, me], me=520)
    assert not result.ok and "CLAUDECODE" in result.reason and "pid 500" in result.reason


def test_the_session_leader_is_looked_at_though_not_an_ancestor(tmp_path: Path) -> None:
    """An agent that leads the session (it called setsid) counts even when the chain of
    parents does not pass through it."""
    agent = {"pid": 600, "ppid": 1, "sid": 600, "tty": PTS + 4, "argv": ["codex"]}
    helper = {"pid": 610, "ppid": 1, "sid": 600, "tty": PTS + 4, "argv": ["bash"]}
    me = {"pid": 620, "ppid": 610, "sid": 600, "tty": PTS + 4, "argv": ["arrowgate"]}
    result = check(tmp_path, [INIT, agent, helper, me], me=620)
    assert not result.ok and "leader of this session" in result.reason and "codex" in \
        result.reason


def test_the_escape_through_setsid_and_script_is_refused(tmp_path: Path) -> None:
    """The attack: `env -u CLAUDECODE setsid -f script -qec "arrowgate import …"` from an
    agent. The environment is clean, the agent is no longer an ancestor (setsid -f
    orphaned the chain to init), the session and its terminal are new — but `script`
    holds the terminal, so the terminal says nothing about a person."""
    agent = {"pid": 500, "ppid": 400, "sid": 400, "tty": PTS, "argv": ["claude"],
             "env": {"CLAUDECODE": "1"}}
    script = {"pid": 700, "ppid": 1, "sid": 700, "tty": 0,
              "argv": ["script", "-qec", "arrowgate import board.canvas"]}
    shell = {"pid": 701, "ppid": 700, "sid": 701, "tty": PTS + 5,
             "argv": ["/bin/sh", "-c", "arrowgate import board.canvas"]}
    me = {"pid": 702, "ppid": 701, "sid": 701, "tty": PTS + 5,
          "argv": ["/usr/bin/python3", "/usr/bin/arrowgate", "import", "board.canvas"]}
    result = check(tmp_path, [INIT, SSHD, BASH, agent, script, shell, me], me=702)
    assert not result.ok and "fakes a terminal (script)" in result.reason


def test_processes_the_drivers_started_refuse_without_their_marker(tmp_path: Path) -> None:
    """`env -u ARROWGATE_DRIVEN arrowgate tui` typed into a driven terminal: the shell,
    its session and its terminal are recorded, so each alone refuses."""
    registry = DrivenRegistry(tmp_path / "driven")
    driven = {"pid": 800, "ppid": 900, "sid": 800, "tty": PTS + 7, "argv": ["bash", "-i"],
              "env": None}
    host = {"pid": 900, "ppid": 400, "sid": 400, "tty": PTS, "argv": ["arrowgate", "tui"]}
    me = {"pid": 810, "ppid": 800, "sid": 800, "tty": PTS + 7, "argv": ["arrowgate", "tui"]}
    procs = [INIT, SSHD, BASH, host, driven, me]
    table = ProcFS(fake_proc(tmp_path / "proc", procs), self_pid=810)
    registry.mark(800, "t1", sid=800, tty=PTS + 7, table=table)
    result = operator_check(isatty=lambda: True, environ={}, table=table, registry=registry)
    assert not result.ok and "node t1" in result.reason
    # A detached child in a new session on a new terminal, still under the shell:
    me2 = {"pid": 820, "ppid": 800, "sid": 820, "tty": PTS + 8, "argv": ["arrowgate"]}
    fake_proc(tmp_path / "proc", [me2])
    result = operator_check(isatty=lambda: True, environ={},
                            table=ProcFS(tmp_path / "proc", self_pid=820), registry=registry)
    assert not result.ok and "arrowgate drives (node t1)" in result.reason
    # Once the driver forgets it, the same tree is a person's again.
    registry.unmark(800)
    result = operator_check(isatty=lambda: True, environ={},
                            table=ProcFS(tmp_path / "proc", self_pid=820), registry=registry)
    assert result.ok, result.reason


def test_a_stale_record_does_not_refuse_a_reused_pid(tmp_path: Path) -> None:
    """A record whose process is gone (another start time at that pid) is ignored."""
    registry = DrivenRegistry(tmp_path / "driven")
    old = {"pid": 400, "ppid": 300, "sid": 400, "tty": PTS, "argv": ["-bash"], "start": 1}
    registry.mark(400, "t9", sid=400, tty=PTS,
                  table=ProcFS(fake_proc(tmp_path / "old", [old]), self_pid=400))
    me = {"pid": 410, "ppid": 400, "sid": 400, "tty": PTS, "argv": ["arrowgate"]}
    assert check(tmp_path, [INIT, SSHD, BASH, me], me=410, registry=registry).ok


def test_an_unreadable_process_tree_refuses(tmp_path: Path) -> None:
    """When in doubt, refuse: a parent that cannot be read."""
    me = {"pid": 410, "ppid": 999, "sid": 400, "tty": PTS, "argv": ["arrowgate"]}
    result = check(tmp_path, [INIT, me], me=410)
    assert not result.ok and "cannot read" in result.reason


def test_the_real_proc_reads_this_test_runners_parent() -> None:
    """The real process table (the check's own, `ProcFS` on /proc) is readable here:
    this process's parent and its command line, as /proc gives them."""
    table = ProcFS()
    me = table.get(table.self_pid())
    assert me is not None and me.ppid == os.getppid()
    parent = table.get(me.ppid)
    words = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().split(b"\0")
    assert parent is not None and list(parent.argv) == [w.decode() for w in words if w]


@pytest.mark.skipif(not (shutil.which("script") and shutil.which("setsid")),
                    reason="needs util-linux script and setsid")
def test_the_real_escape_is_refused(tmp_path: Path) -> None:
    """Run the escape for real: agent markers removed, detached with setsid -f, a terminal
    from script. The check inside refuses, naming script."""
    out = tmp_path / "verdict"
    probe = tmp_path / "probe.py"
    probe.write_text("import sys\nfrom engine.effects.operator import operator_check\n"
                     "c = operator_check()\n"
                     "open(sys.argv[1], 'w').write(f'{c.ok} {c.reason}')\n")
    inner = f"{shlex.quote(sys.executable)} {shlex.quote(str(probe))} {shlex.quote(str(out))}"
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "ARROWGATE_DRIVEN")}
    subprocess.run(["setsid", "-f", "script", "-qec", inner, "/dev/null"], cwd=ROOT, env=env,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True, timeout=60)
    deadline = time.monotonic() + 120  # the detached process reports through a file
    while not out.exists() or not out.read_text():
        assert time.monotonic() < deadline, "the detached check never reported"
        time.sleep(0.1)
    verdict = out.read_text()
    assert verdict.startswith("False") and "script" in verdict, verdict


class _Host:
    """Enough of a DriverHost for one terminal."""

    def output(self, node: str, text: str) -> None:
        pass

    def exited(self, node: str, code: int) -> None:
        pass

    def status(self, node: str, status: str) -> None:
        pass

    def replied(self, node: str, text: str, *, status: str = "waiting",
                length: int | None = None, note: str | None = None) -> None:
        pass


@pytest.mark.skipif(not shutil.which("bash"), reason="needs bash")
async def test_a_driven_terminal_is_recorded_and_refused_without_its_marker(
        tmp_path: Path) -> None:
    """A real driven terminal records its shell, session and terminal; `env -u
    ARROWGATE_DRIVEN` typed into it does not make a person; closing forgets it."""
    import asyncio

    from engine.effects.drivers import PtyTerminal

    terminal = PtyTerminal("t1")
    await terminal.start(_Host(), str(tmp_path))  # type: ignore[arg-type]
    try:
        pid = terminal._proc.pid  # type: ignore[union-attr]
        record = next(r for r in DrivenRegistry().records() if r.pid == pid)
        assert record.sid == pid and record.tty and record.node == "t1"
        out, probe = tmp_path / "verdict", tmp_path / "probe.py"
        probe.write_text("import sys\nfrom engine.effects.operator import operator_check\n"
                         "c = operator_check()\n"
                         "open(sys.argv[1], 'w').write(f'{c.ok} {c.reason}')\n")
        terminal.run(f"cd {shlex.quote(str(ROOT))} && env -u ARROWGATE_DRIVEN "
                     f"{shlex.quote(sys.executable)} {shlex.quote(str(probe))} "
                     f"{shlex.quote(str(out))}")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 120
        while not out.exists() or not out.read_text():
            assert loop.time() < deadline, terminal.screen()
            await asyncio.sleep(0.1)
        verdict = out.read_text()
        assert verdict.startswith("False") and "arrowgate drives (node t1)" in verdict, verdict
    finally:
        await terminal.aclose()
    assert all(r.pid != pid for r in DrivenRegistry().records())


def test_a_peer_is_judged_by_its_own_process(tmp_path: Path) -> None:
    """A service's client: its environment, terminal and ancestors, not the service's."""
    person = {"pid": 410, "ppid": 400, "sid": 400, "tty": PTS, "argv": ["arrowgate", "tui"]}
    agent = {"pid": 500, "ppid": 400, "sid": 400, "tty": PTS, "argv": ["claude"]}
    tool = {"pid": 510, "ppid": 500, "sid": 400, "tty": PTS, "argv": ["curl"],
            "env": {"CLAUDECODE": "1"}}
    hidden = {"pid": 520, "ppid": 400, "sid": 400, "tty": PTS, "argv": ["x"], "env": None}
    detached = {"pid": 530, "ppid": 1, "sid": 530, "tty": 0, "argv": ["curl"]}
    proc = fake_proc(tmp_path / "proc", [INIT, SSHD, BASH, person, agent, tool, hidden,
                                         detached])
    none = DrivenRegistry(tmp_path / "none")

    def verdict(pid: int) -> Any:
        return peer_check(pid, table=ProcFS(proc, self_pid=pid), registry=none)

    assert verdict(410).ok
    assert "CLAUDECODE" in verdict(510).reason
    assert "cannot read" in verdict(520).reason
    assert "no controlling terminal" in verdict(530).reason


def test_a_service_peer_needs_no_terminal_but_no_agent_either(tmp_path: Path) -> None:
    """A canvas app's window reaches the service with no terminal: its tree is judged,
    and the peer's own command line too (an agent may make the request itself)."""
    app = {"pid": 610, "ppid": 1, "sid": 610, "tty": 0, "argv": ["/opt/Canvas/canvas-app"]}
    agent = {"pid": 620, "ppid": 1, "sid": 620, "tty": 0, "argv": ["claude", "-p", "hi"]}
    child = {"pid": 630, "ppid": 620, "sid": 620, "tty": 0, "argv": ["curl"]}
    hidden = {"pid": 640, "ppid": 1, "sid": 640, "tty": 0, "argv": ["x"], "env": None}
    proc = fake_proc(tmp_path / "proc", [INIT, app, agent, child, hidden])
    none = DrivenRegistry(tmp_path / "none")

    def verdict(pid: int) -> Any:
        return peer_check(pid, table=ProcFS(proc, self_pid=pid), registry=none,
                          require_terminal=False)

    assert verdict(610).ok
    assert "claude" in verdict(620).reason
    assert "claude" in verdict(630).reason
    assert "cannot read" in verdict(640).reason
