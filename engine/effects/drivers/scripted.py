"""A scripted agent: deterministic replies, for the demo and tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

from engine.effects.drivers.base import AgentDriver, DriverHost

__all__ = ["ScriptedAgent"]


class ScriptedAgent(AgentDriver):
    """Replies from a script: a mapping from prompt to reply, or a function.

    A prompt the mapping does not know gets ``"done: <prompt>"``. The reply
    streams word by word (``agents.onOutput``) before the turn ends, the way
    a real agent's output arrives.
    """

    def __init__(self, node: str,
                 replies: Mapping[str, str] | Callable[[str], str] | None = None) -> None:
        super().__init__(node)
        self._replies = replies
        # Imported with the first driver made: pyte and wcwidth, a tenth of a second, are
        # wanted by a process that runs an agent or a terminal, not by every one that
        # imports the engine (a verb, the verifier, a service without terminals).
        from engine.effects.drivers.screen import Screen

        self._screen = Screen(newline_returns=True)
        self._host: DriverHost | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        #: Every prompt this agent received, in order.
        self.received: list[str] = []

    async def start(self, host: DriverHost, folder: str) -> None:
        """Remember where to report."""
        self._host = host

    def reply_to(self, text: str) -> str:
        """The scripted reply to ``text``."""
        if callable(self._replies):
            return self._replies(text)
        if self._replies is not None and text in self._replies:
            return self._replies[text]
        return f"done: {text}"

    def submit(self, text: str) -> None:
        """Take the prompt; the reply follows on the next turns of the loop."""
        self.received.append(text)
        self._screen.echo(text)
        task = asyncio.get_running_loop().create_task(self._turn(text))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _turn(self, text: str) -> None:
        assert self._host is not None
        reply = self.reply_to(text)
        for word in reply.split(" "):
            await asyncio.sleep(0)
            chunk = word + " "
            self._screen.feed(chunk.encode())
            self._host.output(self.node, chunk)
        self._screen.feed(b"\n")
        self._host.replied(self.node, reply)

    def screen(self) -> str:
        """The prompts and replies so far."""
        return self._screen.text()

    def close(self) -> None:
        """Stop a reply in progress."""
        for task in list(self._tasks):
            task.cancel()
