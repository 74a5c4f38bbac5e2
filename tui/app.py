"""The arrowgate TUI: see and give consent (SPEC §10).

The App holds the engine it was given (it never opens one itself), the
operator check it must pass before any consent action, and the live feed:
the engine's events in this process and the store's changes from other
processes both arrive as `EngineChanged` messages, which the active screen
turns into a refresh. Four screens are modes (canvas, arrow log, holds,
packages and grants); the install review, confirmations, row details and
the help are pushed over them.
"""

from __future__ import annotations

import asyncio
import gc
import shlex
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, TypeVar, cast

from textual import on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.command import CommandPalette
from textual.dom import DOMNode
from textual.driver import Driver
from textual.notifications import SeverityLevel
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import Worker, WorkerState, get_current_worker

from engine import ConsentError, Engine, Event, StoreFailed, Verification
from engine.app.verifier import verify_in_a_process
from engine.effects.operator import OperatorCheck, operator_check
from engine.effects.threadwork import DaemonPool
from engine.store.logindex import is_store_url

from .commands import ArrowgateCommands, GuardedCommandPalette
from .dbfile import damage, identity
from .keymap import KeymapProblem, keymap_problems
from .keys import bindings_of
from .messages import EngineChanged
from .screens.arrow_log import ArrowLogScreen
from .screens.base import STORE_ERRORS
from .screens.canvas import CanvasScreen
from .screens.checking import CheckingScreen
from .screens.grants import GrantsScreen
from .screens.help import HelpScreen
from .screens.holds import HoldsScreen
from .screens.prompts import PromptsScreen
from .screens.review import ManifestFile, ReviewScreen
from .text import plain, visible

__all__ = ["ArrowgateApp"]

T = TypeVar("T")

#: Why consent actions are refused until the operator check first answers.
LOOKING = "the operator check has not answered yet (is a person operating arrowgate?)"


class ArrowgateApp(App[int]):
    """The TUI over one engine.

    Args:
        engine: the engine to show and act on (its database is the app's).
        db_path: the database file or PostgreSQL store URL (the log view
            reads it on connections of its own); by default the engine's.
        operator: decides that a person operates the app (SPEC §4.5);
            injected by tests, the real check otherwise.
        keymap: binding id → keys, applied over the defaults; one that would make
            consent easier to give than the defaults is refused (`tui.keymap`).
        start: the screen to open on (``canvas``, ``log``, ``holds``, ``grants``,
            ``prompts``).
        review: at start, the install review of an offered package (its name),
            or the review of a manifest file of an installed package, to read.
        driver_class: Textual's driver (`tui.tty.terminal_driver` reads keys
            from the terminal when standard input is not one).

    Raises:
        ValueError: ``keymap`` puts a consent key where it could be pressed by
            accident (`keymap_refusals`); the message names each binding and key.
    """

    TITLE = "arrowgate"
    CSS_PATH = "app.tcss"
    COMMANDS: ClassVar = {ArrowgateCommands}
    MODES: ClassVar = {"canvas": CanvasScreen, "log": ArrowLogScreen, "holds": HoldsScreen,
                       "grants": GrantsScreen, "prompts": PromptsScreen}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "switch_mode('canvas')", "Canvas", id="screen.canvas",
                tooltip="Nodes, arrows and who can reach what"),
        Binding("2", "switch_mode('log')", "Arrow log", id="screen.log",
                tooltip="Every decision, per arrow, with filters"),
        Binding("3", "switch_mode('holds')", "Holds", id="screen.holds",
                tooltip="Prompts waiting for a person"),
        Binding("4", "switch_mode('grants')", "Grants", id="screen.grants",
                tooltip="Packages, their permissions and the consent history"),
        Binding("5", "switch_mode('prompts')", "Prompts", id="screen.prompts",
                tooltip="Every prompt's state and the agent's reply"),
        Binding("question_mark,f1", "help", "Help", id="app.help",
                tooltip="Every key binding and its id"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", tooltip="Leave arrowgate",
                priority=True),
        # Quitting always works, also read-only and with input from /dev/tty: q where
        # no text box takes the key, ctrl+c everywhere (Textual's default only hints).
        Binding("q", "quit", "Quit", show=False, id="app.quit_q",
                tooltip="Leave arrowgate (where no text box has the focus)"),
        Binding("ctrl+c", "quit", "Quit", show=False, id="app.quit_ctrl_c", priority=True,
                tooltip="Leave arrowgate"),
    ]

    pending_holds: reactive[int] = reactive(0)
    #: Seconds the store must stay quiet after a reload before the heap is frozen again.
    REFREEZE_S: ClassVar[float] = 2.0
    #: Seconds between two looks at whether a person operates the app (`recheck_operator`).
    OPERATOR_RECHECK_S: ClassVar[float] = 2.0
    #: Seconds a consent action waits for the operator check before it is refused.
    OPERATOR_WAIT_S: ClassVar[float] = 5.0

    def __init__(self, engine: Engine, *, db_path: str | None = None,
                 operator: Callable[[], OperatorCheck] = operator_check,
                 keymap: dict[str, str] | None = None, start: str = "canvas",
                 review: str | ManifestFile | None = None,
                 driver_class: type[Driver] | None = None) -> None:
        _refuse_easier_consent(keymap or {})
        super().__init__(driver_class=driver_class)
        self.engine = engine
        path = db_path or engine.store.file or getattr(engine.store, "dsn", None)
        if path is None:
            raise ValueError("the TUI needs an engine on a database file or a PostgreSQL store")
        #: The SQLite file, or the PostgreSQL store's URL: where the log view reads.
        self.db_path = path
        on_server = is_store_url(path)
        #: The store as messages name it (a URL's password hidden).
        self.db_label = path
        if on_server:
            from engine.store.pg.parts import redact

            self.db_label = redact(path)
        anchor = getattr(engine.store, "anchor", None) if on_server else None
        #: The log's anchor file: beside the database, or this machine's anchor
        #: of the PostgreSQL store (`engine.store.pg.anchoring`); None for none.
        self.anchor_path: str | None = (str(anchor.path) if anchor is not None else None) \
            if on_server else path + ".anchor"
        #: Why the database file cannot be trusted any more (removed, replaced), or "".
        self.store_problem = ""
        # A server's database is no file to watch: its failures surface as errors.
        self._db_identity = None if on_server else identity(path)
        self.operator = operator
        self._start = start
        self._review = review
        self._keymap = keymap or {}
        self._clashes: set[str] = set()
        #: Threads the operator check runs in, off the app's thread (`_ask_operator`).
        self._looks = DaemonPool(4, "arrowgate-operator-check")
        #: The wait over the screens while a consent action waits for the check.
        self._checking: CheckingScreen | None = None
        #: The consent action under way (``hold: approve``), or None: one at a time.
        self._consenting: str | None = None
        #: Why consent actions are refused (shown on every screen), or "". Until the first
        #: look answers (`recheck_operator`, started on mount), it cannot tell.
        self.operator_refusal = LOOKING
        #: What `log verify` found wrong with the store (shown on every screen), "" for
        #: nothing, None until the verification started on mount (`verify_store`) answers.
        self.log_finding: str | None = None
        self._stop_timers = asyncio.Event()
        self._froze = False  # whether this app moved the heap out of the collector's scans
        self._drawn = False  # whether the first screen was drawn (then the heap is frozen)
        self._refreeze: Timer | None = None
        self._previous_sink = previous = engine.sink

        def sink(event: Event) -> None:
            if previous is not None:
                previous(event)
            self.post_message(EngineChanged(event.type))

        engine.sink = sink

    # -- start and live feed ------------------------------------------------
    def on_mount(self) -> None:
        if self._keymap:
            unknown = sorted(set(self._keymap) - binding_ids())
            if unknown:
                self.notify(f"keymap: no binding with the id {', '.join(unknown)}; press ? "
                            "for every binding and its id", title="Keymap",
                            severity="warning", timeout=20)
            known = {k: v for k, v in self._keymap.items() if k not in unknown}
            for clash in keymap_clashes(known):
                self.notify(f"keymap: these bindings share a key, only one of them works: "
                            f"{clash}", title="Keymap", severity="warning", timeout=20)
            self.set_keymap(known)
        self.switch_mode(self._start)
        self._count_holds()
        self.set_interval(1.0, self.check_store_file)
        self.recheck_operator()  # the first look: off the app's thread, as every one
        self.set_interval(self.OPERATOR_RECHECK_S, self.recheck_operator)
        self.watch_store()
        self.run_engine_timers()
        if self._start != "log":  # the arrow log verifies as it opens, and says it here
            self.verify_store()
        if self._review is not None:
            self.push_screen(ReviewScreen(self._review))

    def set_keymap(self, keymap: Mapping[str, str]) -> None:
        """Textual's `set_keymap`, refusing a keymap that makes consent easier to give.

        Raises:
            ValueError: as `ArrowgateApp` does; the keymap in use is kept.
        """
        _refuse_easier_consent(keymap)
        super().set_keymap(keymap)

    def update_keymap(self, keymap: Mapping[str, str]) -> None:
        """Textual's `update_keymap`, checked as `set_keymap` is, merged keymap and all."""
        _refuse_easier_consent({**self._keymap, **keymap})
        super().update_keymap(keymap)

    def first_drawn(self) -> None:
        """The first screen's data is on screen: freeze the heap (once)."""
        if not self._drawn:
            self._drawn = True
            self.freeze_heap()

    def freeze_heap(self) -> None:
        """Move what lives now (the engine's state, the screens) out of the collector's scans.

        With a canvas of 100,000 nodes the process holds about a million
        objects; each full collection of the cyclic garbage collector walks
        them all and stopped the app for up to a second, now and then, under
        the keys a person pressed. What exists once the first screen is drawn
        lives as long as the app (what `arrowgate serve` does too, and for the
        same reason). The one full collection this takes (0.4 s at 100,000
        nodes) runs once the first screen is drawn, not before. The heap is
        given back to the collector when the store is reloaded (`thaw_heap`)
        and when the app ends.
        """
        self._refreeze = None
        gc.collect()
        gc.freeze()
        self._froze = True

    def thaw_heap(self) -> None:
        """The engine reloaded its state: let the collector have the old one.

        The old state holds cycles (its canvas refers back to it), so, frozen,
        it would never be freed. The heap is frozen again once the store has
        been quiet for two seconds, not after each reload: another process may
        commit many times a second.
        """
        if self._froze:
            gc.unfreeze()
            self._froze = False
        if self._refreeze is not None:
            self._refreeze.stop()
        self._refreeze = self.set_timer(self.REFREEZE_S, self.freeze_heap)

    def handle_bindings_clash(self, clashed_bindings: set[Binding], node: DOMNode) -> None:
        """A keymap gave one key to two bindings: say which, once per clash."""
        names = ", ".join(sorted(f"{b.id or b.action} ({b.key})" for b in clashed_bindings))
        if names not in self._clashes:
            self._clashes.add(names)
            self.notify(f"keymap: these bindings share a key, only one of them works: {names}",
                        title="Keymap", severity="warning", timeout=20)

    @work(exclusive=True, group="engine-events", exit_on_error=False,
          description="watch the store for other processes")
    async def watch_store(self) -> None:
        """Other processes' commits (a canvas app approving, an engine logging)."""
        async for _revision in self.engine.changes(interval=0.25):
            self.thaw_heap()  # each revision is a reload of the engine's state
            self.post_message(EngineChanged("store"))

    @work(exclusive=True, group="engine-timers", exit_on_error=False,
          description="expire holds on time")
    async def run_engine_timers(self) -> None:
        """Holds expire on time while the TUI is open, not only at the next call."""
        await self.engine.run_timers(self._stop_timers)

    @on(EngineChanged)
    def _engine_changed(self, message: EngineChanged) -> None:
        self._count_holds()
        # The current mode's screens; the others catch up when resumed.
        for screen in self.screen_stack:
            screen.post_message(EngineChanged(message.what))

    def _count_holds(self) -> None:
        try:
            self.pending_holds = len(self.engine.prompts(state="held"))
        except STORE_ERRORS as exc:
            self.store_failed(exc)

    def check_store_file(self) -> None:
        """Notice a database file removed, replaced or overwritten under the app (once).

        The engine's connection still reads and writes the old, unlinked file, or
        pages it cached of a file overwritten since: consent given now would be held
        by this app alone, so consent actions are refused until the app is restarted
        on a database that every program can read (`tui.dbfile`).
        """
        if self.store_problem or is_store_url(self.db_path):
            return
        now = identity(self.db_path)
        if now is None:
            problem = f"the database {self.db_label} was removed"
        elif now != self._db_identity:
            problem = f"the database {self.db_label} was replaced by another file"
        elif why := damage(self.db_path):
            problem = f"the database {self.db_label} {why}"
        else:
            return
        self.store_problem = problem
        self.notify(f"{self.store_problem} while arrowgate was open. What is shown may be out "
                    "of date and consent actions are refused; restart arrowgate.",
                    title="Database error", severity="error", timeout=30)

    def store_failed(self, exc: BaseException) -> None:
        """The database cannot be read (removed, replaced, corrupted): say so, stay up."""
        self.notify(f"the database {self.db_label} cannot be read: {exc}. What is shown may "
                    "be out of date; consent actions fail until it is readable again.",
                    title="Database error", severity="error", timeout=15)

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """A toast; its text is never markup and its control characters are made visible.

        Messages carry card, package and host names and engine errors quoting
        them; ``markup`` is accepted for Textual's signature and ignored.
        """
        super().notify(visible(message), title=visible(title), severity=severity,
                       timeout=timeout, markup=False)

    def set_read_only(self, reason: str) -> None:
        """The operator check refused (``reason``): hide and disable every consent key;
        ``""`` once it passes again: offer them again (each action checks anew)."""
        self.operator_refusal = reason
        for screen in self.screen_stack:
            screen.refresh_bindings()
        self._show_banner()

    def banner(self) -> str:
        """What every screen's header says beside its name: a finding of `log verify`,
        then why the app is read-only; "" for neither."""
        # The finding short (its message and the arrow log's label say it whole), so the
        # read-only reason after it still fits the header's line.
        said = ["log verify FAILED: the store was changed outside arrowgate"
                if self.log_finding else "",
                "read-only: " + self.operator_refusal if self.operator_refusal else ""]
        return " · ".join(part for part in said if part)

    def _show_banner(self) -> None:
        for screen in self.screen_stack:
            for banner in screen.query("#operator-banner").results(Static):
                banner.update(plain(self.banner()))

    @work(exclusive=True, group="verify-store", exit_on_error=False,
          description="verify the store")
    async def verify_store(self) -> None:
        """Verify the store (`log verify`, in a process of its own) once the app starts.

        The screens show what the store holds: a grant written into it by hand shows as
        granted, rows edited by hand as logged, and a change made around the change feed
        (its triggers dropped) is not even followed live. `log verify` finds them; its
        finding stands in every screen's header, as a person may never open the arrow log.
        """
        self.store_verified(await verify_in_a_process(self.db_path))

    def store_verified(self, result: Verification) -> None:
        """Show what a verification of the whole store found (this app's at start, or the
        arrow log's ``V``): a finding in every header and once as a message; none clears it."""
        finding = "" if result.ok else f"log verify FAILED: {result.problem}"
        if finding and finding != self.log_finding:
            self.notify(f"{finding}. The store was changed outside arrowgate: what is shown "
                        "(grants, packages, log rows) may not be what a person consented to or "
                        "what happened; `arrowgate log verify` names it.",
                        title="Store altered", severity="error", timeout=30)
        self.log_finding = finding
        self._show_banner()

    @work(exclusive=True, group="operator", exit_on_error=False,
          description="look whether a person operates the app")
    async def recheck_operator(self) -> None:
        """Look again whether a person operates the app, and follow it.

        Some refusals pass with time (a tmux session a person attaches to after
        starting the TUI in it, a window shown again) and some come (a client
        attached from an agent): the keys offered follow the check. Lifting
        read-only offers the keys only; every consent action checks again itself.
        The check runs in a thread (`_ask_operator`): it may ask a tmux server, which
        may be slow to answer.
        """
        check = await self._ask_operator()
        self._look_ended(get_current_worker(), "" if check.ok else check.reason)

    def _look_ended(self, look: Worker[None], reason: str) -> None:
        """Follow a `recheck_operator` look's verdict, unless a newer look started since
        (a slow tmux server): the group is exclusive, so starting it cancelled this one,
        and an older verdict must not stand over the newer one's. On the app's thread,
        so no newer look's verdict can come between the test and the change."""
        if not look.is_cancelled and reason != self.operator_refusal:
            self.set_read_only(reason)

    @on(Worker.StateChanged)
    def worker_failed(self, event: Worker.StateChanged) -> None:
        """The one place worker errors surface.

        A worker's state change does not bubble: screens and widgets forward
        theirs here, so a failing read (a database gone bad) is never silent.
        """
        if event.state == WorkerState.ERROR and isinstance(event.worker.error, STORE_ERRORS):
            self.store_failed(event.worker.error)
        elif event.state == WorkerState.ERROR and event.worker.error is not None:
            self.notify(f"{event.worker.description or event.worker.name}: "
                        f"{event.worker.error}", title="Background task failed",
                        severity="error", timeout=10)

    async def on_unmount(self) -> None:
        self._stop_timers.set()
        self._looks.shutdown(wait=False, cancel_futures=True)
        if self._froze:  # the process may go on without the app (the demo, tests)
            gc.unfreeze()
            self._froze = False
        # The engine may outlive the app (the demo): give its events back.
        self.engine.sink = self._previous_sink

    # -- consent actions ----------------------------------------------------
    async def consent(self, what: str, action: Callable[[], Awaitable[T]]) -> T | None:
        """Run a consent action only when a person operates the app.

        Refusals (the operator check, or the engine's own) are shown, never raised.
        The operator check is asked off the app's thread (`look_before_consent`): the
        app draws meanwhile, and the keys pressed meanwhile are no consent. One consent
        action runs at a time: another one started meanwhile (a key read twice before
        the wait was drawn) is not done, and said so; the wait and the dialog stay the
        first one's.
        """
        if self._consenting is not None:
            self.notify(f"{what}: not done — {self._consenting} is still under way",
                        title="Not done", severity="warning", timeout=10)
            return None
        self._consenting = what
        try:
            return await self._consent(what, action)
        finally:
            self._consenting = None

    async def _consent(self, what: str, action: Callable[[], Awaitable[T]]) -> T | None:
        # The file as other programs see it, now: not as it was at the last tick.
        self.check_store_file()
        if self.store_problem:
            self.notify(f"{what}: refused, not done — {self.store_problem}",
                        title="Database error", severity="error", timeout=15)
            return None
        check = await self.look_before_consent(what)
        if check is None:
            self.notify(f"{what}: cancelled, not done", title="Cancelled", timeout=10)
            return None
        if not check.ok:
            self.set_read_only(check.reason)
            self.notify(f"{what}: refused — {check.reason}", title="Not operated by a person",
                        severity="error", timeout=15)
            return None
        try:
            result = await action()
        except StoreFailed as exc:
            # No refusal: the store could not take it (another program holding the
            # database's lock, a lost server), and the message says what stands.
            self.notify(exc.message, title=f"{what}: not done", severity="error",
                        timeout=15)
            return None
        except ConsentError as exc:
            self.notify(exc.message, title=f"{what}: refused", severity="error", timeout=10)
            return None
        except STORE_ERRORS as exc:
            self.notify(f"{what}: not done — the database {self.db_label} failed: {exc}",
                        title="Database error", severity="error", timeout=15)
            return None
        self.post_message(EngineChanged(what))
        return result

    async def look_before_consent(self, what: str) -> OperatorCheck | None:
        """The operator check for the consent action ``what``; None when the person
        cancelled it while it waited.

        The check runs in a thread (it may ask a tmux server, three commands of up to
        five seconds each) while `CheckingScreen` stands over the screens: it takes
        every key, so none pressed while waiting reaches a dialog to be taken as
        consent once the answer comes. An answer not come within `OPERATOR_WAIT_S`
        seconds refuses: the check could not tell.
        """
        wait = CheckingScreen(what)
        self._checking = wait
        look = asyncio.ensure_future(self._ask_operator())
        cancel = asyncio.ensure_future(wait.cancelled.wait())
        try:
            # Not awaited: its mount is done on the app's turn, while this one waits.
            self.push_screen(wait)
            await asyncio.wait((look, cancel), timeout=self.OPERATOR_WAIT_S,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancel.cancel()
            answered = look.done()
            if not answered:
                look.cancel()  # its thread ends on its own; its answer is not waited for
            self._checking = None
            if self.screen is wait:
                self.pop_screen()  # off the stack now; what shows it goes on the app's turn
        if wait.cancelled.is_set():
            return None
        if not answered:
            return OperatorCheck(False, f"the operator check did not answer in time (within "
                                        f"{self.OPERATOR_WAIT_S:g} s), so it cannot tell "
                                        "whether a person operates arrowgate")
        return look.result()

    async def _ask_operator(self) -> OperatorCheck:
        """`operator` in a daemon thread of the app's own (`engine.effects.threadwork.DaemonPool`):
        one stuck on a server that never answers is given up on, never waited for at exit."""
        try:
            job = self._looks.submit(self.operator)
        except RuntimeError as exc:  # the pool was shut down: the app is ending
            return OperatorCheck(False, f"the operator check could not run: {exc}")
        return await asyncio.wrap_future(job)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While a consent action waits for the operator check, nothing but quitting
        runs: no other screen or mode, help or palette is opened over the wait."""
        if self._checking is not None and action != "quit":
            return False
        return True

    # -- navigation -----------------------------------------------------------
    def action_command_palette(self) -> None:
        """The command palette, guarded against Textual's fast-typing errors."""
        if self.use_command_palette and not CommandPalette.is_open(cast("App[object]", self)):
            self.push_screen(GuardedCommandPalette(id="--command-palette"))

    def action_help(self) -> None:
        """Show every binding of the app and the current screen."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def keys_for(self, binding: Binding) -> str:
        """The keys ``binding`` has now: the person's keymap's, else its own
        (`tui.keys.key_hint` reads them for a dialog's hints)."""
        return self._keymap.get(binding.id, binding.key) if binding.id else binding.key

    def open_log(self, **filters: Any) -> None:
        """Switch to the arrow log with these filters (``arrow=``, ``card=``, ...)."""
        self.switch_mode("log")
        screen = self.screen
        if isinstance(screen, ArrowLogScreen):
            screen.apply_filter(" ".join(f"{k}:{shlex.quote(str(v))}"
                                         for k, v in filters.items()))


def binding_ids() -> set[str]:
    """The id of every binding of the app, its screens, dialogs and widgets."""
    return {b.id for owner in _binding_owners() for b in bindings_of(owner) if b.id}


def keymap_refusals(keymap: Mapping[str, str]) -> list[KeymapProblem]:
    """What in ``keymap`` would make consent easier to give than the default keys
    (`tui.keymap`): a consent key on a moving key, on another binding's key, a
    high-risk one on a plain key. Empty when the keymap may be used."""
    from textual.containers import VerticalScroll
    from textual.widgets import DataTable

    from .screens.arming import ArmedDialog

    return keymap_problems(keymap, _binding_owners(), dialogs=(ArmedDialog,),
                           widgets=(VerticalScroll, DataTable))


def _refuse_easier_consent(keymap: Mapping[str, str]) -> None:
    problems = keymap_refusals(keymap)
    if problems:
        raise ValueError("the keymap would make consent easier to give by accident: "
                         + "; ".join(map(str, problems)))


def keymap_clashes(keymap: dict[str, str]) -> list[str]:
    """Keys that ``keymap`` gives to two bindings of one screen (or the app), described.

    Textual's own check misses a clash with a binding the keymap leaves alone,
    so the app looks for them itself, once, at start.
    """
    app_bindings = bindings_of(ArrowgateApp)
    found: list[str] = []
    for owner in _binding_owners():
        by_key: dict[str, set[str]] = {}
        scope = bindings_of(owner) + ([] if owner is ArrowgateApp else app_bindings)
        for binding in scope:
            name = binding.id or binding.action
            keys = keymap.get(binding.id, binding.key) if binding.id else binding.key
            for key in (k.strip() for k in keys.split(",")):
                by_key.setdefault(key, set()).add(name)
        for key, names in sorted(by_key.items()):
            if len(names) > 1 and names & set(keymap):
                clash = f"{key}: " + ", ".join(sorted(names))
                if clash not in found:
                    found.append(clash)
    return found


def _binding_owners() -> list[type[DOMNode]]:
    from .screens.confirm import ConfirmScreen
    from .screens.detail import DetailScreen
    from .screens.hold import HoldScreen
    from .screens.map import MapScreen
    from .screens.request import RequestScreen
    from .widgets.log_view import LogView

    return [ArrowgateApp, CanvasScreen, ArrowLogScreen, HoldsScreen, GrantsScreen,
            PromptsScreen, HelpScreen, ReviewScreen, ConfirmScreen, DetailScreen, HoldScreen,
            RequestScreen, MapScreen, LogView]
