"""A real shell in a pseudo-terminal, its screen kept by pyte."""

from __future__ import annotations

import asyncio
import codecs
import fcntl
import os
import re
import secrets
import shutil
import signal
import struct
import termios
import time

from engine.effects.drivers.base import DriverHost, TerminalDriver, TerminalInputFull
from engine.effects.drivers.share import SHARE, pause_after
from engine.effects.drivers.supervised import start_supervised
from engine.effects.operator import DrivenRegistry, tty_nr_of

__all__ = ["INPUT_LIMIT", "SHARE", "PtyTerminal"]

#: The most typed input that may wait for the shell to read it. Input waits
#: while the program in the terminal does not read (a busy command, a full
#: pty); past this, a write is refused rather than kept without bound.
INPUT_LIMIT = 1 << 20

# bash prints this after every command (PROMPT_COMMAND), with the command's
# exit status: the "command finished" mark of terminal shell integration
# (OSC 133;D). Any program's output can print the same bytes, so the mark
# carries a secret of the session (as VS Code's OSC 633 does) and only marks
# with it count. pyte ignores OSC codes it does not know, and we cut the
# marks out of the stream before it sees them anyway.
_MARK = r"\x1b\]133;D;(\d+);{nonce}\x07"


def _start_up(nonce: str, fd: int) -> str:
    """What the shell's first PROMPT_COMMAND sources from a pipe (``. /dev/fd/N``).

    The secret is in no environment, not even the shell's own start-up one
    (``/proc/<shell>/environ`` is readable by every program it runs; it shows
    only ``. /dev/fd/N``): this sets PROMPT_COMMAND to print the marks with
    it, no longer exported, and closes the pipe, all before any command runs,
    so ``/proc/<shell>/fd`` does not show it either. Then it prints the first
    mark. (A command typed into the terminal can still read the shell's
    variables: whoever types can run anything anyway; program output cannot.)
    """
    return (f"PROMPT_COMMAND='printf \"\\033]133;D;%s;{nonce}\\007\" \"$?\"'\n"
            f"export -n PROMPT_COMMAND\n"
            f"exec {fd}<&-\n"
            f"eval \"$PROMPT_COMMAND\"\n")


def _rc_pipe(nonce: str) -> int:
    """A pipe's read end that yields the shell's start-up (`_start_up`), then ends.

    Small, so it fits the pipe's buffer: written whole before the shell starts.
    """
    read, write = os.pipe()
    try:
        os.write(write, _start_up(nonce, read).encode())
    finally:
        os.close(write)
    return read


class PtyTerminal(TerminalDriver):
    """bash in a pseudo-terminal in the workspace folder.

    The shell starts without rc files (``--noprofile --norc``) so that its
    prompt and its exit marks are the engine's (`_start_up`), whatever the
    user's dotfiles do; it gets the user's environment otherwise. Each command's exit status
    goes to `DriverHost.exited`; when the shell itself ends the node is
    ``finished``.
    """

    def __init__(self, node: str, *, shell: str = "bash", columns: int = 100,
                 lines: int = 30) -> None:
        super().__init__(node)
        self._shell = shell
        self._size = (columns, lines)
        # Imported with the first driver made: pyte and wcwidth, a tenth of a second, are
        # wanted by a process that runs an agent or a terminal, not by every one that
        # imports the engine (a verb, the verifier, a service without terminals).
        from engine.effects.drivers.screen import Screen

        self._screen = Screen(columns, lines)
        self._pending = b""
        self._marks = 0
        #: The session's secret: only exit marks carrying it are the shell's.
        self._nonce = secrets.token_hex(16)
        self._mark = re.compile(_MARK.format(nonce=self._nonce).encode())
        self._fd: int | None = None
        self._outbox = bytearray()
        # Output as text, decoded across reads: a read may end inside a character.
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._proc: asyncio.subprocess.Process | None = None
        self._host: DriverHost | None = None
        #: When reading resumes, while it pauses for the rest of the loop (`SHARE`).
        self._resume: asyncio.TimerHandle | None = None
        #: Set whenever the shell shows its prompt again (a command finished).
        self.ready = asyncio.Event()

    async def start(self, host: DriverHost, folder: str) -> None:
        """Start the shell; returns once it shows its first prompt."""
        path = shutil.which(self._shell)
        if path is None:
            raise FileNotFoundError(f"no {self._shell} on PATH for terminal {self.node}")
        self._host = host
        master, slave = os.openpty()
        columns, lines = self._size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        rc = _rc_pipe(self._nonce)
        # ARROWGATE_DRIVEN: cards can type here, so a TUI started in this
        # terminal must not take it for a person (engine.operator).
        env = dict(os.environ, TERM="xterm", PS1="$ ", PS2="> ", HISTFILE="/dev/null",
                   PROMPT_COMMAND=f". /dev/fd/{rc}", ARROWGATE_DRIVEN=self.node)

        def controlling_tty() -> None:
            # A session of its own with the pty as controlling terminal, so
            # job control and ctrl-c behave as in a person's terminal. The
            # supervisor leads the session and the shell, its child, shares
            # it (bash takes the terminal's foreground for its own group).
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        try:
            # Under the supervisor, recorded before the shell runs where
            # `env -u ARROWGATE_DRIVEN` cannot reach: the supervisor, its
            # session and its terminal (engine.operator).
            self._proc = await start_supervised(
                [path, "--noprofile", "--norc", "-i"], node=self.node,
                registry=DrivenRegistry(), tty=tty_nr_of(slave), stdin=slave, stdout=slave,
                stderr=slave, pass_fds=(rc,), cwd=folder, env=env,
                preexec_fn=controlling_tty)
        finally:
            os.close(rc)
        os.close(slave)
        # Non-blocking: a write the pty cannot take now waits in `_outbox`
        # for the loop's writer callback instead of stopping the engine (the
        # shell echoes what it reads, and only this loop reads the echo).
        os.set_blocking(master, False)
        self._fd = master
        asyncio.get_running_loop().add_reader(master, self._readable)
        await asyncio.wait_for(self.ready.wait(), timeout=10)

    def _readable(self) -> None:
        assert self._fd is not None
        try:
            data = os.read(self._fd, 65536)
        except BlockingIOError:
            return  # woken with nothing to read after all
        except OSError:
            data = b""
        if not data:
            self._ended()
            return
        # The loop's thread's own time: a process of the machine that ran
        # meanwhile does not make the pause longer.
        started = time.thread_time()
        self._consume(data)
        spent = time.thread_time() - started
        # A short read (a prompt, a line) is not paused after: only a flood is.
        pause = pause_after(spent)
        if self._fd is not None and pause > 0:
            loop = asyncio.get_running_loop()
            # The rest of the engine's share of the loop (`SHARE`).
            loop.remove_reader(self._fd)
            self._resume = loop.call_later(pause, self._read_again)

    def _read_again(self) -> None:
        self._resume = None
        if self._fd is not None:
            asyncio.get_running_loop().add_reader(self._fd, self._readable)

    def _consume(self, data: bytes) -> None:
        data = self._pending + data
        # Keep back what may be the start of an exit mark, to match it whole
        # with the next read; nothing else (pyte takes a sequence split
        # across feeds as it is: kept back, output would wait for more).
        cut = data.rfind(b"\x1b")
        if cut != -1 and self._mark_start(data[cut:]):
            data, self._pending = data[:cut], data[cut:]
        else:
            self._pending = b""
        start = 0
        for mark in self._mark.finditer(data):
            self._text(data[start:mark.start()])
            start = mark.end()
            self._marks += 1
            if self._marks > 1 and self._host is not None:  # the first is the shell starting
                self._host.exited(self.node, int(mark.group(1)))
            self.ready.set()
        self._text(data[start:])

    def _mark_start(self, tail: bytes) -> bool:
        """Whether ``tail`` (from an ESC to the end of what was read) may be the
        start of an exit mark, not yet the whole of one."""
        head = b"\x1b]133;D;"
        if len(tail) <= len(head):
            return head.startswith(tail)
        if not tail.startswith(head):
            return False
        rest = tail[len(head):]
        status = rest[:len(rest) - len(rest.lstrip(b"0123456789"))]
        end = b";" + self._nonce.encode() + b"\x07"
        after = rest[len(status):]
        # An exit status has three digits at most.
        return 0 < len(status) <= 3 and len(after) < len(end) and end.startswith(after)

    def _text(self, data: bytes) -> None:
        if not data:
            return
        # Shown nowhere: a card that read it could forge the marks (say the
        # shell printed its PROMPT_COMMAND).
        data = data.replace(self._nonce.encode(), b"[secret]")
        self._screen.feed(data)
        if self._host is not None:
            text = self._decoder.decode(data)
            if text:
                self._host.output(self.node, text)

    def _ended(self) -> None:
        if self._pending:
            # No more to come: it was output, not the start of a mark.
            pending, self._pending = self._pending, b""
            self._text(pending)
        rest = self._decoder.decode(b"", final=True)  # a character cut off at the end
        if rest and self._host is not None:
            self._host.output(self.node, rest)
        if self._fd is not None:
            self._release()
            if self._host is not None:
                self._host.status(self.node, "finished")

    def _release(self) -> None:
        """Stop watching the pty, drop input still waiting, and close it."""
        assert self._fd is not None
        if self._resume is not None:
            self._resume.cancel()
            self._resume = None
        try:
            loop = asyncio.get_running_loop()
            loop.remove_reader(self._fd)
            loop.remove_writer(self._fd)
        except RuntimeError:
            pass  # no loop running any more (closed at exit)
        os.close(self._fd)
        self._fd = None
        self._outbox.clear()

    def screen(self) -> str:
        """The visible screen, as text."""
        return self._screen.text()

    def run(self, command: str) -> None:
        """Type the command and press enter."""
        self.send(command + "\r")

    def send(self, data: str) -> None:
        """Type raw input, without waiting for the shell to read it.

        What the pty cannot take now is typed as the shell reads on.

        Raises:
            ConnectionError: the terminal has ended.
            TerminalInputFull: more than `INPUT_LIMIT` bytes would wait to be
                typed; nothing of ``data`` is typed.
        """
        if self._fd is None:
            raise ConnectionError(f"terminal {self.node} has ended")
        raw = data.encode()
        if len(self._outbox) + len(raw) > INPUT_LIMIT:
            raise TerminalInputFull(
                f"terminal {self.node}: {len(raw)} bytes of input refused: "
                f"{len(self._outbox)} bytes still wait to be typed (at most {INPUT_LIMIT})")
        self.ready.clear()
        waiting = bool(self._outbox)
        self._outbox += raw
        if not waiting:
            self._writable()
            if self._outbox:
                asyncio.get_running_loop().add_writer(self._fd, self._writable)

    def _writable(self) -> None:
        """Type as much waiting input as the pty takes now."""
        assert self._fd is not None
        try:
            written = os.write(self._fd, self._outbox)
        except BlockingIOError:
            return
        except OSError:
            written = len(self._outbox)  # the shell is gone; `_readable` sees it end
        del self._outbox[:written]
        if not self._outbox:
            asyncio.get_running_loop().remove_writer(self._fd)

    def close(self) -> None:
        """Hang up the shell and close the pty.

        SIGHUP goes to the supervisor's process group: the supervisor passes
        it on to the shell (which hangs up its jobs) and, once the shell has
        ended, ends what is left of the terminal's tree.
        """
        if self._proc is not None:
            DrivenRegistry().unmark(self._proc.pid)
        if self._proc is not None and self._proc.returncode is None:
            try:
                os.killpg(self._proc.pid, signal.SIGHUP)
            except ProcessLookupError:
                pass
        if self._fd is not None:
            self._release()

    async def aclose(self) -> None:
        """Stop, then reap the process."""
        self.close()
        if self._proc is not None:
            await self._proc.wait()
