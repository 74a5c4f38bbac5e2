"""What the engine writes about calls: arrow log rows, bounded refusals, counted rate events.

Every call's outcome is one row on its arrow's log (SPEC §8). Refusals are
bounded per card (`DenialLog`): beyond ``denial_log_limit`` in a window they
are counted, and one ``suppressed`` row sums them up before the card's next
row and at close. Accepted calls that count toward a rolling window leave a
rate event in the same transaction as their row.
"""

from __future__ import annotations

import json
from typing import Any

from canvas import Node, WorkspaceSettings
from engine.core.catalogue import CALLS
from engine.core.decision import Decision
from engine.core.limits import DenialLog, rate_owner
from engine.core.prompts import Prompt
from engine.core.text import SHOWN
from engine.services.context import Context
from engine.store.log import FIELDS, clip_payload

# `log_row` lists a row's fields by position, for speed: fail at import, not
# in a hash, if the log's field order ever changes.
if FIELDS != ("seq", "t", "workspace", "arrow", "card", "package", "version", "call", "target",
              "payload", "chain", "outcome", "code", "reason", "approver", "prompt"):
    raise ImportError("engine.services.record.Recorder.log_row does not match "
                      "engine.store.log.FIELDS")

__all__ = ["Recorder"]

#: The refusal budget of calls in the name of no card on the canvas.
_DEFAULT_DENIAL_LIMIT = WorkspaceSettings().denial_log_limit


class Recorder:
    """Writes log rows and rate events inside the caller's transaction."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        #: Which refusals get a log row of their own (SPEC §8 "Bounds").
        self.denials = DenialLog()

    @staticmethod
    def payload(call: str, args: Any) -> str | None:
        """The text of a call's arguments that its log row keeps (its payload argument)."""
        spec = CALLS.get(call)
        if spec is None or type(args) is not dict or not args:
            return None
        if spec.payload_arg and type(value := args.get(spec.payload_arg)) is str:
            return value
        return None

    def count(self, card: str, key: str, now: float) -> None:
        """Count an accepted call in its rolling window (inside a write)."""
        state = self.ctx.state
        # Copies of a card count in the windows of their spawn tree's root (SPEC §6).
        owner = rate_owner(state.canvas, card)
        self.ctx.store.count_rate_event(owner, key, now)
        state.counters.count(owner, key, now)

    def save_prompt(self, prompt: Prompt) -> None:
        """Write a prompt as it now stands, and index it (inside a write)."""
        self.ctx.state.open_prompts.update(prompt)
        self.ctx.store.save_prompt(prompt)

    def forget_windows(self, card: str) -> None:
        """A removed card's rate windows go, in the store too (inside a write).

        A reload (restart, another process) must not hand them to a new node
        with its id.
        """
        self.ctx.store.forget_rate_events(card)
        self.ctx.state.counters.forget(card)

    def log_row(self, decision: Decision, *, outcome: str, payload: str | None,
                chain: tuple[str, ...] | list[str] | None, t: float | None = None,
                approver: str | None = None,
                extra: tuple[int | None, str | None] | None = None,
                card: Node | None = None) -> None:
        """Append the decision's row to the arrow log (inside a write).

        ``card``: the node of ``decision.card`` when the caller has it at hand.
        """
        held = self.denials.held
        if held and decision.card in held:
            # The card's suppressed refusals come first (SPEC §8 "Bounds").
            self.write_suppressed(decision.card)
        state = self.ctx.state
        if card is None:
            card = state.canvas.node(decision.card or "")
        package = decision.package
        pkg = state.packages.get(package or "")
        # The fields in the order of `log.FIELDS` (checked at import, above).
        values = [
            None, self.ctx.now() if t is None else t, card.workspace if card else None,
            decision.arrow, decision.card, package,
            pkg.hash if pkg is not None and pkg.installed else None, decision.call,
            decision.target, payload, list(chain) if chain is not None else None, outcome,
            decision.code, decision.reason, approver, decision.prompt,
        ]
        if extra is None:
            self.ctx.store.log.append_fields(values)
        else:
            self.ctx.store.log.append_fields(values, extra)

    def refusal(self, decision: Decision, chain: tuple[str, ...] | None, args: Any,
                now: float | None = None) -> Decision:
        """A refused call writes nothing but its log row (or counts toward a `suppressed` one).

        ``now``: the time the call was decided at (read when not given), the row's time.
        """
        card = decision.card  # read once: a Decision's attributes are not free
        if decision.arrow is None and decision.target and card:
            arrow = self.ctx.state.canvas.arrow_between(card, decision.target)
            if arrow is not None:
                decision = decision.with_(arrow=arrow.id)
        key, node, limit = self._budget_of(card)
        t = self.ctx.now() if now is None else now
        if not self._admit(decision, key, node, limit, t):
            return decision
        # A summary row to write first needs a savepoint; a lone row does not.
        with self.ctx.write(one_statement=key not in self.denials.held):
            self._refused_row(decision, self.payload(decision.call, args), chain, key, t, node)
        return decision

    def writes_alone(self, card: str) -> bool:
        """True when `log_row` for ``card`` appends its row and nothing else: no row
        summing up the card's suppressed refusals goes first (writing that one takes
        them out of memory, so its write needs a savepoint)."""
        return card not in self.denials.held

    def denial_key(self, decision: Decision) -> str | None:
        """Whose refusal budget a refusal counts in: its card's, or one for unknown cards."""
        return self._budget_of(decision.card)[0]

    def _budget_of(self, card: str | None) -> tuple[str | None, Node | None, int]:
        # The refusal budget a refusal counts in: its key (`denial_key`), the
        # card's node and the limit, from one look-up of the card (every
        # refusal passes here).
        state = self.ctx.state
        node = state.canvas.node(card) if card else None
        if node is not None and node.type == "card":
            return card, node, state.workspace_of(node).settings.denial_log_limit
        return None, None, _DEFAULT_DENIAL_LIMIT

    def _admit(self, decision: Decision, key: str | None, node: Node | None,
               limit: int, t: float | None = None) -> bool:
        # True when the refusal gets its own row; else it is counted for a
        # `suppressed` row (``node``: the card ``key`` names; ``t``: now).
        if t is None:
            t = self.ctx.now()
        if self.denials.admit(key, t, limit):
            return True
        self.denials.suppress(key, t, card=key, package=decision.package if key else None,
                              workspace=node.workspace if node is not None else None,
                              code=decision.code, call=decision.call)
        return False

    def refused_row(self, decision: Decision, payload: str | None,
                    chain: tuple[str, ...] | None) -> None:
        """A refusal's row, inside a write: 4 KiB of its payload with the whole one's
        length and SHA-256, and the names the card chose cut to a bounded size."""
        self._refused_row(decision, payload, chain, self.denial_key(decision))

    def _refused_row(self, decision: Decision, payload: str | None,
                     chain: tuple[str, ...] | None, key: str | None, t: float | None = None,
                     node: Node | None = None) -> None:
        # `refused_row` with its card's `denial_key` (`refusal` has it already),
        # at ``t`` (None: now), ``node`` the card's when known.
        if key is None and key in self.denials.held:
            # Cards the canvas does not hold share a summary; `log_row`
            # writes a real card's before its next row.
            self.write_suppressed(None)
        extra: tuple[int | None, str | None] | None = None
        if payload is not None:
            payload, size, digest = clip_payload(payload)
            if size is not None:
                extra = (size, digest)
        # A loop, not any() over a generator: every refusal passes here.
        for x in (decision.card, decision.call, decision.target, decision.reason):
            if type(x) is str and len(x) > SHOWN:
                decision = decision.with_(**{
                    name: value[:SHOWN] + "…"
                    for name in ("card", "call", "target", "reason")
                    if type(value := getattr(decision, name)) is str and len(value) > SHOWN})
                node = None  # the row names the card as cut: looked up so, as ever
                break
        self.log_row(decision, outcome=decision.outcome, payload=payload, chain=chain, t=t,
                     extra=extra, card=node)

    def refused_or_counted(self, decision: Decision, payload: str | None) -> None:
        """Inside a write: a refusal found while performing gets its row unless suppressed."""
        key, node, limit = self._budget_of(decision.card)
        if self._admit(decision, key, node, limit):
            self._refused_row(decision, payload, None, key)

    def write_suppressed(self, key: str | None) -> None:
        """Inside a write: the row that sums up a card's suppressed refusals."""
        held = self.denials.held.pop(key, None)
        if held is None:
            return
        calls = list(held.calls)
        codes = list(held.codes)
        self.ctx.store.log.append_fields([
            None, held.last, held.workspace, None, held.card, held.package, None,
            calls[0] if len(calls) == 1 else None, None,
            json.dumps(held.summary(), sort_keys=True), None, "suppressed",
            codes[0] if len(codes) == 1 and codes[0] != "none" else None,
            f"{held.count} refusals not logged row by row", None, None,
        ])

    def flush_suppressed(self) -> None:
        """Write every pending `suppressed` row (at close)."""
        if not self.denials.held:
            return
        with self.ctx.write():
            for key in list(self.denials.held):
                self.write_suppressed(key)
