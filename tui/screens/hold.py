"""One held prompt, shown whole before a person may approve it (SPEC §7).

The dialog scrolls; the approve key is offered only once every line of the
prompt has been on screen (scrolled through, not jumped over: `tui.screens.seen`), and the
approval names the SHA-256 of exactly the string this dialog rendered, so text
the person did not see (a longer prompt swapped in meanwhile, a part below the
fold or in the middle) is never approved. Approving
lets a prompt through to an agent in dangerous mode, so it takes a deliberate
key (shift+y by default) that is not next to the key that opened the dialog,
and that key works only once the dialog has been on screen for a moment
(`tui.screens.arming`): one typed ahead with the key that opened it has read nothing.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.events import Resize
from textual.widgets import Static

from engine import Decision, Prompt

from ..keys import key_hint
from ..messages import EngineChanged
from ..text import plain, quoted
from ..widgets.key_footer import KeyFooter
from .arming import ArmedDialog
from .seen import SeenWhole

if TYPE_CHECKING:
    from ..app import ArrowgateApp

__all__ = ["HoldScreen", "describe_hold"]


def describe_hold(app: ArrowgateApp, prompt: Prompt) -> Text:
    """Card, package, arrow, agent, mode and time left of a held prompt, as inert text."""
    engine = app.engine
    agent = engine.state.canvas.node(prompt.agent)
    name = str(agent.data.get("name") or "") if agent else ""
    mode = "dangerous mode" if agent is not None and agent.data.get("dangerous") else \
        "dangerous mode was turned off since; a person still answers"
    text = Text(end="")
    text.append("from card ")
    # Quoted where an id holds a space or a parenthesis: "x (acme.notes) over
    # arrow e4" is one card's id, not a card, its package and its arrow.
    text.append_text(plain(quoted(prompt.card)))
    text.append(" (")
    text.append_text(plain(prompt.package))
    text.append(") over arrow ")
    text.append_text(plain(quoted(prompt.arrow or "-")))
    text.append("\nto agent ")
    text.append_text(plain(quoted(prompt.agent)))
    if name:
        text.append(" (")
        text.append_text(plain(name))
        text.append(")")
    text.append(f" — {mode}\ntime left: {time_left(app, prompt)}")
    return text


def time_left(app: ArrowgateApp, prompt: Prompt) -> str:
    """``m:ss`` until the hold expires, or ``-`` without a deadline."""
    if prompt.deadline is None:
        return "-"
    # On the clock, as it expires: the engine's time may stand still (SPEC §6).
    left = int(app.engine.hold_left(prompt.id) or 0)
    return f"{left // 60}:{left % 60:02d}"


class HoldScreen(ArmedDialog):
    """A held prompt in full; dismisses with True once it was approved or rejected.

    Args:
        prompt: the held prompt (its text at this moment is what is shown).
        approve: True to approve (the end must be seen, then the deliberate
            key), False to reject (rejecting fails closed: ``y`` suffices).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("Y", "approve", "Approve (shift+y)", id="hold.confirm_approve",
                tooltip="Approve the held prompt: offered once all of it has been shown"),
        Binding("y", "reject", "Reject", id="hold.confirm_reject",
                tooltip="Reject the held prompt (PROMPT_REJECTED)"),
        Binding("n,escape", "cancel", "Cancel", id="hold.cancel", priority=True,
                tooltip="Close without answering"),
        # Ahead of the scroll view's own end key (priority), which animates the view
        # through every line in a blink: each would count as seen (`SeenWhole`).
        Binding("end,G", "to_end", "To the end", id="hold.end", priority=True,
                tooltip="Jump to the end of the prompt (what it skips still has to be read)"),
    ]

    def __init__(self, prompt: Prompt, *, approve: bool) -> None:
        super().__init__()
        self.prompt = prompt
        self.approve = approve
        #: Exactly the string rendered below; the approval names its digest.
        self.shown_text = prompt.text
        self.shown_sha256 = hashlib.sha256(
            self.shown_text.encode("utf-8", "surrogatepass")).hexdigest()
        #: The rows of the scrolled content that have been on screen.
        self._whole = SeenWhole(self._seen_view, self._seen_whole)
        self._answered = False
        self._lines = self.shown_text.count("\n") + 1
        #: Whether the agent was in dangerous mode as the RISK line last said.
        self._dangerous = self._agent_dangerous()

    @property
    def answering(self) -> bool:
        """Whether the person's answer was taken here (it may still be under way)."""
        return self._answered

    @property
    def all_seen(self) -> bool:
        """Whether every line of the prompt has been on screen."""
        return self._whole.done

    @property
    def gate(self) -> ArrowgateApp:
        """The app, typed."""
        return cast("ArrowgateApp", self.app)

    def compose(self) -> ComposeResult:
        verb = "Approve" if self.approve else "Reject"
        with Vertical(id="dialog", classes="hold-dialog"):
            yield Static(plain(f"{verb} held prompt {self.prompt.id}?"), classes="dialog-title")
            yield Static(self._risk(), id="hold-risk", classes="hold-risk")
            with VerticalScroll(id="hold-scroll"):
                yield Static(describe_hold(self.gate, self.prompt), id="hold-about")
                yield Static(f"Full prompt text ({self._lines} "
                             f"line{'s' if self._lines != 1 else ''}):", classes="section")
                yield Static(plain(self.shown_text, multiline=True), id="hold-text")
                yield Static(f"— end of the prompt · sha256 {self.shown_sha256[:16]}… —",
                             id="hold-end", classes="dialog-keys")
            yield Static("", id="hold-keys", classes="dialog-keys")
        yield KeyFooter()

    def _agent_dangerous(self) -> bool:
        agent = self.gate.engine.state.canvas.node(self.prompt.agent)
        return agent is not None and bool(agent.data.get("dangerous"))

    def _risk(self) -> Text:
        who = plain(quoted(self.prompt.agent))  # one id, however it reads
        text = Text("RISK: ", style="bold red", end="")
        if self.approve:
            text.append("approving sends this text to agent ")
            text.append_text(who)
            text.append(", which " + ("runs in dangerous mode: it acts on it without asking "
                                      "anyone, with every tool it has (commands, files, network)."
                                      if self._dangerous else "will act on it."))
        else:
            text = Text("Rejecting: the card is told PROMPT_REJECTED; nothing reaches ",
                        end="")
            text.append_text(who)
            text.append(".")
        return text

    def on_mount(self) -> None:
        scroll = self.query_one("#hold-scroll", VerticalScroll)
        scroll.focus()
        self.watch(scroll, "scroll_y", self._whole.note, init=False)
        self.call_after_refresh(self._whole.note)
        self.set_interval(1.0, self._tick)
        self._show_keys()

    def on_armed(self) -> None:
        """The approve key works from now: offer it (once the end was seen)."""
        self._show_keys()
        self.refresh_bindings()

    @on(Resize)
    def _resized(self) -> None:
        self.call_after_refresh(self._whole.note)

    def _seen_view(self) -> tuple[VerticalScroll, Static]:
        """The prompt is seen whole from the top of its scroll view to the end marker."""
        return self.query_one("#hold-scroll", VerticalScroll), self.query_one("#hold-end", Static)

    def _seen_whole(self) -> None:
        self._show_keys()
        self.refresh_bindings()

    def _show_keys(self) -> None:
        keys = self.query_one("#hold-keys", Static)
        refusal = self.gate.operator_refusal
        cancel = (key_hint(self, "hold.cancel"), "bold")
        if refusal:
            keys.update(plain(f"read-only: {refusal} · {cancel[0]} close"))
        elif not self.approve:
            keys.update(Text.assemble((key_hint(self, "hold.confirm_reject"), "bold"),
                                      " reject    ", cancel, " cancel"))
        elif not self.all_seen:
            keys.update(Text.assemble(
                "Scroll through to the end of the prompt to approve it (",
                ("↓", "bold"), " / ", ("pgdn", "bold"), ")    ", cancel, " cancel"))
        elif not self.armed:
            keys.update(Text.assemble("Read the prompt: its approve key works in a moment    ",
                                      cancel, " cancel"))
        else:
            keys.update(Text.assemble((key_hint(self, "hold.confirm_approve"), "bold"),
                                      f" approve ({self._agent_mode()})    ", cancel,
                                      " cancel"))

    def _agent_mode(self) -> str:
        """The agent's mode as it is now, for the approve key: it may have changed since the
        prompt was held (clearing the flag does not release the hold, SPEC §7). Every hold
        was made for an agent in dangerous mode: not in it now, it was turned off since (or
        the agent was removed, which ends the hold and this dialog). The agent is named
        above; a long id here would push the key line onto two rows."""
        return "agent in dangerous mode" if self._dangerous else \
            "agent no longer in dangerous mode"

    def _tick(self) -> None:
        current = self.gate.engine.prompt(self.prompt.id)
        if current is not None:
            self.prompt = current
        self.query_one("#hold-about", Static).update(describe_hold(self.gate, self.prompt))
        self._follow_mode()

    def _follow_mode(self) -> None:
        """The RISK line says the agent's mode as it is now: an operator may set or clear
        its dangerous flag while the hold waits (it does not release the hold). Turned on
        under the dialog, the approve key waits to be read again: a yes on its way was
        given to an agent that 'will act on it', not to one that asks nobody."""
        dangerous = self._agent_dangerous()
        if dangerous == self._dangerous:
            return
        self._dangerous = dangerous
        self.query_one("#hold-risk", Static).update(self._risk())
        if dangerous and self.approve:
            self.rearm()
        # After the re-arming: the keys say the approve key waits, or name the mode now.
        self._show_keys()
        if dangerous and self.approve:
            self.notify(f"agent {quoted(self.prompt.agent)} was put in dangerous mode while "
                        f"prompt {self.prompt.id} was open: read what approving does again",
                        severity="warning")

    @on(EngineChanged)
    def _changed(self) -> None:
        if not self._answered:
            self._close_if_ended()
        if not self._dismissed:
            self._follow_mode()

    def _close_if_ended(self) -> None:
        """Close, saying how, once the prompt is no longer held (resolved elsewhere):
        its approve key must not stay offered for a prompt that is gone. Not while an
        answer given here is under way: it ends the dialog and says how itself."""
        current = self.gate.engine.prompt(self.prompt.id)
        if current is None or current.state != "held":
            self.close_saying(False, f"prompt {self.prompt.id} is no longer held "
                              f"({current.state if current else 'gone'})", severity="warning")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "approve":
            return self.approve and self.all_seen and self.armed \
                and not self.gate.operator_refusal
        if action == "reject":
            return not self.approve and not self.gate.operator_refusal
        return True

    def action_to_end(self) -> None:
        """Scroll to the end of the prompt."""
        self.query_one("#hold-scroll", VerticalScroll).scroll_end(animate=False)

    @work(group="consent", exit_on_error=False, description="approve a held prompt")
    async def action_approve(self) -> None:
        """Approve the text shown, by its digest (in a worker: the operator check it waits
        for must not hold up the app's keys, `ArrowgateApp.consent`)."""
        if not (self.approve and self.all_seen and self.armed) or self._answered:
            return
        prompt, digest, dangerous = self.prompt, self.shown_sha256, self._dangerous
        self._answered = True

        async def approve() -> Decision | None:
            # The yes was given to what the dialog said when it was pressed; the operator
            # check (seconds, under tmux) comes between. An agent put in dangerous mode
            # meanwhile would act on the text asking nobody, which the person did not see.
            # Caught up first: another program's change of the mode counts the moment
            # it is committed, not at the app's next look at the store.
            self.gate.engine.catch_up()
            if self._agent_dangerous() and not dangerous:
                self.notify(f"prompt {prompt.id}: not approved — agent "
                            f"{quoted(prompt.agent)} was put in dangerous mode while the "
                            "approval waited; read what approving does now",
                            title="hold: approve", severity="warning", timeout=15)
                return None
            return await self.gate.engine.approve_hold(prompt.id, text_sha256=digest)

        decision = await self.gate.consent("hold: approve", approve)
        if decision is None:  # not done: said why; the hold may have ended meanwhile
            self._answered = False
            self._close_if_ended()
            return
        now = self.gate.engine.prompt(prompt.id)
        if decision.code or now is None or now.state not in ("queued", "delivered", "replied"):
            # The engine took the approval but could not send it (a rule that no longer
            # holds, the agent's queue full): the prompt is cancelled, nothing was sent,
            # and the person's yes must not read as sent.
            self.close_saying(True, f"prompt {prompt.id} was cancelled, not delivered (not "
                              "sent — cancelled on approval: "
                              f"{decision.code or (now.state if now else 'gone')})"
                              + (f": {decision.message}" if decision.message else ""),
                              title="hold: approve", severity="warning", timeout=15)
        else:
            self.close_saying(True, f"prompt {prompt.id}: approved → {now.state}",
                              title="hold: approve")

    @work(group="consent", exit_on_error=False, description="reject a held prompt")
    async def action_reject(self) -> None:
        """Reject the held prompt (in a worker, as `action_approve`)."""
        if self.approve or self._answered:
            return
        prompt = self.prompt
        self._answered = True
        decision = await self.gate.consent(
            "hold: reject", lambda: self.gate.engine.reject_hold(prompt.id))
        if decision is None:  # not done: said why; the hold may have ended meanwhile
            self._answered = False
            self._close_if_ended()
            return
        self.close_saying(True, f"prompt {prompt.id}: rejected → "
                          f"{decision.code or decision.outcome}", title="hold: reject")

    def action_cancel(self) -> None:
        """Close without answering."""
        self.dismiss(False)
