"""The install review (SPEC §4.1), with accept and decline."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from engine import ConsentError, Review, parse_manifest
from engine.reach import potential

if TYPE_CHECKING:
    from ..app import ArrowgateApp

__all__ = ["ReviewScreen"]


class ReviewScreen(ModalScreen[bool]):
    """An offered package's review; ``y`` installs with every required permission."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "accept", "Accept and install", id="review.accept",
                tooltip="Grant every required permission and install"),
        Binding("n", "decline", "Decline", id="review.decline",
                tooltip="Do not install (recorded in the consent history)"),
        Binding("escape", "close", "Close", id="review.close", priority=True,
                tooltip="Close without answering"),
    ]

    def __init__(self, package: str) -> None:
        super().__init__()
        self.package = package
        self.review: Review | None = None

    @property
    def gate(self) -> ArrowgateApp:
        """The app, typed."""
        return cast("ArrowgateApp", self.app)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Static(f"Install {self.package}?", classes="dialog-title")
            yield Static("", id="review-text", markup=False)
            yield Static("", id="review-reach", markup=False)
            yield Static("[b]y[/b] accept and install    [b]n[/b] decline    [b]esc[/b] close",
                         classes="dialog-keys")
        yield Footer()

    async def on_mount(self) -> None:
        engine = self.gate.engine
        try:
            self.review = await engine.review(self.package)
        except ConsentError as exc:
            self.query_one("#review-text", Static).update(exc.message)
            return
        self.query_one("#review-text", Static).update(self.review.text)
        pkg = engine.state.packages[self.package]
        manifest = parse_manifest(pkg.pending_raw or pkg.raw)
        lines = potential(engine.state, set(manifest.required), manifest.hosts())
        self.query_one("#review-reach", Static).update(
            "\nWhat a card of this package could reach once wired:\n"
            + ("\n".join(f"  {line}" for line in lines) if lines else "  nothing on any canvas"))

    async def action_accept(self) -> None:
        """Install with every required permission (a person's yes)."""
        if self.review is None:
            return
        engine = self.gate.engine
        done = await self.gate.consent("review: accept",
                                       lambda: engine.install(self.package, grant="required"))
        if done is not None:
            self.notify(f"{self.package} installed", title="review: accept")
            self.dismiss(True)

    async def action_decline(self) -> None:
        """Decline: nothing is installed; the answer is recorded."""
        engine = self.gate.engine
        done = await self.gate.consent("review: decline",
                                       lambda: engine.install(self.package, accept=False))
        if done is not None:
            self.notify(f"{self.package} not installed", title="review: decline")
            self.dismiss(False)

    def action_close(self) -> None:
        """Close without an answer."""
        self.dismiss(False)
