"""An agent that runs a configured command per prompt (a coding agent's print mode)."""

from __future__ import annotations

import asyncio
import codecs
import errno
import os
import time
from collections.abc import Sequence

from engine.effects.drivers.base import AgentDriver, DriverHost
from engine.effects.drivers.mcpconfig import MCPSetup
from engine.effects.drivers.share import pause_after
from engine.effects.drivers.supervised import start_supervised, stop_now
from engine.effects.operator import DrivenRegistry

__all__ = ["ARGUMENT_MAX", "REPLY_KEPT", "CommandAgent", "prompt_argument", "unsendable"]

#: The most bytes of a run's output a CommandAgent keeps for its reply and
#: its screen (the engine cuts the reply to the workspace's max_payload; this
#: bounds the memory and the terminal emulation a run's output may take).
REPLY_KEPT = 1 << 20

#: The most bytes of one command-line argument, its NUL included (Linux's
#: MAX_ARG_STRLEN: 32 pages of 4 KiB). A longer prompt for ``{prompt}``
#: would make exec fail with E2BIG.
ARGUMENT_MAX = 32 * 4096

# The most seconds `CommandAgent.close` waits for a run's supervisor to have
# ended its tree (SIGKILL: milliseconds, unless the machine is starved).
_CLOSE_WAIT = 2.0


def prompt_argument(template: str, text: str) -> str:
    """One argument of a run's command: ``template`` with ``{prompt}`` replaced by ``text``.

    A prompt is only ever prompt text: an argument that the template does not
    make an option (it does not begin with ``-``) but that would begin with
    ``-`` once the prompt is in, gets a leading space. Otherwise the agent
    program's parser would read a card's prompt as its option
    (``--dangerously-skip-permissions``, ``--mcp-config=FILE``) wherever it
    stands on the line. A template option (``--prompt={prompt}``) keeps the
    prompt as its value, as written.
    """
    argument = template.replace("{prompt}", text)
    if argument.startswith("-") and not template.startswith("-"):
        return " " + argument
    return argument


def unsendable(argv: Sequence[str]) -> str | None:
    """Why a run's command line with the prompt in it cannot be started, or None.

    A prompt put in the command's arguments (``{prompt}``) goes through exec,
    which takes C strings of a bounded size: a NUL would end the argument
    early (Python refuses it rather than cut the prompt), and Linux refuses
    an argument of `ARGUMENT_MAX` bytes or more (E2BIG). Either is the
    prompt's fault, not the agent's.
    """
    for argument in argv:
        if "\x00" in argument:
            return "it holds a NUL character, which no command-line argument can"
        try:
            size = len(os.fsencode(argument)) + 1  # with its terminating NUL
        except UnicodeEncodeError:
            return "it holds a character no command-line argument can (a lone surrogate)"
        if size > ARGUMENT_MAX:
            return (f"as an argument of the command it takes {size} bytes, more than "
                    f"one argument may ({ARGUMENT_MAX}); give it on standard input instead")
    return None


def _prompts_fault(exc: OSError | ValueError) -> bool:
    """Whether starting a run failed for its prompt (the next may start): the
    command line too long for exec, or an argument that cannot be encoded."""
    return isinstance(exc, ValueError) or exc.errno == errno.E2BIG


class CommandAgent(AgentDriver):
    """Runs ``command`` once per prompt in the workspace folder.

    The prompt replaces ``{prompt}`` in the command's arguments (never read
    as an option: see `prompt_argument`), or, when no argument has that
    placeholder, goes to the command's standard input (for example
    ``["claude", "-p", "{prompt}"]`` or ``["codex", "exec", "-"]``).
    Output streams to the host as it comes; the reply is the whole output,
    and a failing command's exit status (or its timeout) is noted after it,
    kept when the reply is cut. Past `REPLY_KEPT`
    bytes the output still streams but is neither kept nor shown on the
    screen; the reply then notes the whole size. A command that cannot be
    started leaves the agent ``finished``; a prompt that cannot be passed to
    it (see `unsendable`) gets an error reply and leaves it ``waiting``.
    """

    def __init__(self, node: str, command: Sequence[str], *, timeout: float = 600.0,
                 mcp: MCPSetup | None = None) -> None:
        """With ``mcp``, each run gets its MCP configuration (`engine.effects.drivers.mcpconfig`)."""
        super().__init__(node)
        if not command or not all(isinstance(a, str) and a for a in command):
            raise ValueError(f"agent {node}: a command is a non-empty list of arguments")
        if any("\x00" in a for a in command):
            raise ValueError(f"agent {node}: a command argument holds a NUL character")
        self._command = list(command)
        self._timeout = timeout
        self._mcp = mcp
        self._runs = 0
        #: The run whose MCP configuration is on disk now (None once it ended and its
        #: folder was removed; `close` removes a running one's).
        self._run_id: str | None = None
        # Imported with the first driver made: pyte and wcwidth, a tenth of a second, are
        # wanted by a process that runs an agent or a terminal, not by every one that
        # imports the engine (a verb, the verifier, a service without terminals).
        from engine.effects.drivers.screen import Screen

        self._screen = Screen(newline_returns=True)
        self._host: DriverHost | None = None
        self._folder = "."
        self._task: asyncio.Task[None] | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._closed = False

    async def start(self, host: DriverHost, folder: str) -> None:
        """Nothing runs between prompts: remember where to report and work."""
        self._host, self._folder = host, folder

    def submit(self, text: str) -> None:
        """Start the command for this prompt."""
        self._screen.echo(text)
        self._task = asyncio.get_running_loop().create_task(self._turn(text))

    async def _turn(self, text: str) -> None:
        assert self._host is not None
        if self._closed:
            return
        placeholder = any("{prompt}" in a for a in self._command)
        argv = [prompt_argument(a, text) for a in self._command]
        refused = unsendable(argv)
        if refused is not None:
            # This prompt's fault, not the agent's: it takes the next one.
            self._host.replied(self.node, f"[prompt not sent: {refused}]")
            return
        if self._mcp is None:
            await self._run(argv, {}, text, placeholder)
            return
        self._runs += 1
        self._run_id = run = f"{os.getpid()}-{self._runs}"
        try:
            try:
                configured, extra = self._mcp.apply(argv, run)
            except (OSError, ValueError) as exc:
                # No configuration, no run (Gemini CLI's system settings unreadable, a
                # full disk): told as a command that could not start, once.
                self._host.replied(self.node, f"[could not start {argv[0]}: {exc}]",
                                   status="finished")
                return
            await self._run(configured, extra, text, placeholder)
        finally:
            # Written for this run only (its program read it as it started):
            # left behind, one folder a prompt would pile up for good.
            self._mcp.discard(run)
            if self._run_id == run:
                # Gone now: `close` must not remove it again (a blocking rmtree
                # on the loop, for nothing).
                self._run_id = None

    async def _run(self, argv: list[str], extra: dict[str, str], text: str,
                   placeholder: bool) -> None:
        """Start the run's command and converse with it until it ends."""
        assert self._host is not None
        registry = DrivenRegistry()
        try:
            # A session of its own, under the supervisor, recorded before the
            # command runs (engine.operator): what it starts is known as driven
            # even after `env -u ARROWGATE_DRIVEN`, and even detached.
            self._proc = proc = await start_supervised(
                argv, node=self.node, registry=registry, cwd=self._folder,
                env=dict(os.environ, **extra, ARROWGATE_DRIVEN=self.node),
                stdin=asyncio.subprocess.PIPE, start_new_session=True,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        except (OSError, ValueError) as exc:
            if self._closed:
                return  # its node is gone: no one to tell
            if _prompts_fault(exc):
                # Too long for exec in all (ARG_MAX), or text it cannot encode.
                self._host.replied(self.node, f"[prompt not sent: {exc}]")
                return
            # One report: a reply and a status apart would let the queue's
            # next prompt be delivered to it in between (and fail the same way).
            self._host.replied(self.node, f"[could not start {argv[0]}: {exc}]",
                               status="finished")
            return
        if self._closed:
            # Closed while the command was starting: its tree goes too.
            self._kill()
            registry.unmark(proc.pid)
            return
        try:
            await self._converse(proc, text, placeholder)
        finally:
            registry.unmark(proc.pid)

    async def _converse(self, proc: asyncio.subprocess.Process, text: str,
                        placeholder: bool) -> None:
        assert self._host is not None
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"" if placeholder else text.encode())
        proc.stdin.close()
        out = bytearray()
        total = 0
        # Output as text, decoded across reads: a read may end inside a character.
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        notes: list[str] = []
        try:
            async with asyncio.timeout(self._timeout):
                while chunk := await proc.stdout.read(4096):
                    total += len(chunk)
                    # The loop's thread's own time: a process of the machine that ran
                    # meanwhile does not make the pause longer.
                    started = time.thread_time()
                    kept = chunk[:max(0, REPLY_KEPT - len(out))]
                    out += kept
                    if kept:
                        self._screen.feed(kept)
                    if text := decoder.decode(chunk):
                        self._host.output(self.node, text)
                    # A read of buffered output does not yield: without this a run
                    # printing megabytes would hold the loop until it ends; and the
                    # screen takes only its share of the loop (`share`), as a
                    # terminal's does, the program waiting on its pipe meanwhile.
                    await asyncio.sleep(pause_after(time.thread_time() - started))
                if rest := decoder.decode(b"", final=True):
                    self._host.output(self.node, rest)  # a character cut off at the end
                code = await proc.wait()
        except TimeoutError:
            self._kill()
            code = await proc.wait()
            notes.append(f"[stopped after {self._timeout:g} s]")
        if code:
            notes.append(f"[exit {code}]")
        # The notes apart from the output: a reply cut to max_payload keeps
        # them, or a failed run would read as a good one cut short.
        self._host.replied(self.node, out.decode("utf-8", "replace").strip(),
                           length=total if total > len(out) else None,
                           note="\n".join(notes) or None)

    def screen(self) -> str:
        """The prompts and the output so far."""
        return self._screen.text()

    def _kill(self, *, wait: float = 0.0) -> None:
        """Kill the running command and its whole tree (`STOP_NOW` to its supervisor).

        What the run started (a coding agent's tools, a build, a server) goes
        with it, as a terminal's do, in its session or detached from it: the
        supervisor SIGKILLs every process below it, then dies as the command
        did (SIGKILL). ``wait``: block up to that long until it has (`stop_now`).
        """
        if self._proc is not None:
            stop_now(self._proc, wait=wait)

    def close(self) -> None:
        """Kill a command still running, and what it started; remove its MCP configuration."""
        self._closed = True
        # Waited for (briefly): a removed node's run is awaited by no one, and
        # its pipes must end while the loop still runs to close them.
        self._kill(wait=_CLOSE_WAIT)
        if self._mcp is not None and self._run_id is not None:
            # The run's own `finally` does too, if the loop runs it still.
            self._mcp.discard(self._run_id)
        # A run still starting is left to see `_closed` once its process is
        # known: cancelled then, asyncio would kill only the session leader.
        if self._task is not None and self._proc is not None:
            self._task.cancel()

    async def aclose(self) -> None:
        """Stop, then reap the process."""
        self.close()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        if self._proc is not None:
            if self._proc.stdout is not None:
                # Output left unread by a run stopped mid-read: asyncio stopped reading a
                # full buffer, and a process is not done until its pipe has ended. Its
                # tree is killed, so what is left is at most a pipe's buffer.
                while await self._proc.stdout.read(65536):
                    pass
            await self._proc.wait()
