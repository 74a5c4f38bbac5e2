"""Carrying out allowed calls: agents, terminals, built-in cards, the clipboard.

`World` is what the engine acts on once a call has passed its checks. The
default keeps agents and terminals simulated in the store (a screen of
text, a last reply, a status), which is what the replay and the tests use.
A node with a driver attached (`engine.effects.drivers`) is real instead:
the world hands it what was allowed once the change is durable (the
``driver.*`` events of a committed batch), and passes what the driver
reports — output, replies, exit codes, status — to the `DriverReports` it
was bound to. File and network calls go to the scope handlers (`fs`,
`net`), which refuse when absent: the engine never performs an operation it
cannot confine.

The world never changes the engine's state: each call returns what it did
as a value (`engine.core.plans.Performed`: the value and the effects to
record — nodes changed or added, arrows drawn, events to send), and the
service that asked applies them.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
from collections.abc import Callable, Coroutine
from contextvars import Context
from typing import Any, Protocol

from canvas import Node
from engine.core.checks import Passed, denial
from engine.core.content import too_full
from engine.core.decision import Decision
from engine.core.events import Event
from engine.core.plans import AddArrow, AddNode, Emit, Performed, SaveNode, Watch, delivered
from engine.core.prompts import Prompt
from engine.core.state import State
from engine.core.text import visible
from engine.effects.drivers import AgentDriver, Driver, TerminalDriver, TerminalInputFull
from engine.effects.host import ScopeHandler, ScopeHost

__all__ = ["DEFAULT", "SCREEN_KEPT", "DriverReports", "ScopeHandler", "ScopeHost", "World"]

#: Where a listener's failure goes (the engine's ``arrowgate.events`` logger).
_events_log = logging.getLogger("arrowgate.events")

#: The most bytes of a driverless agent's or terminal's ``screen`` kept in its
#: node's data: its end, as a screen shows the latest. Every prompt, reply,
#: write and output is added to it; kept whole, a card's writes (each within
#: max_payload, 60 a minute) would pile up in the store without bound.
SCREEN_KEPT = 64 * 1024


def _on_screen(data: dict[str, Any], text: str) -> None:
    """Add ``text`` to the node data's ``screen``, keeping its last `SCREEN_KEPT` bytes."""
    screen = str(data.get("screen", "")) + text
    if len(screen) <= SCREEN_KEPT // 4:  # at most 4 bytes a character: within the bound
        data["screen"] = screen
        return
    raw = screen.encode("utf-8", "surrogatepass")
    if len(raw) > SCREEN_KEPT:
        start = len(raw) - SCREEN_KEPT
        while start < len(raw) and raw[start] & 0xC0 == 0x80:
            start += 1  # not into a character: from the next one's first byte
        screen = raw[start:].decode("utf-8", "surrogatepass")
    data["screen"] = screen


class DriverReports(Protocol):
    """Where the world passes what real drivers report: engine operations of their own."""

    def driver_output(self, node: str, text: str) -> None:
        """Live output (``agents.onOutput``); no state change stands behind it."""
        ...

    async def agent_replied(self, agent: str, text: str, *, status: str = "waiting",
                            length: int | None = None, note: str | None = None) -> None:
        """An agent's turn ended with ``text`` (of ``length`` bytes in all) and the
        driver's ``note`` on it; it is left ``status``."""
        ...

    async def command_exited(self, terminal: str, code: int) -> None:
        """A command in a terminal ended with ``code``."""
        ...

    async def driver_status(self, node_id: str, status: str) -> None:
        """The node's status changed on its own."""
        ...


class _Default:
    """Sentinel: "the real confined handler" (None means "refuse every such call")."""


DEFAULT = _Default()


class World:
    """The default world: simulated agents and terminals, content in the store.

    Args:
        clipboard: receives text a card copies (the app's clipboard), once its row is committed.
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
        self._reports: DriverReports | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        #: The driver `attach` is starting for each node id (it reports before it is
        #: the node's). Removing the node takes it out: that marks it cancelled.
        self._starting: dict[str, Driver] = {}
        #: Terminal input committed while its driver was starting (its claim written
        #: first, `Engine.attach_driver`): typed once the driver is the node's.
        self._early: dict[Driver, list[tuple[str, bool]]] = {}

    def bind(self, data_dir: str | None, reports: DriverReports, *,
             database: str | None = None) -> None:
        """Called by the engine: where drivers' reports go; the real file handler protects
        the app's data folder and the database file the engine is on."""
        self._reports = reports
        if isinstance(self.fs, _Default):
            from engine.effects.files import ConfinedFiles

            self.fs = ConfinedFiles(data_dir=data_dir, database=database)

    def close(self) -> None:
        """Stop what the world runs in the background (file watches, drivers)."""
        stop = getattr(self.fs, "stop_watches", None)
        if stop is not None:
            stop()
        for driver in self.drivers.values():
            driver.close()
        self.drivers.clear()
        # Drivers still starting are stopped by `attach` once their start returns.
        self._starting.clear()
        self._early.clear()
        for task in self._tasks:
            task.cancel()

    def narrowed(self, state: State) -> None:
        """Consent narrowed (a node removed, a permission revoked, a package pending):
        end at once what ran on consent now gone — file watches, and file work not
        yet begun (SPEC §4.3, §8.3)."""
        end = getattr(self.fs, "end_withdrawn_watches", None)
        if end is not None:
            end(state)
        withhold = getattr(self.fs, "withhold_withdrawn", None)
        if withhold is not None:
            withhold(state)

    def gone(self, state: State) -> None:
        """Another process removed nodes (seen on catch-up, or at a reload): their
        drivers stop, as they do once a removal made here has committed (`committed`).
        (Their file watches have ended already: the engine runs `narrowed` after every
        catch-up and reload, before this.)"""
        live = state.canvas.has_node
        for node_id in [n for n in (*self.drivers, *self._starting) if not live(n)]:
            try:
                self._cancel(node_id)
            except Exception:  # noqa: BLE001 - the app's driver: isolated, as in `committed`
                # Under the write lock of the batch being opened: a driver that fails
                # to stop must not fail the catch-up, nor the operation that made it.
                _events_log.exception("arrowgate: the driver of %s, removed by another "
                                      "process, failed to stop", node_id)

    async def aclose(self) -> None:
        """Stop the drivers and wait for their processes, then `close`."""
        for driver in list(self.drivers.values()):
            await driver.aclose()
        await self.settle()
        self.close()

    # -- drivers ----------------------------------------------------------
    async def attach(self, node: Node, folder: str, driver: Driver) -> None:
        """Start ``driver`` for ``node`` in its workspace folder (see `Engine.attach_driver`).

        It reports through its own `_DriverReporter`: while it starts, and then
        for as long as it is the node's driver (`drives`). It becomes the node's
        driver only if it is still the one starting for it when ``start`` returns:
        the node may have been removed meanwhile (and maybe re-added under its id,
        someone else), or a later attach may have replaced it. Otherwise it is
        stopped, since no one else would ever close it.
        """
        self._starting[node.id] = driver
        try:
            await driver.start(_DriverReporter(self, driver), folder)
            if self._starting.get(node.id) is not driver:
                await driver.aclose()
                return
            old = self.drivers.pop(node.id, None)
            if old is not None:
                await old.aclose()
            self.drivers[node.id] = driver
            early = self._early.pop(driver, [])
            if isinstance(driver, TerminalDriver):
                for text, run in early:
                    self._type(driver, text, run)
        finally:
            self.unreserve(node.id, driver)

    def reserve(self, node: str, driver: TerminalDriver) -> None:
        """Count ``driver`` as starting for terminal ``node`` before `attach`: from the
        moment its engine writes the terminal's claim, the engine's own input there
        is the driver's to type (it waits for it), never echoed on the simulated one.

        A driver still starting for ``node`` is replaced: the input that waits for
        it was answered ``sent``, and is ``driver``'s to type, before any that
        comes after (the replaced one is stopped once its start returns)."""
        replaced = self._starting.get(node)
        self._starting[node] = driver
        if replaced is not None and replaced is not driver:
            waiting = self._early.pop(replaced, None)
            if waiting:
                self._early[driver] = waiting + self._early.get(driver, [])

    def unreserve(self, node: str, driver: Driver) -> None:
        """``driver`` is no longer starting for ``node`` (started, failed, or its claim
        refused): input that waited for it and was not typed is said to be dropped."""
        if self._starting.get(node) is driver:
            del self._starting[node]
        dropped = self._early.pop(driver, None)
        if dropped:
            # Allowed and logged as sent: said where its output would appear.
            self.output(node, "[the terminal's driver did not start: input not typed]\n")
            if any(run for _text, run in dropped):
                # Its command was shown working (`run`): nothing runs it, as when
                # the terminal has ended under it (`_type`).
                self.status(node, "finished")

    async def detach(self, driver: Driver) -> None:
        """Stop ``driver`` and let go of it, if it is its node's driver (an attach
        undone: its terminal could not be claimed, `Engine.attach_driver`)."""
        if self.drivers.get(driver.node) is driver:  # else replaced, and stopped, already
            del self.drivers[driver.node]
            await driver.aclose()

    def cancel_start(self, node: str) -> Driver | None:
        """Cancel the driver starting for ``node``, if one is: it never becomes the node's
        driver (`attach` stops it once its start returns), and input of this engine
        that waited for it is said to be dropped. Returns the driver cancelled."""
        starting = self._starting.get(node)
        if starting is not None:
            self.unreserve(node, starting)
        return starting

    def _cancel(self, node_id: str) -> None:
        """The node is gone: stop its driver, and cancel one still starting (`attach`
        stops that one once its start returns)."""
        self._starting.pop(node_id, None)
        gone = self.drivers.pop(node_id, None)
        if gone is not None:
            gone.close()

    def drives_node(self, node: str) -> bool:
        """Whether a driver drives ``node`` here, or is starting to."""
        return node in self.drivers or node in self._starting

    def drives(self, driver: Driver) -> bool:
        """Whether ``driver`` may report for its node: it is the node's driver, or
        starting to be. A removed or replaced node's driver is not: what it reports
        late (a run ending, failing to start) must not reach a new node of that id."""
        return (self.drivers.get(driver.node) is driver
                or self._starting.get(driver.node) is driver)

    def report(self, driver: Driver,
               operation: Callable[[DriverReports], Coroutine[Any, Any, None]]) -> None:
        """A driver's report, as the engine ``operation`` it becomes: dropped unless
        ``driver`` `drives` its node now and still when the operation's turn comes."""
        reports = self._reports
        if reports is None or not self.drives(driver):
            return

        async def if_still() -> None:
            if self.drives(driver):
                await operation(reports)

        self._later(if_still())

    def committed(self, event: Event) -> None:
        """A batch committed: hand its allowed prompts and input to the drivers, and
        its copies to the clipboard.

        A removed node's driver is stopped (its process is hung up), and one
        still starting for it is cancelled.
        """
        if event.type == "driver.clipboard":
            self._clipboard(str(event.data["text"]))
            return
        if not self.drivers and not self._starting:
            # Nothing to hand over and nothing to stop (most engines run no
            # driver): every committed event comes through here.
            return
        if event.type == "agents.changed" and event.data.get("change") == "removed":
            self._cancel(str(event.data.get("agent")))
            return
        node = str(event.data.get("node"))
        driver = self.drivers.get(node)
        if event.type == "driver.prompt" and isinstance(driver, AgentDriver):
            driver.submit(str(event.data["text"]))
        elif event.type == "driver.input":
            text, run = str(event.data["text"]), bool(event.data["run"])
            if isinstance(driver, TerminalDriver):
                self._type(driver, text, run)
            elif isinstance(starting := self._starting.get(node), TerminalDriver):
                self._early.setdefault(starting, []).append((text, run))

    def _type(self, driver: TerminalDriver, text: str, run: bool) -> None:
        """Type committed input into a terminal: a command (``run``) or raw data."""
        try:
            if run:
                driver.run(text)
            else:
                driver.send(text)
        except ConnectionError:
            self.status(driver.node, "finished")
        except TerminalInputFull as exc:
            # Allowed and logged already; the terminal could not take it.
            # Said where the write's output would appear.
            self.output(driver.node, f"[{exc}]\n")

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

    # DriverHost: what drivers report, through their `_DriverReporter` (which drops
    # the reports of a driver no longer its node's), and what the world reports itself.
    def output(self, node: str, text: str) -> None:
        """Live output: sent as ``agents.onOutput`` (no state change stands behind it)."""
        if self._reports is not None:
            self._reports.driver_output(node, text)

    def replied(self, node: str, text: str, *, status: str = "waiting",
                length: int | None = None, note: str | None = None) -> None:
        """An agent's turn ended: `DriverReports.agent_replied`."""
        if self._reports is not None:
            self._later(self._reports.agent_replied(node, text, status=status, length=length,
                                                    note=note))

    def exited(self, node: str, code: int) -> None:
        """A command ended: `DriverReports.command_exited` (the ``exit`` port)."""
        if self._reports is not None:
            self._later(self._reports.command_exited(node, code))

    def status(self, node: str, status: str) -> None:
        """The node changed status on its own: `DriverReports.driver_status`."""
        if self._reports is not None:
            self._later(self._reports.driver_status(node, status))

    # -- calls ----------------------------------------------------------
    def perform(self, state: State, passed: Passed, args: dict[str, Any]
                ) -> Performed | Decision:
        """Carry out an allowed call: what it returns and what it changed; or the refusal
        it meets in the carrying out (a built-in card's content full: `too_full`)."""
        name = passed.spec.name
        target = passed.target
        if name == "agents.list":
            return Performed([self._describe(n) for n in state.canvas.nodes(passed.card.workspace)
                              if n.type in ("agent", "terminal")])
        if name == "agents.get":
            assert target is not None
            return Performed(self._describe(target))
        if name == "agents.readScreen":
            assert target is not None
            driver = self.drivers.get(target.id)
            return Performed(driver.screen() if driver else str(target.data.get("screen", "")))
        if name == "agents.lastReply":
            assert target is not None
            return Performed(str(target.data.get("last_reply", "")))
        if name == "agents.onOutput":
            assert target is not None
            return Performed({"subscribed": target.id}, (Watch(passed.card.id, target.id),))
        if name in ("terminals.run", "terminals.write"):
            assert target is not None
            return self.run(target, args.get("command", args.get("data", "")),
                            run=name == "terminals.run")
        if name.startswith("cards."):
            assert target is not None
            return self._card_content(name, target, args, passed,
                                      state.workspace_of(target).settings.content_max_bytes)
        if name == "clipboard.copyText":
            # Copied once its row is committed (`committed`): a failed commit copies nothing.
            return Performed(None, (Emit(Event("driver.clipboard", None,
                                               {"text": str(args["text"])})),))
        if name == "usage.get":
            tokens, cost = state.usage.get(passed.card.workspace, (0, 0.0))
            return Performed({"tokens": tokens, "cost": cost})
        if name == "canvas.spawn":
            return self._spawn(state, passed, str(args["kind"]))
        raise AssertionError(f"no way to perform {name}")  # the catalogue and this agree

    async def files(self, host: ScopeHost, passed: Passed, args: dict[str, Any]) -> Any:
        """Perform an allowed ``fs.*`` call (outside any store transaction).

        The handler does the file work off the event loop and returns an
        awaitable; a plain handler's value is taken as it is.
        """
        assert not isinstance(self.fs, _Default)
        value = self._scoped(self.fs, host, passed, args, "files")
        return await value if inspect.isawaitable(value) else value

    async def fetch(self, host: ScopeHost, passed: Passed, args: dict[str, Any]) -> Any:
        """Perform an allowed ``net.fetch`` (outside any store transaction)."""
        value = self._scoped(self.net, host, passed, args, "the network")
        return await value if inspect.isawaitable(value) else value

    @staticmethod
    def _scoped(handler: ScopeHandler | None, host: ScopeHost, passed: Passed,
                args: dict[str, Any], what: str) -> Any:
        if handler is None:
            return denial(passed.spec.name, passed.card.id, "SCOPE_REFUSED",
                          package=passed.package.name, permission=passed.permission,
                          reason="unavailable",
                          why=f"this engine has no confined access to {what}")
        return handler(host, passed, args)

    @staticmethod
    def _describe(node: Node) -> dict[str, Any]:
        return {"id": node.id, "type": node.type, "name": node.data.get("name", ""),
                "status": node.data.get("status", "waiting")}

    @staticmethod
    def _card_content(name: str, target: Node, args: dict[str, Any], passed: Passed,
                      limit: int) -> Performed | Decision:
        kind, verb = name.split(".")[1:]
        data = dict(target.data)
        if verb == "read":
            if kind in ("note", "sticky"):
                return Performed(data["text"])
            # A copy, so the card cannot change the canvas through it. What an older
            # version stored unchecked (an item that is not an object) is given as kept.
            return Performed(copy.deepcopy(data["items" if kind == "todo" else "tasks"]))
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
        full = too_full(passed, target, data, limit)
        if full is not None:
            return full
        return Performed(result, (SaveNode(Node(target.id, target.type, target.workspace, data)),))

    @staticmethod
    def _spawn(state: State, passed: Passed, kind: str) -> Performed:
        card = passed.card
        new_id, arrow_id = World._spawn_ids(state, card.id, kind)
        raw: dict[str, Any] = {"id": new_id, "spawned_by": card.id}
        if kind == "self":
            raw.update(type="card", package=card.data["package"], visible=True)
        else:
            raw["type"] = kind
        # The arrow is covered by the operator's grant of canvas.spawn (SPEC §4.5).
        return Performed(new_id, (AddNode(Node.build(raw, card.workspace)),
                                  AddArrow({"id": arrow_id, "from": card.id,
                                            "to": new_id})))

    @staticmethod
    def _spawn_ids(state: State, card: str, kind: str) -> tuple[str, str]:
        """The first free ``<card>.<kind><n>`` whose arrow ``<card>-><new id>`` is free too.

        A person may have given an arrow that id (drawn by hand, imported from a
        canvas file): skipping it keeps the call an answer, not a clash.
        """
        canvas = state.canvas
        n = 1
        while canvas.has_node(f"{card}.{kind}{n}") or \
                canvas.arrow(f"{card}->{card}.{kind}{n}") is not None:
            n += 1
        return f"{card}.{kind}{n}", f"{card}->{card}.{kind}{n}"

    # -- agents and terminals ---------------------------------------------
    def deliver(self, prompt: Prompt, agent: Node) -> Performed:
        """Hand a prompt to an agent: it is working on it, with its causal chain."""
        data = dict(agent.data)
        data["status"] = "working"
        data["chain"] = list(prompt.chain)
        if agent.id in self.drivers:
            return Performed(None, (
                Emit(Event("driver.prompt", None, {"node": agent.id, "text": prompt.text})),
                SaveNode(Node(agent.id, agent.type, agent.workspace, data))))
        # Inert, as a driver's screen echoes it (`Screen.echo`).
        _on_screen(data, f"> {visible(prompt.text)}\n")
        return delivered(Node(agent.id, agent.type, agent.workspace, data))

    def turn_ended(self, agent: Node, text: str, status: str = "waiting") -> Node:
        """The agent finished its turn: ``status`` (waiting again), with its last reply."""
        data = dict(agent.data)
        data.update(status=status, last_reply=text, chain=None)
        if agent.id not in self.drivers:
            _on_screen(data, text + "\n")
        return Node(agent.id, agent.type, agent.workspace, data)

    def run(self, terminal: Node, text: str, *, run: bool) -> Performed:
        """Type a command (``run``) or raw data into a terminal."""
        data = dict(terminal.data)
        # A driver starting claimed its terminal first: its input waits for it (`attach`).
        if terminal.id in self.drivers or isinstance(self._starting.get(terminal.id),
                                                     TerminalDriver):
            if run:
                data["status"] = "working"
            return Performed({"state": "sent"}, (
                Emit(Event("driver.input", None, {"node": terminal.id, "text": text, "run": run})),
                SaveNode(Node(terminal.id, terminal.type, terminal.workspace, data))))
        _on_screen(data, f"$ {text}\n" if run else text)
        return Performed({"state": "ok"},
                         (SaveNode(Node(terminal.id, terminal.type, terminal.workspace, data)),))

    @staticmethod
    def terminal_output(terminal: Node, text: str, exit: int | None) -> Node:
        """Text appears on a terminal's screen; ``exit`` ends it with that code."""
        data = dict(terminal.data)
        _on_screen(data, text)
        if exit is not None:
            data["exit"] = exit
            data["status"] = "finished"
        return Node(terminal.id, terminal.type, terminal.workspace, data)


class _DriverReporter:
    """The `DriverHost` one driver reports to: the world, for as long as that driver
    drives its node (`World.drives`). Reports name the node; this names the driver.
    A report for another node than the driver's is dropped too."""

    def __init__(self, world: World, driver: Driver) -> None:
        self._world = world
        self._driver = driver

    def _own(self, node: str) -> bool:
        return node == self._driver.node

    def output(self, node: str, text: str) -> None:
        """Live output, while this driver drives the node."""
        if self._own(node) and self._world.drives(self._driver):
            self._world.output(node, text)

    def replied(self, node: str, text: str, *, status: str = "waiting",
                length: int | None = None, note: str | None = None) -> None:
        """The agent's turn ended (`DriverReports.agent_replied`)."""
        if self._own(node):
            self._world.report(self._driver, lambda reports: reports.agent_replied(
                node, text, status=status, length=length, note=note))

    def exited(self, node: str, code: int) -> None:
        """A command ended (`DriverReports.command_exited`)."""
        if self._own(node):
            self._world.report(self._driver,
                               lambda reports: reports.command_exited(node, code))

    def status(self, node: str, status: str) -> None:
        """The node's status changed on its own (`DriverReports.driver_status`)."""
        if self._own(node):
            self._world.report(self._driver,
                               lambda reports: reports.driver_status(node, status))
