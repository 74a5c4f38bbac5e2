"""A card's request for an optional permission, answered by a person (SPEC §4.2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Footer, Static

from engine import PERMISSIONS, Manifest
from engine.core.review import permission_title

from ..keys import key_hint
from ..text import plain
from .arming import ArmedDialog
from .base import row_key

if TYPE_CHECKING:
    from ..app import ArrowgateApp

__all__ = ["RequestScreen"]


class RequestScreen(ArmedDialog):
    """The optional permissions a card's package declares; allow or deny the selected one.

    The engine tells the card the answer either way and records it in the
    consent history; it refuses the request when the card is not on screen
    (``not-visible``). A high-risk permission is allowed only with shift+y, and
    allowing works once the dialog has been on screen a moment (`tui.screens.arming`).
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
    ]

    def __init__(self, card: str) -> None:
        super().__init__()
        self.card = card
        #: The version the dialog shows (its manifest and content hash), taken when it
        #: opens: the answer names it, so a version approved meanwhile is ``stale``.
        self._manifest: Manifest | None = None
        self._hash: str | None = None

    @property
    def gate(self) -> ArrowgateApp:
        """The app, typed."""
        return cast("ArrowgateApp", self.app)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(plain(f"Card {self.card} asks for a permission"),
                         classes="dialog-title")
            yield DataTable(id="requests", cursor_type="row")
            yield Static("", id="request-text")
            yield Static("", id="request-keys", classes="dialog-keys")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#requests", DataTable)
        table.add_columns("permission", "risk", "now")
        engine = self.gate.engine
        node = engine.state.canvas.node(self.card)
        pkg = engine.state.packages.get(str(node.data.get("package"))) if node else None
        granted = engine.state.grants.get(pkg.name, set()) if pkg else set()
        if pkg is not None:
            self._manifest, self._hash = pkg.manifest, pkg.hash
        for name in sorted(pkg.manifest.optional) if pkg and pkg.manifest else ():
            table.add_row(name, PERMISSIONS[name].risk,
                          "granted" if name in granted else "not granted", key=name)
        if not table.row_count:
            self.query_one("#request-text", Static).update(plain(
                f"The package of {self.card} declares no optional permission: "
                "there is nothing it may ask for."))
        table.focus()
        self._show()

    def selected(self) -> str | None:
        """The optional permission under the cursor."""
        return row_key(self.query_one("#requests", DataTable))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show()

    def _show(self) -> None:
        name = self.selected()
        keys = self.query_one("#request-keys", Static)
        if name is None:
            keys.update(Text.assemble((key_hint(self, "request.close"), "bold"), " close"))
            return
        engine = self.gate.engine
        node = engine.state.canvas.node(self.card)
        pkg = engine.state.packages.get(str(node.data.get("package"))) if node else None
        spec = PERMISSIONS[name]
        shown = self._manifest  # the version the answer names, not one approved since
        title = permission_title(shown, name) if shown is not None else spec.title
        version = f"{shown.name} {shown.version}: " if shown is not None else ""
        text = Text.assemble(plain(f"{version}{name} ({spec.risk} risk): {title}\nUsers "
                                   f"see: {spec.users_see}"))
        if spec.risk == "high":
            text.append("\nRISK: ", style="bold red")
            text.append_text(plain(f"{name} is high risk; allowing it takes "
                                   f"{key_hint(self, 'request.allow_high')}."))
        self.query_one("#request-text", Static).update(text)
        allow = (key_hint(self, "request.allow_high" if spec.risk == "high"
                          else "request.allow"), "bold")
        deny = Text("granted: revoke it on the grants screen    ") \
            if pkg is not None and self._granted(pkg.name, name) else \
            Text.assemble((key_hint(self, "request.deny"), "bold"), " deny    ")
        keys.update(Text.assemble(allow, " allow    ", deny,
                                  (key_hint(self, "request.close"), "bold"), " close"))
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("answer", "allow_high"):
            name = self.selected()
            if name is None or self.gate.operator_refusal:
                return False
            high = PERMISSIONS[name].risk == "high"
            if action == "allow_high":
                return high
            return parameters == (False,) or not high
        return True

    async def action_answer(self, allow: bool) -> None:
        """Answer the card: allow (not for high risk) or deny (not for one granted)."""
        name = self.selected()
        if name is None or (allow and (PERMISSIONS[name].risk == "high" or not self.armed)):
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

    async def action_allow_high(self) -> None:
        """Allow a high-risk optional permission (the deliberate key)."""
        name = self.selected()
        if name is not None and PERMISSIONS[name].risk == "high" and self.armed:
            await self._answer(name, True)

    async def _answer(self, name: str, allow: bool) -> None:
        engine = self.gate.engine
        done = await self.gate.consent("request: answer", lambda: engine.request(
            self.card, name, answer=allow, review_hash=self._hash))
        if done is not None:
            self.notify(f"{self.card}: {name} {'allowed' if allow else 'denied'}",
                        title="request: answer")
            self.dismiss(True)

    def action_close(self) -> None:
        """Close without answering."""
        self.dismiss(False)
