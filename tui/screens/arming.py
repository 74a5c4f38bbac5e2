"""A consent dialog's yes works only once the dialog has been on screen for a moment.

A person reads a dialog before saying yes to it. A yes typed ahead with the key
that opened the dialog (``a`` then shift+y, ``g`` then shift+y), or a key meant
for the screen below that arrives as the dialog opens, has read nothing: it
would approve a prompt or grant a permission from a dialog drawn for a single
frame. Saying no, cancelling and closing are never held back (they fail closed).
"""

from __future__ import annotations

import time
from typing import ClassVar

from textual import events, on
from textual.await_complete import AwaitComplete
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen
from textual.worker import Worker

__all__ = ["ARM_S", "ArmedDialog"]

#: Seconds a consent dialog is on screen before its yes works: shorter than any
#: reading, longer than the gap between two keys typed in one go.
ARM_S = 0.5


class ArmedDialog(ModalScreen[bool]):
    """A modal dialog that knows whether it has been on screen for `ARM_S` seconds.

    Subclasses check `armed` before any consenting action, and may override
    `on_armed` to offer its key once it works.
    """

    ARM_S: ClassVar[float] = ARM_S
    #: When the dialog was first drawn (`time.monotonic`), or None before.
    _drawn_at: float | None = None
    #: Whether the dialog was closed (its answer given to whoever opened it).
    _dismissed: bool = False
    #: Whether an answer given here is under way (a key read twice acts once).
    _answering: bool = False

    def dismiss(self, result: bool | None = None) -> AwaitComplete:
        """Close with ``result``, once. A second dismissal does nothing: the first answer
        stands (a second would hand the opener a second answer, which Textual refuses)."""
        if self._dismissed:
            return AwaitComplete()  # nothing to await: already done
        self._dismissed = True
        return super().dismiss(result)

    def close_saying(self, result: bool, said: str, *, title: str = "",
                     severity: SeverityLevel = "information",
                     timeout: float | None = None) -> None:
        """Close with ``result``, and tell the person how the dialog ended (``said``, a
        toast): a dialog never closes under a person, nor an answer given in it ends,
        without a word. Said even when the dialog closed already (cancelled while an
        answer given in it was under way): what that answer did is still news."""
        self.notify(said, title=title, severity=severity, timeout=timeout)
        self.dismiss(result)

    def close_as_gone(self, said: str, *, title: str) -> None:
        """Close with no: what the dialog asks was answered or made void elsewhere
        (another app, the service), and ``said`` tells how and that nothing was done
        here. A yes is never left offered for a question that is gone."""
        self.close_saying(False, said, title=title, severity="warning", timeout=15)

    @on(events.Mount)
    def _arm_after_drawn(self) -> None:
        # After the frame that first shows the dialog.
        self.call_after_refresh(self._first_drawn)

    def _first_drawn(self) -> None:
        self._drawn_at = time.monotonic()
        self.set_timer(self.ARM_S, self.on_armed)

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        # A consent action runs in a worker: its failure is the app's to show.
        forward = getattr(self.app, "worker_failed", None)
        if forward is not None:
            forward(event)

    @property
    def armed(self) -> bool:
        """Whether the dialog has been on screen for `ARM_S` seconds: a yes now is read."""
        return self._drawn_at is not None and time.monotonic() - self._drawn_at >= self.ARM_S

    def rearm(self) -> None:
        """What the dialog says changed for the worse under the person: its yes waits
        `ARM_S` again, so a yes already on its way was given to what it said before."""
        if self._drawn_at is not None:
            self._first_drawn()
            self.refresh_bindings()

    def on_armed(self) -> None:
        """The yes works from now (override to show its key)."""
        self.refresh_bindings()
