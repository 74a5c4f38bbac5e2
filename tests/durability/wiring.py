"""What the cross-process tests share: a card wired to an agent or to a terminal, a
terminal driver that records what is typed into it, and a process that drives a terminal
until it is killed."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from engine import Engine
from engine.effects.drivers import DriverHost, TerminalDriver
from engine.services.subscriptions import Subscription
from tests.conftest import manifest, offer_install
from tests.durability.targets import Target

__all__ = ["Recording", "driving_process", "wire_agent", "wire_terminal"]

_ROOT = Path(__file__).resolve().parents[2]


class Recording(TerminalDriver):
    """A terminal that records what is typed into it."""

    def __init__(self, node: str) -> None:
        super().__init__(node)
        self.typed: list[tuple[str, bool]] = []

    async def start(self, host: DriverHost, folder: str) -> None:
        self.host = host

    def screen(self) -> str:
        return ""

    def close(self) -> None:
        pass

    def run(self, command: str) -> None:
        self.typed.append((command, True))

    def send(self, data: str) -> None:
        self.typed.append((data, False))


async def wire_terminal(app: Engine, tmp_path: Path) -> None:
    """Card c1 (``terminals.write``) wired by arrow e1 to terminal t1, in workspace w1."""
    (tmp_path / "ws").mkdir()
    await app.create_workspace("w1", tmp_path / "ws")
    await offer_install(app, manifest("acme.t", {"terminals.write": {}}))
    await app.add_node({"id": "c1", "type": "card", "package": "acme.t"}, workspace="w1")
    await app.add_node({"id": "t1", "type": "terminal"}, workspace="w1")
    await app.add_arrow({"id": "e1", "from": "c1", "to": "t1"})


async def wire_agent(app: Engine, tmp_path: Path) -> Subscription:
    """Card c1 (``agents.prompt``, ``agents.read``) wired by arrow e1 to agent a1 (named
    A), in workspace w1; c1's subscription, taken before anything else happens."""
    (tmp_path / "ws").mkdir()
    await app.create_workspace("w1", tmp_path / "ws")
    await offer_install(app, manifest("acme.p", {"agents.prompt": {}, "agents.read": {}}))
    await app.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await app.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    await app.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    return app.subscribe("c1")


@contextlib.contextmanager
def driving_process(target: Target, node: str = "t1", *, elsewhere: bool = False
                    ) -> Iterator[subprocess.Popen[str]]:
    """A process driving terminal ``node`` on ``target``'s store (its claim written),
    SIGKILLed (and reaped) when the block ends: it never closes its engine. With
    ``elsewhere`` it names itself as a process of another machine, which only its
    claim's lease tells alive (`tests.durability.claimer`)."""
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    with subprocess.Popen([sys.executable, "-m", "tests.durability.claimer",
                           target.location, node, *(["elsewhere"] if elsewhere else [])],
                          stdout=subprocess.PIPE, text=True,
                          cwd=_ROOT, env=env) as proc:
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
            yield proc
        finally:
            proc.kill()
            proc.wait(timeout=60)
