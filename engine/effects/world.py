"""Carrying out allowed calls: agents, terminals, built-in cards, the clipboard.

`World` is what the engine acts on once a call has passed its checks. The
default keeps agents and terminals simulated in the store (a screen of
text, a last reply, a status), which is what the replay and the tests use.
A node with a driver attached (`engine.effects.drivers`) is real instead: the world
hands it what was allowed once the change is durable (the ``driver.*``
events of a committed batch), and turns what the driver reports — output,
replies, exit codes, status — into engine operations. File and network
calls go to the scope handlers (`fs`, `net`), which refuse when absent:
the engine never performs an operation it cannot confine.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine
from contextvars import Context
from typing import TYPE_CHECKING, Any, Protocol

from canvas import Node
from engine.core.checks import Passed, denial
from engine.core.events import Event
from engine.effects.drivers import AgentDriver, Driver, TerminalDriver

if TYPE_CHECKING:
    from engine.core.prompts import Prompt
    from engine.engine import Engine

__all__ = ["DEFAULT", "ScopeHandler", "World"]


class ScopeHandler(Protocol):
    """Performs file or network calls inside their scope (SPEC §8)."""

    def __call__(self, engine: Engine, passed: Passed, args: dict[str, Any]) -> Any:
        """Return the call's value (for net.fetch, an awaitable), or a refusing Decision."""
        ...


class _Default:
    """Sentinel: "the real confined handler" (None means "refuse every such call")."""


DEFAULT = _Default()


class World:
    """The default world: simulated agents and terminals, content in the store.

    Args:
        clipboard: receives text a card copies (the app's clipboard).
        fs: handler for ``fs.*`` calls: by default `ConfinedFiles` (the
            engine tells it its data folder); None refuses every file call.
        net: handler for ``net.fetch``: by default `GuardedFetch` over the
            system resolver and httpx; None refuses every fetch.
    """

    def __init__(
        self,
        *,
        clipboard: Callable[[str], None] | None = None,
        fs: ScopeHandler | None | _Default = DEFAULT,
        net: ScopeHandler | None | _Default = DEFAULT,
    ) -> None:
        self.clipboard_texts: list[str] = []
        self._clipboard = clipboard or self.clipboard_texts.append
        if isinstance(net, _Default):
            from engine.effects.netguard import GuardedFetch
            from engine.effects.transport import HttpxTransport, system_resolver

            net = GuardedFetch(system_resolver, HttpxTransport())
        self.fs: ScopeHandler | None | _Default = fs
        self.net: ScopeHandler | None = net
        #: The live driver behind a node, by node id (see `Engine.attach_driver`).
        self.drivers: dict[str, Driver] = {}
        self._engine: Engine | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def bind(self, data_dir: str | None) -> None:
        """Called by the engine: the real file handler protects the app's data folder."""
        if isinstance(self.fs, _Default):
            from engine.effects.files import ConfinedFiles

            self.fs = ConfinedFiles(data_dir=data_dir)

    def close(self) -> None:
        """Stop what the world runs in the background (file watches, drivers)."""
        stop = getattr(self.fs, "stop_watches", None)
        if stop is not None:
            stop()
        for driver in self.drivers.values():
            driver.close()
        self.drivers.clear()
        for task in self._tasks:
            task.cancel()

    async def aclose(self) -> None:
        """Stop the drivers and wait for their processes, then `close`."""
        for driver in list(self.drivers.values()):
            await driver.aclose()
        await self.settle()
        self.close()

    # -- drivers ----------------------------------------------------------
    async def attach(self, engine: Engine, node: Node, driver: Driver) -> None:
        """Start ``driver`` for ``node`` in its workspace folder (see `Engine.attach_driver`)."""
        self._engine = engine
        folder = engine.state.workspaces[node.workspace].folder
        await driver.start(self, folder)
        old = self.drivers.pop(node.id, None)
        if old is not None:
            await old.aclose()
        self.drivers[node.id] = driver

    def committed(self, event: Event) -> None:
        """A batch committed: hand its allowed prompts and input to the drivers.

        A removed node's driver is stopped (its process is hung up).
        """
        if event.type == "agents.changed" and event.data.get("change") == "removed":
            gone = self.drivers.pop(str(event.data.get("agent")), None)
            if gone is not None:
                gone.close()
            return
        driver = self.drivers.get(str(event.data.get("node")))
        if event.type == "driver.prompt" and isinstance(driver, AgentDriver):
            driver.submit(str(event.data["text"]))
        elif event.type == "driver.input" and isinstance(driver, TerminalDriver):
            try:
                if event.data["run"]:
                    driver.run(str(event.data["text"]))
                else:
                    driver.send(str(event.data["text"]))
            except ConnectionError:
                self.status(driver.node, "finished")

    async def settle(self) -> None:
        """Wait until every report drivers made so far has become an engine operation."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _later(self, op: Coroutine[Any, Any, None]) -> None:
        # A fresh context: the operation must not join a batch of whatever
        # engine call happened to be running when the driver reported.
        task = asyncio.get_running_loop().create_task(op, context=Context())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # DriverHost: what drivers report.
    def output(self, node: str, text: str) -> None:
        """Live output: sent as ``agents.onOutput`` (no state change stands behind it)."""
        if self._engine is not None:
            target = self._engine.state.canvas.node(node)
            self._engine.notify(Event("agents.onOutput", None, {
                "node": node, "text": text,
                "workspace": target.workspace if target else None}))

    def replied(self, node: str, text: str) -> None:
        """An agent's turn ended: `Engine.agent_replied`."""
        if self._engine is not None:
            self._later(self._engine.agent_replied(node, text))

    def exited(self, node: str, code: int) -> None:
        """A command ended: `Engine.command_exited` (the ``exit`` port)."""
        if self._engine is not None:
            self._later(self._engine.command_exited(node, code))

    def status(self, node: str, status: str) -> None:
        """The node changed status on its own: `Engine.driver_status`."""
        if self._engine is not None:
            self._later(self._engine.driver_status(node, status))

    # -- calls ----------------------------------------------------------
    def perform(self, engine: Engine, passed: Passed, args: dict[str, Any], now: float) -> Any:
        """Carry out an allowed call and return its value (or a scope refusal)."""
        name = passed.spec.name
        target = passed.target
        if name == "agents.list":
            return [self._describe(n) for n in engine.state.canvas.nodes(passed.card.workspace)
                    if n.type in ("agent", "terminal")]
        if name == "agents.get":
            assert target is not None
            return self._describe(target)
        if name == "agents.readScreen":
            assert target is not None
            driver = self.drivers.get(target.id)
            return driver.screen() if driver else str(target.data.get("screen", ""))
        if name == "agents.lastReply":
            assert target is not None
            return str(target.data.get("last_reply", ""))
        if name == "agents.onOutput":
            assert target is not None
            engine.events.watch(passed.card.id, target.id)
            return {"subscribed": target.id}
        if name in ("terminals.run", "terminals.write"):
            assert target is not None
            return self.run(engine, target, args.get("command", args.get("data", "")),
                            run=name == "terminals.run")
        if name.startswith("cards."):
            assert target is not None
            return self._card_content(engine, name, target, args)
        if name == "clipboard.copyText":
            self._clipboard(str(args["text"]))
            return None
        if name == "usage.get":
            tokens, cost = engine.state.usage.get(passed.card.workspace, (0, 0.0))
            return {"tokens": tokens, "cost": cost}
        if name == "canvas.spawn":
            return self._spawn(engine, passed, str(args["kind"]))
        raise AssertionError(f"no way to perform {name}")  # the catalogue and this agree

    async def files(self, engine: Engine, passed: Passed, args: dict[str, Any]) -> Any:
        """Perform an allowed ``fs.*`` call (outside any store transaction).

        The handler does the file work off the event loop and returns an
        awaitable; a plain handler's value is taken as it is.
        """
        assert not isinstance(self.fs, _Default)
        value = self._scoped(self.fs, engine, passed, args, "files")
        return await value if inspect.isawaitable(value) else value

    async def fetch(self, engine: Engine, passed: Passed, args: dict[str, Any]) -> Any:
        """Perform an allowed ``net.fetch`` (outside any store transaction)."""
        value = self._scoped(self.net, engine, passed, args, "the network")
        return await value if inspect.isawaitable(value) else value

    @staticmethod
    def _scoped(handler: ScopeHandler | None, engine: Engine, passed: Passed,
                args: dict[str, Any], what: str) -> Any:
        if handler is None:
            return denial(passed.spec.name, passed.card.id, "SCOPE_REFUSED",
                          package=passed.package.name, permission=passed.permission,
                          reason="unavailable",
                          why=f"this engine has no confined access to {what}")
        return handler(engine, passed, args)

    @staticmethod
    def _describe(node: Node) -> dict[str, Any]:
        return {"id": node.id, "type": node.type, "name": node.data.get("name", ""),
                "status": node.data.get("status", "waiting")}

    def _card_content(self, engine: Engine, name: str, target: Node,
                      args: dict[str, Any]) -> Any:
        kind, verb = name.split(".")[1:]
        data = dict(target.data)
        if verb == "read":
            if kind in ("note", "sticky"):
                return data["text"]
            return [dict(item) for item in data["items" if kind == "todo" else "tasks"]]
        text = str(args["text"])
        if kind == "note":
            data["text"] = data["text"] + ("\n" if data["text"] else "") + text
            result: Any = None
        elif kind == "sticky":
            data["text"] = text
            result = None
        else:
            key = "items" if kind == "todo" else "tasks"
            items = list(data[key])
            item_id = f"{target.id}-{len(items) + 1}"
            items.append({"id": item_id, "text": text, "done": False} if kind == "todo"
                         else {"id": item_id, "text": text, "column": "todo"})
            data[key] = items
            result = item_id
        engine.save_node(Node(target.id, target.type, target.workspace, data))
        return result

    def _spawn(self, engine: Engine, passed: Passed, kind: str) -> str:
        card = passed.card
        canvas = engine.state.canvas
        n = 1
        while canvas.has_node(f"{card.id}.{kind}{n}"):
            n += 1
        new_id = f"{card.id}.{kind}{n}"
        raw: dict[str, Any] = {"id": new_id, "spawned_by": card.id}
        if kind == "self":
            raw.update(type="card", package=card.data["package"], visible=True)
        else:
            raw["type"] = kind
        canvas.add_node(Node.build(raw, card.workspace))
        engine.save_node(canvas.node(new_id))  # type: ignore[arg-type]
        # The arrow is covered by the operator's grant of canvas.spawn (SPEC §4.5).
        engine.save_arrow(canvas.add_arrow({"id": f"{card.id}->{new_id}", "from": card.id,
                                            "to": new_id}))
        return new_id

    # -- agents and terminals ---------------------------------------------
    def deliver(self, engine: Engine, prompt: Prompt, agent: Node) -> Node:
        """Hand a prompt to an agent: it is working on it, with its causal chain."""
        data = dict(agent.data)
        data["status"] = "working"
        data["chain"] = list(prompt.chain)
        if agent.id in self.drivers:
            engine._emit("driver.prompt", None, node=agent.id, text=prompt.text)
        else:
            data["screen"] = str(data.get("screen", "")) + f"> {prompt.text}\n"
        node = Node(agent.id, agent.type, agent.workspace, data)
        engine.save_node(node)
        return node

    def turn_ended(self, engine: Engine, agent: Node, text: str) -> Node:
        """The agent finished its turn: waiting again, with its last reply."""
        data = dict(agent.data)
        data.update(status="waiting", last_reply=text, chain=None)
        if agent.id not in self.drivers:
            data["screen"] = str(data.get("screen", "")) + text + "\n"
        node = Node(agent.id, agent.type, agent.workspace, data)
        engine.save_node(node)
        return node

    def run(self, engine: Engine, terminal: Node, text: str, *, run: bool) -> dict[str, str]:
        """Type a command (``run``) or raw data into a terminal."""
        data = dict(terminal.data)
        if terminal.id in self.drivers:
            engine._emit("driver.input", None, node=terminal.id, text=text, run=run)
            if run:
                data["status"] = "working"
            engine.save_node(Node(terminal.id, terminal.type, terminal.workspace, data))
            return {"state": "sent"}
        data["screen"] = str(data.get("screen", "")) + (f"$ {text}\n" if run else text)
        engine.save_node(Node(terminal.id, terminal.type, terminal.workspace, data))
        return {"state": "ok"}

    def terminal_output(self, engine: Engine, terminal: Node, text: str,
                        exit: int | None) -> None:
        """Text appears on a terminal's screen; ``exit`` ends it with that code."""
        data = dict(terminal.data)
        data["screen"] = str(data.get("screen", "")) + text
        if exit is not None:
            data["exit"] = exit
            data["status"] = "finished"
        engine.save_node(Node(terminal.id, terminal.type, terminal.workspace, data))
