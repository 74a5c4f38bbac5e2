"""The install review (SPEC §4.1), with accept and decline."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from engine import ConsentError, Review, parse_manifest
from engine.app.reach import potential

from ..keys import key_hint
from ..text import plain

if TYPE_CHECKING:
    from ..app import ArrowgateApp

__all__ = ["ReviewScreen"]


class ReviewScreen(ModalScreen[bool]):
    """An offered package's review; ``y`` installs with every required permission.

    A package asking for a high-risk permission installs only with the
    deliberate key ``Y`` (shift+y), and the review names those permissions
    above its keys. A manifest that does not review (invalid) offers no accept.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "accept", "Accept and install", id="review.accept",
                tooltip="Grant every required permission and install"),
        Binding("Y", "accept_high", "Accept high risk (shift+y)", id="review.accept_high",
                tooltip="Install a package that asks for high-risk permissions"),
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
            yield Static(plain(f"Install {self.package}?"), classes="dialog-title")
            yield Static("", id="review-text")
            yield Static("", id="review-reach")
            yield Static("", id="review-risk", classes="hold-risk")
            yield Static(Text.assemble((key_hint(self, "review.close"), "bold"), " close"),
                         classes="dialog-keys",
                         id="review-keys")
        yield Footer()

    async def on_mount(self) -> None:
        engine = self.gate.engine
        try:
            self.review = await engine.review(self.package)
        except ConsentError as exc:
            self.query_one("#review-text", Static).update(plain(
                f"This package cannot be installed: {exc.message}", multiline=True))
            self.refresh_bindings()
            return
        self.query_one("#review-text", Static).update(plain(self.review.text, multiline=True))
        pkg = engine.state.packages[self.package]
        manifest = parse_manifest(pkg.pending_raw or pkg.raw)
        lines = potential(engine.state, set(manifest.required), manifest.hosts())
        self.query_one("#review-reach", Static).update(plain(
            "\nWhat a card of this package could reach once wired:\n"
            + ("\n".join(f"  {line}" for line in lines) if lines else "  nothing on any canvas"),
            multiline=True))
        self._show_keys()
        self.refresh_bindings()

    def _show_keys(self) -> None:
        keys = self.query_one("#review-keys", Static)
        if self.gate.operator_refusal:
            keys.update(plain(f"read-only: {self.gate.operator_refusal} · esc close"))
            return
        if self.review is not None and self.review.high:
            self.query_one("#review-risk", Static).update(Text.assemble(
                ("RISK: ", "bold red"), "high-risk permissions: ",
                plain(", ".join(self.review.high)),
                " — read what each lets the card do above."))
            accept = Text.assemble((key_hint(self, "review.accept_high"), "bold"),
                                   " accept and install (high risk)")
        else:
            accept = Text.assemble((key_hint(self, "review.accept"), "bold"),
                                   " accept and install")
        keys.update(Text.assemble(accept, "    ", (key_hint(self, "review.decline"), "bold"),
                                  " decline    ", (key_hint(self, "review.close"), "bold"),
                                  " close"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("accept", "accept_high", "decline"):
            if self.gate.operator_refusal or self.review is None:
                return False  # read-only, or nothing that could be installed
            high = bool(self.review.high)
            return high if action == "accept_high" else (not high if action == "accept" else True)
        return True

    async def action_accept_high(self) -> None:
        """Install a package asking for high-risk permissions (the deliberate key)."""
        if self.review is not None and self.review.high:
            await self._install()

    async def action_accept(self) -> None:
        """Install with every required permission (a person's yes); not for high risk."""
        if self.review is None or self.review.high:
            return
        await self._install()

    async def _install(self) -> None:
        engine = self.gate.engine
        review = self.review
        assert review is not None
        # The hash of the review on screen: a package offered again under this
        # name meanwhile (maybe asking for more) is refused as stale, not installed
        # with the key meant for what the person read.
        done = await self.gate.consent("review: accept", lambda: engine.install(
            self.package, grant="required", review_hash=review.content_hash))
        if done is not None:
            self.notify(f"{self.package} installed", title="review: accept")
            self.dismiss(True)

    async def action_decline(self) -> None:
        """Decline: nothing is installed; the answer is recorded."""
        if self.review is None:
            return
        engine = self.gate.engine
        done = await self.gate.consent("review: decline",
                                       lambda: engine.install(self.package, accept=False))
        if done is not None:
            self.notify(f"{self.package} not installed", title="review: decline")
            self.dismiss(False)

    def action_close(self) -> None:
        """Close without an answer."""
        self.dismiss(False)
