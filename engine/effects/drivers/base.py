"""The driver interface: how the engine reaches real agents and terminals.

The engine decides; a driver carries out. Once a prompt, command or write
has been allowed *and its log row is durable*, the world hands it to the
node's driver (`AgentDriver.submit`, `TerminalDriver.run`,
`TerminalDriver.send`). A driver reports back through its `DriverHost`:
output as it streams, an agent's reply at the end of its turn, a command's
exit code, a status change. It never decides anything and never writes to
the store itself: every report becomes an engine operation, so it is logged,
gated and durable like any other change.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Protocol

__all__ = ["AgentDriver", "Driver", "DriverHost", "TerminalDriver", "TerminalInputFull"]


class TerminalInputFull(Exception):
    """A terminal refused input: too much already waits for its program to read."""


class DriverHost(Protocol):
    """What a driver reports to (the engine's world)."""

    def output(self, node: str, text: str) -> None:
        """Text the node printed (live output, ``agents.onOutput``)."""
        ...

    def replied(self, node: str, text: str, *, status: str = "waiting",
                length: int | None = None, note: str | None = None) -> None:
        """An agent's turn ended with this reply; it is left ``status``.

        ``length``: the whole reply's size in bytes, when ``text`` is only its
        start (a driver keeps a bounded part of a run's output).

        ``note``: what the driver says about the run (``[exit 3]``), added
        after the reply and kept when the reply is cut; ``length`` counts
        the output alone.

        ``waiting`` for the next prompt, or ``finished`` when it cannot take
        another (its command could not start): one report, so nothing is
        delivered to it in between.
        """
        ...

    def exited(self, node: str, code: int) -> None:
        """A terminal command ended with this exit code (the ``exit`` port)."""
        ...

    def status(self, node: str, status: str) -> None:
        """The node's status changed on its own (``finished`` when it ended)."""
        ...


class Driver(ABC):
    """A live agent or terminal behind one node."""

    def __init__(self, node: str) -> None:
        self.node = node

    @abstractmethod
    async def start(self, host: DriverHost, folder: str) -> None:
        """Start in the workspace folder, reporting to ``host``."""

    @abstractmethod
    def screen(self) -> str:
        """What a person looking at the node would see now (``agents.readScreen``)."""

    @abstractmethod
    def close(self) -> None:
        """Stop the process behind the node; safe to call twice."""

    async def aclose(self) -> None:
        """Stop and wait until the process behind the node has gone."""
        self.close()


class AgentDriver(Driver):
    """An AI agent: takes one prompt per turn and replies."""

    @abstractmethod
    def submit(self, text: str) -> None:
        """Start a turn on ``text`` (the engine only calls this while the agent waits)."""


class TerminalDriver(Driver):
    """A terminal: runs commands and takes raw input."""

    @abstractmethod
    def run(self, command: str) -> None:
        """Type ``command`` and press enter."""

    @abstractmethod
    def send(self, data: str) -> None:
        """Type ``data`` as it is (``terminals.write``).

        Raises:
            ConnectionError: the terminal has ended.
            TerminalInputFull: too much input already waits to be typed.
        """
