"""A card's request for an optional permission, answered by a person (SPEC §4.2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.events import Resize
from textual.widgets import DataTable, Static
from textual.widgets.data_table import ColumnKey

from engine import PERMISSIONS, Manifest
from engine.core.review import permission_title

from ..keys import key_hint
from ..messages import EngineChanged
from ..text import ident, plain, quoted
from ..widgets.key_footer import KeyFooter
from .arming import ArmedDialog
from .base import row_key
from .seen import SeenWhole

if TYPE_CHECKING:
    from ..app import ArrowgateApp

__all__ = ["RequestScreen"]



class _PermissionText(Static):
    """The chosen permission's text: its dialog learns when it is laid out anew."""

    def on_resize(self) -> None:
        screen = self.screen
        if isinstance(screen, RequestScreen):
            screen.text_laid_out()


class RequestScreen(ArmedDialog):
    """The optional permissions a card's package declares; allow or deny the selected one.

    The engine tells the card the answer either way and records it in the
    consent history; it refuses the request when the card is not on screen
    (``not-visible``). A high-risk permission is allowed only with shift+y, and
    allowing works once the dialog has been on screen a moment (`tui.screens.arming`)
    and the chosen permission's whole text (its hosts, what users see) has been on
    screen (`tui.screens.seen`: a text taller than the dialog scrolls, tab to it);
    a permission chosen anew is read anew. Denying and closing work at once.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Allow", id="request.allow",
                tooltip="Allow the selected optional permission"),
        Binding("Y", "allow_high", "Allow high risk (shift+y)", id="request.allow_high",
                tooltip="Allow a high-risk optional permission"),
        Binding("n", "answer(False)", "Deny", id="request.deny",
                tooltip="Deny: the card is told no"),
        Binding("escape", "close", "Close", id="request.close", priority=True,
                tooltip="Close without answering"),
        # Ahead of the scroll view's own end key (priority), which animates the view
        # through every line in a blink: each would count as seen.
        Binding("end,G", "to_end", "To the end", id="request.end", priority=True,
                tooltip="Jump to the end of the text (what it skips still has to be read)"),
    ]

    def __init__(self, card: str) -> None:
        super().__init__()
        self.card = card
        #: The version the dialog shows (its manifest and content hash), taken when it
        #: opens: the answer names it, so a version approved meanwhile is ``stale``.
        self._manifest: Manifest | None = None
        self._hash: str | None = None
        self._whole = SeenWhole(self._seen_view, self._seen_whole)
        self._shown: str | None = None  #: the permission whose text is shown
        #: Whom the text shown says an allow grants to (`_who_gets_it`), or None.
        self._who_said: str | None = None
        #: The text was changed and is not laid out yet: its rows are not the old ones.
        self._relaying = False
        #: Each permission's "now" cell as shown (``granted`` / ``not granted``), and the
        #: column's key: the cells follow the package's grants (`_follow_grants`).
        self._now: dict[str, str] = {}
        self._now_column: ColumnKey | None = None

    @property
    def all_seen(self) -> bool:
        """Whether every line of the chosen permission's text has been on screen."""
        return self._whole.done

    @property
    def gate(self) -> ArrowgateApp:
        """The app, typed."""
        return cast("ArrowgateApp", self.app)

    def compose(self) -> ComposeResult:
        # Always at its full height (``tall``), the text scrolling in what is left: the
        # text changes with the permission chosen, and a dialog that grew with it could
        # run past the screen's edge, its last rows where no scrolling shows them.
        with Vertical(id="dialog", classes="tall"):
            yield Static(plain(f"Card {quoted(self.card)} asks for a permission"),
                         classes="dialog-title")
            yield DataTable(id="requests", cursor_type="row")
            with VerticalScroll(classes="dialog-scroll", id="request-scroll"):
                yield _PermissionText("", id="request-text")
            yield Static("", id="request-keys", classes="dialog-keys")
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#requests", DataTable)
        self._now_column = table.add_columns("permission", "risk", "now")[2]
        engine = self.gate.engine
        node = engine.state.canvas.node(self.card)
        pkg = engine.state.packages.get(str(node.data.get("package"))) if node else None
        granted = engine.state.grants.get(pkg.name, set()) if pkg else set()
        if pkg is not None:
            self._manifest, self._hash = pkg.manifest, pkg.hash
        for name in sorted(pkg.manifest.optional) if pkg and pkg.manifest else ():
            self._now[name] = _now_word(name, granted)
            table.add_row(name, PERMISSIONS[name].risk, self._now[name], key=name)
        if not table.row_count:
            self.query_one("#request-text", Static).update(plain(
                f"The package of {quoted(self.card)} declares no optional permission: "
                "there is nothing it may ask for."))
        table.focus()
        self.watch(self.query_one("#request-scroll", VerticalScroll), "scroll_y",
                   self._whole.note, init=False)
        self._show()

    @on(Resize)
    def _resized(self) -> None:
        self.call_after_refresh(self._whole.note)

    def text_laid_out(self) -> None:
        """Note what is on screen once the chosen permission's text is laid out: until
        then its widget has the last text's height, and rows counted in it would be
        the wrong rows. Called after the text changed, and on each of its resizes."""
        if not self._relaying:
            self._whole.note()
            return
        text = self.query_one("#request-text", Static)
        width = text.content_region.width
        needed = text.get_content_height(self.query_one("#request-scroll", VerticalScroll).size,
                                         self.app.size, width)
        if width and text.content_region.height == needed:
            self._relaying = False
            self._whole.note()
        # Else its Resize, once laid out, calls again (a text never laid out stays unseen).

    @on(EngineChanged)
    def _follow_grants(self) -> None:
        """The "now" column says the package's grants as they are: a grant or a revoke
        made elsewhere while the dialog is open (another program, the grants screen of
        another app) changes what an answer does (an allow of a permission revoked
        meanwhile grants it anew; a deny of one granted meanwhile takes nothing back).
        Changed under the cursor, the allow key waits to be read again. The card or its
        version gone, the dialog closes (`_close_if_gone`)."""
        if self._dismissed or self._manifest is None or self._now_column is None:
            return
        if not self._answering and self._close_if_gone():
            return
        self._follow_cards()
        granted = self.gate.engine.state.grants.get(self._manifest.name, set())
        table = self.query_one("#requests", DataTable)
        changed: list[str] = []
        for name, shown in self._now.items():
            now = _now_word(name, granted)
            if now != shown:
                self._now[name] = now
                table.update_cell(name, self._now_column, now)
                changed.append(name)
        if not changed:
            return
        if self.selected() in changed:
            self.rearm()
        self._show_keys()
        self.refresh_bindings()
        said = "; ".join(f"{name} is {self._now[name]} now" for name in changed)
        self.notify(f"{self._manifest.name}: {said} (granted or revoked elsewhere while "
                    "the dialog was open)", title="request: answer",
                    severity="warning", timeout=10)

    def _follow_cards(self) -> None:
        """The text says whom an allow grants to as it is: a card of the package added or
        removed elsewhere while the dialog is open changes it (an allow then grants to a
        card the text did not name). Said anew, it is read anew from its top, and the
        allow key waits to be read again."""
        if self._shown is None or self._answering or self._who_gets_it() == self._who_said:
            return
        name = self._show_anew()
        package = self._manifest.name if self._manifest is not None else "its package"
        self.notify(f"{package}: the cards an allow of {name} grants to changed "
                    "while the dialog was open (a card added or removed elsewhere); read "
                    "it again", title="request: answer", severity="warning", timeout=10)

    def _show_anew(self) -> str | None:
        """Show the chosen permission's text again, from its top, as if chosen anew, and
        let the allow key wait to be read again. Returns the permission."""
        name, self._shown = self._shown, None
        self._show()
        self.rearm()
        return name

    def _close_if_gone(self) -> bool:
        """Close, saying why, once what the dialog asks about is gone elsewhere: the card
        removed from its canvas, or its package at another version than the one shown
        (approved or removed meanwhile). Its allow key must not stay offered: the engine
        would refuse the answer (the card unknown, the version ``stale``), and the text
        says whom a grant goes to as it was. Not while an answer given here is under
        way: it ends the dialog and says how itself. Returns whether it closed."""
        assert self._manifest is not None
        engine = self.gate.engine
        node = engine.state.canvas.node(self.card)
        pkg = engine.state.packages.get(self._manifest.name)
        if node is None or node.type != "card":
            why = f"card {quoted(self.card)} was removed from its canvas"
        elif pkg is None or not pkg.installed:
            why = f"{self._manifest.name} is no longer installed"
        elif pkg.hash != self._hash:
            why = (f"{self._manifest.name} is at another version now (hash {pkg.hash}; the "
                   f"dialog showed {self._manifest.version}, hash {self._hash})")
        else:
            return False
        self.close_as_gone(f"{why} elsewhere while its request dialog was open; the dialog "
                           "is closed and the request was not answered",
                           title="request: answer")
        return True

    def _seen_view(self) -> tuple[VerticalScroll, Static] | None:
        """The chosen permission's text; nothing while none is chosen, or while its text,
        just changed, is not laid out yet (the rows on screen are the last text's)."""
        if self._shown is None or self._relaying:
            return None
        return (self.query_one("#request-scroll", VerticalScroll),
                self.query_one("#request-text", Static))

    def _seen_whole(self) -> None:
        self._show_keys()
        self.refresh_bindings()

    def action_to_end(self) -> None:
        """Scroll to the end of the text."""
        self.query_one("#request-scroll", VerticalScroll).scroll_end(animate=False)

    def selected(self) -> str | None:
        """The optional permission under the cursor."""
        return row_key(self.query_one("#requests", DataTable))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show()

    def _show(self) -> None:
        name = self.selected()
        if name != self._shown:
            # Another permission's text: read it anew, from its top, once laid out (until
            # then the rows on screen are the last text's).
            self._shown = name
            self._whole.restart()
            self._relaying = True
            self.query_one("#request-scroll", VerticalScroll).scroll_home(animate=False)
        if name is None:
            self._show_keys()
            return
        spec = PERMISSIONS[name]
        shown = self._manifest  # the version the answer names, not one approved since
        title = permission_title(shown, name) if shown is not None else spec.title
        version = f"{shown.name} {shown.version}: " if shown is not None else ""
        self._who_said = self._who_gets_it()
        text = Text.assemble(plain(f"{version}{name} ({spec.risk} risk): {title}\nUsers "
                                   f"see: {spec.users_see}\n{self._who_said}",
                                   multiline=True))
        if spec.risk == "high":
            text.append("\nRISK: ", style="bold red")
            text.append_text(plain(f"{name} is high risk; allowing it takes "
                                   f"{key_hint(self, 'request.allow_high')}."))
        self.query_one("#request-text", Static).update(text)
        self._show_keys()
        self.refresh_bindings()
        self.call_after_refresh(self.text_laid_out)

    def _who_gets_it(self) -> str:
        """Whom an allow gives the permission to: a grant is the package's (SPEC §4.1), so
        every card of it on every canvas, not only the card that asked."""
        if self._manifest is None:
            return ""
        package = self._manifest.name
        cards = [f"{ident(n.id)} on {ident(n.workspace)}"
                 for n in self.gate.engine.state.canvas.nodes(type="card")
                 if n.data.get("package") == package]
        return (f"Allowing it grants it to every card of {package}, on every canvas, "
                f"not to {ident(self.card)} alone: {', '.join(cards) or 'none on a canvas'}.")

    def _show_keys(self) -> None:
        name = self.selected()
        keys = self.query_one("#request-keys", Static)
        close = (key_hint(self, "request.close"), "bold")
        if name is None:
            keys.update(Text.assemble(close, " close"))
            return
        engine = self.gate.engine
        node = engine.state.canvas.node(self.card)
        pkg = engine.state.packages.get(str(node.data.get("package"))) if node else None
        deny = Text("granted: revoke it on the grants screen    ") \
            if pkg is not None and self._granted(pkg.name, name) else \
            Text.assemble((key_hint(self, "request.deny"), "bold"), " deny    ")
        if not self.all_seen:
            allow = Text.assemble("Scroll through to the end to allow (", ("tab", "bold"),
                                  ", ", ("↓", "bold"), " / ", ("pgdn", "bold"), ")    ")
        else:
            allow = Text.assemble((key_hint(self, "request.allow_high"
                                            if PERMISSIONS[name].risk == "high"
                                            else "request.allow"), "bold"), " allow    ")
        keys.update(Text.assemble(allow, deny, close, " close"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("answer", "allow_high"):
            name = self.selected()
            if name is None or self.gate.operator_refusal:
                return False
            high = PERMISSIONS[name].risk == "high"
            if action == "allow_high":
                return high and self.all_seen
            return parameters == (False,) or (not high and self.all_seen)
        return True

    @work(group="consent", exit_on_error=False, description="answer a card's request")
    async def action_answer(self, allow: bool) -> None:
        """Answer the card: allow (not for high risk) or deny (not for one granted)."""
        name = self.selected()
        if name is None or (allow and (PERMISSIONS[name].risk == "high" or not self.armed
                                       or not self.all_seen)):
            return
        package = self._package()
        if not allow and package is not None and self._granted(package, name):
            # The engine records a deny and leaves a grant as it is: "denied" would
            # tell the person the card lost what it keeps using. Not turned into a
            # revoke here either: a revoke takes the permission from every card of
            # the package, which the grants screen's confirmation names and this
            # one card's dialog does not.
            self.notify(f"{name} is granted to {package}: a deny would not take it back. "
                        f"Revoke it on the grants screen ({key_hint(self.app, 'screen.grants')}), "
                        "which tells every card of the package.",
                        title="request: answer", severity="warning")
            return
        await self._answer(name, allow)

    def _package(self) -> str | None:
        """The card's package, if the card is still on a canvas."""
        node = self.gate.engine.state.canvas.node(self.card)
        return str(node.data.get("package")) if node is not None else None

    def _granted(self, package: str, name: str) -> bool:
        return name in self.gate.engine.state.grants.get(package, set())

    @work(group="consent", exit_on_error=False, description="answer a card's request")
    async def action_allow_high(self) -> None:
        """Allow a high-risk optional permission (the deliberate key)."""
        name = self.selected()
        if name is not None and PERMISSIONS[name].risk == "high" and self.armed \
                and self.all_seen:
            await self._answer(name, True)

    async def _answer(self, name: str, allow: bool) -> None:
        engine = self.gate.engine
        if self._answering:  # a key read twice: the first answer is under way
            return
        self._answering = True
        said = self._who_said
        changed = False

        async def answer() -> bool | None:
            nonlocal changed
            # The allow was given to the cards the text named when it was pressed; the
            # operator check (seconds, under tmux) comes between, and a card of the
            # package added elsewhere meanwhile would get the permission unnamed. Caught
            # up first: another program's change counts the moment it is committed.
            engine.catch_up()
            changed = allow and self._who_gets_it() != said
            if changed:
                return None
            return await engine.request(self.card, name, answer=allow,
                                        review_hash=self._hash)

        done = await self.gate.consent("request: answer", answer)
        self._answering = done is not None
        if changed:
            if self._close_if_gone():  # the card itself, or its version, gone meanwhile
                return
            self._show_anew()
            self.notify(f"{quoted(self.card)}: {name} not allowed — the cards an allow "
                        "grants it to changed since the dialog named them (a card added or "
                        f"removed elsewhere). {self._who_said} Read it again.",
                        title="request: answer", severity="warning", timeout=15)
            return
        if done is not None and not allow and done:
            # Granted elsewhere while the deny waited for the operator check (seconds,
            # under tmux): the engine recorded the deny and left the grant, which
            # "denied" alone would hide.
            self.close_saying(
                True, f"{quoted(self.card)}: {name} denied, but it is granted to "
                f"{self._manifest.name if self._manifest else 'its package'}: granted "
                "elsewhere while the answer waited, and a deny takes nothing back. Revoke "
                f"it on the grants screen ({key_hint(self.app, 'screen.grants')}).",
                title="request: answer", severity="warning", timeout=15)
        elif done is not None:
            self.close_saying(True, f"{quoted(self.card)}: {name} "
                              f"{'allowed' if allow else 'denied'}", title="request: answer")

    def action_close(self) -> None:
        """Close without answering."""
        self.dismiss(False)


def _now_word(permission: str, granted: set[str]) -> str:
    """The "now" column's word for ``permission`` with the package's grants ``granted``."""
    return "granted" if permission in granted else "not granted"
