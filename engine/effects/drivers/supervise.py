"""The supervisor every driven process runs under (SPEC §4.5, §10.1).

A driver does not start an agent's run or a terminal's shell itself: it
starts this file (`command_line`: ``python -I -S supervise.py …``), which
starts the real command and stays its parent until the command ends.

Why: the operator check refuses consent from anything below a process the
drivers recorded, by walking up a process's parents. A process that the
command detaches entirely (``setsid -f env -i curl … /approve``) used to be
re-parented to init, with a new session and a clean environment, so nothing
tied it to the agent. The supervisor makes itself the *child subreaper*
(``prctl(PR_SET_CHILD_SUBREAPER)``, Linux): every orphan of the command's
tree is re-parented to it instead, so the walk up from any process of the
tree, detached or not, meets the supervisor, which the driver records.

What it does, in order:

1. becomes the subreaper; on a system without one (not Linux) it runs on
   without, and a detached process escapes it there (README, "The operator
   check");
2. waits until the driver has recorded it (the driver closes the *go* pipe
   after writing a byte), so no process of the command exists before the
   record does; EOF without the byte means the driver gave up: it starts
   nothing;
3. starts the command in its own session and terminal (what the driver set
   up for the supervisor: the command inherits them), with its environment
   and the descriptors it was passed; why it could not (``errno`` and text)
   goes to the *report* pipe, which is otherwise closed on a good exec;
4. reaps every process re-parented to it; forwards SIGTERM, SIGINT and
   SIGHUP to the command; on `STOP_NOW` kills the command at once; a
   hang-up or SIGTERM is an end: if the command still runs `GRACE`
   seconds later (a shell told ``trap '' HUP TERM``, a program that ignores
   them), it goes as on `STOP_NOW`;
5. when the command has ended, ends what is left of its tree: SIGTERM (and
   SIGCONT, for a stopped one), up to `GRACE` seconds, then SIGKILL until no
   child is left; after `STOP_NOW`, SIGKILL at once;
6. exits as the command did: its exit status, or death by the same signal.

It imports the standard library only and is run with ``-I -S``: its start-up
is an interpreter's without site-packages, and nothing in the environment or
the workspace folder changes what it imports.
"""

from __future__ import annotations

import os
import signal
import sys
import time

__all__ = ["GRACE", "STOP_NOW", "SUPERVISOR", "command_line", "main"]

#: Seconds what is left of a tree gets between SIGTERM and SIGKILL once its
#: command has ended: enough to flush and remove a lock file, short enough
#: that a finished run's reply is not held up by a leftover that ignores it.
GRACE = 2.0
#: The signal that asks the supervisor to end the whole tree now, with
#: SIGKILL (the drivers' "stop this run": a timeout, a removed node).
STOP_NOW = signal.SIGUSR1
#: The file a driver runs.
SUPERVISOR = os.path.abspath(__file__)

_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# Forwarded, and then the command's end within the grace (SIGINT is ctrl-c:
# a program may well take it and go on).
_ENDING = (signal.SIGTERM, signal.SIGHUP)
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def command_line(argv: list[str], *, go: int, report: int,
                 grace: float = GRACE) -> list[str]:
    """The command that runs ``argv`` under the supervisor.

    Args:
        argv: the real command.
        go: the descriptor (in the supervisor) of the pipe it waits on before
            starting ``argv``.
        report: the descriptor (in the supervisor) of the pipe it tells why
            ``argv`` could not start.
        grace: seconds between SIGTERM and SIGKILL for what is left of the tree.

    Returns:
        The supervisor's command line; pass ``go`` and ``report`` in ``pass_fds``.
    """
    return [sys.executable, "-I", "-S", SUPERVISOR, str(go), str(report), f"{grace:g}", "--",
            *argv]


def _subreaper() -> bool:
    """Make this process the child subreaper; False where the system has none."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # only here: the one use, and not on other systems

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"cannot become the child subreaper: {os.strerror(err)}")
    return True


def _descendants(me: int) -> list[int]:
    """Every process below ``me`` (from /proc; empty where there is none)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
            ppid = int(stat[stat.rfind(b")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # gone since the listing
        children.setdefault(ppid, []).append(int(name))
    out: list[int] = []
    todo = list(children.get(me, ()))
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


class _Supervisor:
    """The state of one supervised command."""

    def __init__(self, grace: float) -> None:
        self.grace = grace
        self.child = 0
        self.status: int | None = None
        self.stop_now = False
        #: A stop signal that came before the command started: it never starts.
        self.early: int | None = None
        #: Whether an ending signal has set the alarm (`on_signal`).
        self.ending = False

    def on_signal(self, signum: int, _frame: object) -> None:
        """Forward a stop signal to the command; `STOP_NOW` kills it.

        A hang-up or SIGTERM also sets an alarm: the command's `GRACE` to end.
        Ignored (a removed terminal whose shell traps them), the alarm (SIGALRM)
        ends the tree as `STOP_NOW` does, so no hang-up leaves it running.
        """
        if signum in _ENDING and self.child and not self.ending:
            self.ending = True
            signal.setitimer(signal.ITIMER_REAL, self.grace)
        if signum in (STOP_NOW, signal.SIGALRM):
            self.stop_now = True
            signum = signal.SIGKILL
            # The driver reads the run's output to its end: with the command
            # killed, our copies of its pipes are the last (as when the driver
            # killed the run's group itself), so it sees the end at once.
            _let_go_of_stdio()
        if not self.child:
            self.early = self.early or signum
        elif self.status is None:
            try:
                os.kill(self.child, signum)
            except ProcessLookupError:
                pass

    def reap(self, *, block: bool) -> bool:
        """Reap exited children (the command's status is kept); False once none is left."""
        while True:
            try:
                pid, status = os.waitpid(-1, 0 if block else os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            if pid == self.child:
                self.status = status
            block = False  # then whatever else has exited, without waiting

    def end_tree(self) -> None:
        """End what is left below: SIGTERM, the grace, then SIGKILL until no child is left."""
        me = os.getpid()
        if not self.stop_now and self.reap(block=False):
            for pid in _descendants(me):
                for sig in (signal.SIGTERM, signal.SIGCONT):
                    _kill(pid, sig)
            deadline = time.monotonic() + self.grace
            while (not self.stop_now and time.monotonic() < deadline
                   and self.reap(block=False)):
                time.sleep(0.02)
        # Orphans come up to us as their parents die; a process that forks
        # while we kill is caught on the next sweep. No child left: no
        # process below us is left either (each would have an ancestor that
        # is our child).
        while self.reap(block=False):
            for pid in _descendants(me):
                _kill(pid, signal.SIGKILL)
            time.sleep(0.01)


def _let_go_of_stdio() -> None:
    """Put /dev/null in place of standard input, output and error (the command's pipes
    or terminal, which the supervisor never uses)."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    for fd in (0, 1, 2):
        try:
            os.dup2(null, fd)
        except OSError:
            pass
    os.close(null)


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # gone, or (setuid) not ours to end


def _exec_child(argv: list[str], report: int) -> None:
    """In the forked child: become the command, or report why not and exit 127."""
    try:
        # Python ignores these for itself; the command gets them as the
        # driver gave them to the supervisor (subprocess's restore_signals).
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, *_FORWARDED, STOP_NOW):
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        os.execvp(argv[0], argv)
    except OSError as exc:
        try:
            os.write(report, f"{exc.errno or 0} {exc.strerror or exc}".encode()[:4000])
        except OSError:
            pass
    except BaseException:
        pass
    os._exit(127)


def _exit_as(status: int) -> None:
    """Exit as the command did: its exit code, or death by its signal."""
    if os.WIFSIGNALED(status):
        _die_by(os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def _die_by(sig: int) -> None:
    """End this process by ``sig``, so the driver reads the status it always did."""
    try:
        import resource

        # Dying by SIGSEGV or SIGABRT must not leave the supervisor's core.
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, OSError, ValueError):
        pass
    try:
        signal.signal(sig, signal.SIG_DFL)
    except (OSError, ValueError):
        pass  # SIGKILL has no handler to reset
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)  # the signal did not end us: the shell's convention


def main(args: list[str]) -> None:
    """Run the command ``args[4:]`` under supervision (``GO REPORT GRACE -- ARGV…``)."""
    go, report, grace = int(args[0]), int(args[1]), float(args[2])
    argv = args[4:]
    sup = _Supervisor(grace)
    # Handlers before anything runs: a stop that comes early is not lost.
    for sig in (*_FORWARDED, STOP_NOW, signal.SIGALRM):
        signal.signal(sig, sup.on_signal)
    os.set_inheritable(report, False)  # the command gets it closed at exec
    try:
        _subreaper()
    except OSError as exc:
        os.write(report, f"{exc.errno} {exc.strerror}".encode())
        os._exit(127)
    with os.fdopen(go, "rb", 0) as fh:
        started = fh.read(1) == b"1"
    if not started:
        os._exit(127)  # the driver gave up before the command started
    if sup.early is not None:
        # Stopped before it started: end as the command would have.
        _die_by(sup.early)
    child = os.fork()
    if child == 0:
        _exec_child(argv, report)
    sup.child = child
    if sup.early is not None:  # came between the check and the line above
        _kill(child, signal.SIGKILL if sup.stop_now else sup.early)
        if sup.early in _ENDING and not sup.stop_now:
            sup.ending = True
            signal.setitimer(signal.ITIMER_REAL, sup.grace)
    os.close(report)
    # Nothing else the driver passed on is the supervisor's to keep open (a
    # terminal's start-up pipe holds its secret: not in /proc/<us>/fd).
    os.closerange(3, 1 << 16)
    while sup.status is None:
        sup.reap(block=True)
    status = sup.status
    sup.end_tree()
    _exit_as(status)


if __name__ == "__main__":
    main(sys.argv[1:])
