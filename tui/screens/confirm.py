"""A yes/no question that says exactly what is being consented to."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.events import Resize
from textual.widgets import Static

from ..keys import key_hint
from ..messages import EngineChanged
from ..text import plain
from ..widgets.key_footer import KeyFooter
from .arming import ArmedDialog
from .seen import SeenWhole

__all__ = ["ConfirmScreen"]


class ConfirmScreen(ArmedDialog):
    """``y`` confirms, ``n`` or escape cancels; dismisses with the answer.

    Args:
        title: the question.
        body: what is consented to; a `str` is shown as plain text (never markup).
        verb: the word next to the confirming key.
        risk: for high-risk consent, what the risk is; the dialog then names it
            and confirms only with the deliberate key ``Y`` (shift+y), which is
            not next to any key that opens a dialog.
        gone: asked each time the store changes while the dialog is open: what made its
            question void, done elsewhere (``"acme.x's network was revoked"``: another
            app, the service), or None while it stands. Once it says, the dialog
            closes with no and the person is told: a yes is never left offered for a
            question that is gone.
        follow: the body as it reads now (``body`` is what it read as the dialog opened),
            asked each time the store changes while the dialog is open: changed (the
            cards a grant goes to, one added elsewhere), it is shown in place of the
            body, read anew, and the person is told (`replace_body`).

    Either yes works only once all of the body has been on screen (a body longer
    than the dialog is scrolled through: `tui.screens.seen`) and the dialog has
    been on screen for a moment (`tui.screens.arming`); no and escape work at once.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes", tooltip="Confirm"),
        Binding("Y", "deliberate", "Yes (high risk)", id="confirm.deliberate",
                tooltip="Confirm high-risk consent (shift+y)"),
        Binding("n", "answer(False)", "No", id="confirm.no", tooltip="Cancel"),
        Binding("escape", "answer(False)", "Cancel", id="confirm.cancel", priority=True,
                tooltip="Cancel"),
        # Ahead of the scroll view's own end key (priority), which animates the view
        # through every line in a blink: each would count as seen.
        Binding("end,G", "to_end", "To the end", id="confirm.end", priority=True,
                tooltip="Jump to the end of the text (what it skips still has to be read)"),
    ]

    def __init__(self, title: str, body: str | Text, *, verb: str = "confirm",
                 risk: str | Text | None = None,
                 gone: Callable[[], str | None] | None = None,
                 follow: Callable[[], str] | None = None) -> None:
        super().__init__()
        self._gone, self._follow = gone, follow
        #: The body as `follow` last said it.
        self._followed = body if isinstance(body, str) else None
        self._title, self._verb = title, verb
        self._body = body if isinstance(body, Text) else plain(body, multiline=True)
        self.risk = risk if isinstance(risk, Text) or risk is None else plain(risk)
        self._whole = SeenWhole(self._seen_view, self._seen_whole)

    @property
    def shown_text(self) -> str | None:
        """The body as it reads on screen, when given as a `str`: as the dialog opened, or
        as `follow` last said it. A yes was given to this text."""
        return self._followed

    @property
    def all_seen(self) -> bool:
        """Whether every line of the body has been on screen."""
        return self._whole.done

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(plain(self._title), classes="dialog-title")
            if self.risk is not None:
                yield Static(Text.assemble(("RISK: ", "bold red"), self.risk),
                             classes="hold-risk", id="confirm-risk")
            with VerticalScroll(classes="dialog-scroll", id="confirm-scroll"):
                yield Static(self._body, classes="dialog-body", id="confirm-body")
            yield Static("", classes="dialog-keys", id="confirm-keys")
        yield KeyFooter()

    def on_mount(self) -> None:
        scroll = self.query_one("#confirm-scroll", VerticalScroll)
        scroll.focus()
        self.watch(scroll, "scroll_y", self._whole.note, init=False)
        self.call_after_refresh(self._fit)
        self._show_keys()

    @on(Resize)
    def _resized(self) -> None:
        self.call_after_refresh(self._fit)

    @on(EngineChanged)
    def _follow_store(self) -> None:
        if self._dismissed:
            return
        why = self._gone() if self._gone is not None else None
        if why is not None:
            self.close_as_gone(f"{why} elsewhere while the dialog was open; the dialog is "
                               "closed and nothing was done here", title=self._title)
            return
        now = self._follow() if self._follow is not None else None
        if now is not None and now != self._followed:
            self._followed = now
            self.replace_body(now)
            self.notify("what the dialog says changed while it was open (done elsewhere); "
                        "read it again", title=self._title, severity="warning", timeout=10)

    def _fit(self) -> None:
        """A body taller than the dialog may be: the dialog takes its full height and the
        body scrolls in it (``tall``), so neither the body's last rows nor the keys are
        cut off by the dialog's edge; then note what is on screen."""
        dialog = self.query_one("#dialog", Vertical)
        if not dialog.has_class("tall") and \
                dialog.virtual_size.height > dialog.content_region.height:
            dialog.add_class("tall")
            self.call_after_refresh(self._whole.note)
            return
        self._whole.note()

    def replace_body(self, body: str | Text) -> None:
        """Show ``body`` in place of what the dialog said: what the yes consents to changed
        under the person (the caller says how). It is read anew, from its top, and the
        yes waits `ARM_S` again (`ArmedDialog.rearm`): a yes on its way was given to the
        old text."""
        self._body = body if isinstance(body, Text) else plain(body, multiline=True)
        self.query_one("#confirm-body", Static).update(self._body)
        self._whole.restart()
        self.rearm()
        self._show_keys()
        self.refresh_bindings()
        self.call_after_refresh(self._fit)

    def _seen_view(self) -> tuple[VerticalScroll, Static]:
        return (self.query_one("#confirm-scroll", VerticalScroll),
                self.query_one("#confirm-body", Static))

    def _seen_whole(self) -> None:
        self._show_keys()
        self.refresh_bindings()

    def _show_keys(self) -> None:
        cancel = (f'{key_hint(self, "confirm.no")} / {key_hint(self, "confirm.cancel")}',
                  "bold")
        if not self.all_seen:
            text = Text.assemble(f"Scroll through to the end to {self._verb} (",
                                 ("↓", "bold"), " / ", ("pgdn", "bold"), ")    ", cancel,
                                 " cancel")
        else:
            key = key_hint(self, "confirm.deliberate" if self.risk is not None
                           else "confirm.yes")
            text = Text.assemble((key, "bold"), f" {self._verb}    ", cancel, " cancel")
        self.query_one("#confirm-keys", Static).update(text)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer" and parameters == (True,):
            return self.risk is None and self.all_seen
        if action == "deliberate":
            return self.risk is not None and self.all_seen
        return True

    def action_to_end(self) -> None:
        """Scroll to the end of the body."""
        self.query_one("#confirm-scroll", VerticalScroll).scroll_end(animate=False)

    def action_answer(self, answer: bool) -> None:
        """Close with the person's answer (a yes typed ahead of the dialog, or before
        all of it was shown, is not one)."""
        if answer and not (self.armed and self.all_seen):
            return
        self.dismiss(answer)

    def action_deliberate(self) -> None:
        """Confirm high-risk consent."""
        if self.risk is not None and self.armed and self.all_seen:
            self.dismiss(True)
