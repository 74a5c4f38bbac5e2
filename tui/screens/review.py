"""The install review (SPEC §4.1), with accept and decline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.events import Resize
from textual.widgets import Static

from engine import ConsentError, Review, parse_manifest
from engine.app.reach import potential
from engine.core.manifest import Manifest, content_hash, fold_manifest
from engine.core.review import install_review
from engine.core.state import PackageState

from ..keys import key_hint
from ..messages import EngineChanged
from ..text import plain, plain_lines
from ..widgets.key_footer import KeyFooter
from .arming import ArmedDialog
from .seen import SeenWhole

if TYPE_CHECKING:
    from ..app import ArrowgateApp

__all__ = ["ManifestFile", "ReviewScreen", "version_note"]


@dataclass(frozen=True, slots=True)
class ManifestFile:
    """A manifest file (or package folder) a person named, read but not offered."""

    path: str
    raw: dict[str, Any]
    digests: dict[str, str]  #: every file's digest, ``manifest.json``'s among them
    #: the ``manifest.json`` text, what is offered (the engine hashes it itself)
    text: str | bytes | None = None

    @property
    def name(self) -> str:
        """The package the file names."""
        return str(self.raw.get("name", ""))


def version_note(pkg: PackageState, file_hash: str) -> str:
    """What a file's version of the installed package ``pkg`` is to it, in a sentence."""
    if file_hash == pkg.hash:
        return f"This file is the version of {pkg.name} installed now."
    if file_hash == pkg.pending_hash:
        return (f"This file is the version of {pkg.name} waiting for approval: approve or "
                "decline it on the grants screen.")
    return (f"{pkg.name} is installed, another version of it ({pkg.hash[:19]}…). This file is "
            "shown to read: nothing was offered or installed. To install it, send it as an "
            "update; what it changes is then approved on the grants screen.")


class ReviewScreen(ArmedDialog):
    """An offered package's review; ``y`` installs with every required permission.

    A package asking for a high-risk permission installs only with the
    deliberate key ``Y`` (shift+y), and the review names those permissions
    above its keys. A manifest that does not review (invalid) offers no accept.
    Accepting works once all of the review has been on screen, scrolled through to
    its keys (`tui.screens.seen`), and the review has been on screen a moment
    (`tui.screens.arming`); declining and closing work at once.
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
        # Ahead of the scroll view's own end key (priority), which animates the view
        # through every line in a blink: each would count as seen.
        Binding("end,G", "to_end", "To the end", id="review.end", priority=True,
                tooltip="Jump to the end of the review (what it skips still has to be read)"),
    ]

    def __init__(self, package: str | ManifestFile) -> None:
        super().__init__()
        #: A manifest file read but not offered: its own review, to read (no accept).
        self.file = package if isinstance(package, ManifestFile) else None
        self.package = package.name if isinstance(package, ManifestFile) else package
        self.review: Review | None = None
        self._whole = SeenWhole(self._seen_view, self._seen_whole)

    @property
    def all_seen(self) -> bool:
        """Whether every line of the review, down to its keys, has been on screen."""
        return self._whole.done

    @property
    def gate(self) -> ArrowgateApp:
        """The app, typed."""
        return cast("ArrowgateApp", self.app)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Static(plain(f"Install {self.package}?" if self.file is None else
                               f"Review of {self.file.path} ({self.package})"),
                         classes="dialog-title")
            if self.file is not None:
                yield Static("", id="review-version")
            yield Static("", id="review-text")
            yield Static("", id="review-reach")
            yield Static("", id="review-risk", classes="hold-risk")
            yield Static(Text.assemble((key_hint(self, "review.close"), "bold"), " close"),
                         classes="dialog-keys",
                         id="review-keys")
        yield KeyFooter()

    async def on_mount(self) -> None:
        scroll = self.query_one("#dialog", VerticalScroll)
        scroll.focus()
        self.watch(scroll, "scroll_y", self._whole.note, init=False)
        if self.file is not None:
            self._show_file(self.file)
            return
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
        self._show_reach(parse_manifest(pkg.pending_raw or pkg.raw))
        self._show_keys()
        # What was on screen before the review was drawn in is not the review.
        self._whole.restart()
        self.call_after_refresh(self._whole.note)
        self.refresh_bindings()

    @on(Resize)
    def _resized(self) -> None:
        self.call_after_refresh(self._whole.note)

    def _seen_view(self) -> tuple[VerticalScroll, Static] | None:
        """The review, down to its keys; nothing before there is a review to accept."""
        if self.review is None:
            return None
        return self.query_one("#dialog", VerticalScroll), self.query_one("#review-keys", Static)

    def _seen_whole(self) -> None:
        self._show_keys()
        self.refresh_bindings()

    def action_to_end(self) -> None:
        """Scroll to the end of the review."""
        self.query_one("#dialog", VerticalScroll).scroll_end(animate=False)

    def _show_file(self, file: ManifestFile) -> None:
        """The review of what the file says, to read: ``self.review`` stays None, so
        nothing here can be accepted or declined (the package is not offered)."""
        try:
            manifest = parse_manifest(file.raw)
        except ConsentError as exc:
            self.query_one("#review-text", Static).update(plain(
                f"This manifest cannot be installed: {exc.message}", multiline=True))
            return
        # As the engine would hash it: the file's own text when it was read here.
        given = file.text if file.text is not None else file.raw
        review = install_review(manifest, content_hash(fold_manifest(given, file.digests)[1]))
        pkg = self.gate.engine.state.packages.get(file.name)
        if pkg is not None:
            self.query_one("#review-version", Static).update(plain(
                version_note(pkg, review.content_hash) + "\n", multiline=True, style="bold yellow"))
        self.query_one("#review-text", Static).update(plain(review.text, multiline=True))
        self._show_reach(manifest)
        self.refresh_bindings()

    def _show_reach(self, manifest: Manifest) -> None:
        lines = potential(self.gate.engine.state, set(manifest.required), manifest.hosts())
        # A line each, whatever the names quoted in it hold (an agent's id stored
        # before ids were checked may hold a line break).
        self.query_one("#review-reach", Static).update(plain_lines(
            ["", "What a card of this package could reach once wired:",
             *([f"  {line}" for line in lines] if lines else ["  nothing on any canvas"])]))

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
        if not self.all_seen:
            # Its key does nothing yet: name what it waits for, not the key.
            accept = Text.assemble("Scroll through to the end to accept (", ("↓", "bold"),
                                   " / ", ("pgdn", "bold"), ")")
        keys.update(Text.assemble(accept, "    ", (key_hint(self, "review.decline"), "bold"),
                                  " decline    ", (key_hint(self, "review.close"), "bold"),
                                  " close"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("accept", "accept_high", "decline"):
            if self.gate.operator_refusal or self.review is None:
                return False  # read-only, or nothing that could be installed
            if action == "decline":
                return True
            high = bool(self.review.high)
            return self.all_seen and (high if action == "accept_high" else not high)
        return True

    @work(group="consent", exit_on_error=False, description="install a package")
    async def action_accept_high(self) -> None:
        """Install a package asking for high-risk permissions (the deliberate key)."""
        if self.review is not None and self.review.high and self.armed and self.all_seen:
            await self._install()

    @work(group="consent", exit_on_error=False, description="install a package")
    async def action_accept(self) -> None:
        """Install with every required permission (a person's yes); not for high risk."""
        if self.review is None or self.review.high or not (self.armed and self.all_seen):
            return
        await self._install()

    async def _install(self) -> None:
        engine = self.gate.engine
        review = self.review
        assert review is not None
        if self._answering:  # the key read twice: the first answer is under way
            return
        # The hash of the review on screen: a package offered again under this
        # name meanwhile (maybe asking for more) is refused as stale, not installed
        # with the key meant for what the person read.
        self._answering = True
        done = await self.gate.consent("review: accept", lambda: engine.install(
            self.package, grant="required", review_hash=review.content_hash))
        self._answering = done is not None
        if done is not None:
            self.close_saying(True, f"{self.package} installed", title="review: accept")

    @on(EngineChanged)
    def _close_if_gone(self) -> None:
        """Close, saying why, once the offer reviewed is not the one standing: installed,
        withdrawn or offered anew elsewhere (another app, the service). Its accept key
        must not stay offered for a question that is gone (the engine would refuse it as
        ``stale``, or the package is installed already). Not while an answer given here
        is under way: it ends the dialog and says how itself."""
        if self._dismissed or self._answering or self.file is not None or self.review is None:
            return
        pkg = self.gate.engine.state.packages.get(self.package)
        shown = self.review.content_hash
        if pkg is None:
            why = f"{self.package} was withdrawn"
        elif pkg.installed:
            why = f"{self.package} was installed"
        elif pkg.hash != shown:
            why = f"{self.package} was offered anew (hash {pkg.hash}; the review showed {shown})"
        else:
            return
        self.close_as_gone(f"{why} elsewhere while its install review was open; the review "
                           "is closed and nothing was installed or declined here",
                           title="review")

    @work(group="consent", exit_on_error=False, description="decline a package")
    async def action_decline(self) -> None:
        """Decline: nothing is installed; the answer is recorded."""
        if self.review is None or self._answering:
            return
        engine = self.gate.engine
        self._answering = True
        done = await self.gate.consent("review: decline",
                                       lambda: engine.install(self.package, accept=False))
        self._answering = done is not None
        if done is not None:
            self.close_saying(False, f"{self.package} not installed", title="review: decline")

    def action_close(self) -> None:
        """Close without an answer."""
        self.dismiss(False)
