"""What the engine writes about calls: arrow log rows, bounded refusals, counted rate events.

Every call's outcome is one row on its arrow's log (SPEC §8). Refusals are
bounded per card (`DenialLog`): beyond ``denial_log_limit`` in a window they
are counted, and one ``suppressed`` row sums them up before the card's next
row and at close. The count is kept in the store, not in memory
(`engine.store.pending`): each suppressed refusal upserts its budget's pending
summary in the batch that answers it, so it is durable when answered, and a
killed process's summaries are written by the next engine to open the store.
Accepted calls that count toward a rolling window leave a rate event in the
same transaction as their row.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

from canvas import Node, WorkspaceSettings
from engine.core.catalogue import CALLS
from engine.core.checks import SETTING_LIMITS, on_the_clock, window_limit
from engine.core.decision import Decision
from engine.core.limits import DenialLog, Suppressed, rate_owner
from engine.core.prompts import IN_PLAY, Prompt
from engine.core.state import State
from engine.core.text import SHOWN
from engine.services.context import Context, Gone
from engine.store.encoding import dumps_sorted
from engine.store.log import FIELDS, PAYLOAD_KEPT, RowKind, clip_payload
from engine.store.pending import row_key

# `log_row` lists a row's fields by position, for speed: fail at import, not
# in a hash, if the log's field order ever changes.
if FIELDS != ("seq", "t", "workspace", "arrow", "card", "package", "version", "call", "target",
              "payload", "chain", "outcome", "code", "reason", "approver", "prompt"):
    raise ImportError("engine.services.record.Recorder.log_row does not match "
                      "engine.store.log.FIELDS")

__all__ = ["Recorder"]

#: The refusal budget of calls in the name of no card on the canvas.
_DEFAULT_DENIAL_LIMIT = WorkspaceSettings().denial_log_limit
#: Remembered refusals `Recorder` keeps at most (as many as the decision cache, about).
_KNOWN_MAX = 4096


def _payload_arg(call: str) -> str | None:
    # The argument whose text a call's log row keeps, if the call has one.
    spec = CALLS.get(call)
    return spec.payload_arg or None if spec is not None else None


def _payload_of(arg: str | None, args: Any,
                encode: Callable[[Any], str | None] | None) -> str | None:
    """The payload a call's log row keeps: ``encode(args)`` when the caller gives how
    (a tool call's arguments, as JSON), else ``args``'s argument ``arg``: its text,
    or its JSON when the card sent something else there (refused at check 3, and
    logged with what it was: SPEC §8), None only when that is not JSON at all.

    The one place that chooses, for both of `Recorder.refusal`'s ways to a row; it
    is called only once a row is to be written, so that a refusal counted toward a
    `suppressed` row pays for no encoding.
    """
    if encode is not None:
        return encode(args)
    value = args.get(arg) if arg is not None and type(args) is dict else None
    if value is None or type(value) is str:
        return value
    try:
        return dumps_sorted(value)
    except (TypeError, ValueError, RecursionError):
        return None


class _Known(NamedTuple):
    """What the row of a refusal the decision cache remembers needs (`Recorder._remember`),
    worked out once: the same for every such call until the state it was read from
    changes."""

    decision: Decision  #: the decision the cache holds (kept: its id is the key)
    answer: Decision  #: what the call is answered (the arrow between card and target put in)
    key: str | None  #: its refusal budget (`Recorder._budget_of`)
    node: Node | None  #: the card's node
    limit: int  #: the budget's denial_log_limit
    row_card: str | None  #: the card as its row names it (`Recorder._shown`)
    payload_arg: str | None  #: the argument the row keeps as its payload
    kind: RowKind  #: the row's kind (`engine.store.log.ArrowLog.row_kind`)
    alone: Callable[[Any, float, str | None], None]  #: the store's `append_alone`
    consent: int  #: the consent revision it was read at (of `Recorder._known_state`)
    canvas: int  #: ... and the canvas's revision


class Recorder:
    """Writes log rows and rate events inside the caller's transaction."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        #: Which refusals get a log row of their own (SPEC §8 "Bounds").
        self.denials = DenialLog()
        #: The budget keys with a pending summary in the store, as far as this
        #: engine knows (`State.suppressed`, the very set, bound again with each
        #: state: `_take_pending`): those the store held when the state was last
        #: loaded (a killed engine's), those another engine created since (the
        #: catch-up adds them), and those this engine's refusals made. A key here
        #: whose summary is gone (another engine wrote it) costs one read.
        self._pending: set[str | None] = ctx.state.suppressed
        #: Pending summaries read or written in the open batch, by budget key
        #: (None: it has none), and the (batch, reload count) they belong to: the
        #: batch holds the store's write lock, so they stay true while it is
        #: open and no failed write was undone (`_held`).
        self._mirror: dict[str | None, Suppressed | None] = {}
        self._mirror_of: tuple[object, int] | None = None
        #: The store's way to append a lone row of a known kind, when it has one
        #: (SQLite's `Transactions.append_alone`), and to work a row's kind out.
        self._alone: Callable[[Any, float, str | None], None] | None = getattr(
            ctx.store, "append_alone", None)
        self._row_kind: Callable[[list[Any]], Any] | None = getattr(
            ctx.store.log, "row_kind", None) if self._alone is not None else None
        #: What a remembered refusal's row needs (`_Known`), by the id of the
        #: decision the decision cache holds; bounded (emptied when full), and
        #: all of it read from one state (`_known_state`), let go of at a reload.
        self._known: dict[int, _Known] = {}
        self._known_state: State | None = None
        ctx.on_reload(self._forget_known)
        ctx.on_reload(self._take_pending)
        ctx.on_gone(self._let_go)

    @staticmethod
    def payload(call: str, args: Any) -> str | None:
        """The text of a call's arguments that its log row keeps (its payload argument)."""
        return _payload_of(_payload_arg(call), args, None)

    def count(self, card: str, key: str, now: float) -> None:
        """Count an accepted call in its rolling window (inside a write)."""
        state = self.ctx.state
        # Copies of a card count in the windows of their spawn tree's root (SPEC §6).
        owner = rate_owner(state.canvas, card)
        self.ctx.store.count_rate_event(owner, key, now)
        state.counters.count(owner, key, now)

    def save_prompt(self, prompt: Prompt) -> None:
        """Write a prompt as it now stands, and index it (inside a write)."""
        state = self.ctx.state
        state.open_prompts.update(prompt)
        if prompt.state not in IN_PLAY:
            # Finished: the oldest finished past the bound leaves memory.
            state.prompts.finished(prompt)
        self.ctx.store.save_prompt(prompt)

    def forget_windows(self, card: str) -> None:
        """A removed card's rate windows go, in the store too (inside a write).

        A reload (restart, another process) must not hand them to a new node
        with its id.
        """
        self.ctx.store.forget_rate_events(card)
        self.ctx.state.counters.forget(card)

    def move_windows(self, card: str, heir: str) -> None:
        """A removed spawn root's windows go to the copy that is the root now
        (inside a write), in the store too, so a reload reads them there."""
        self.ctx.store.move_rate_events(card, heir)
        self.ctx.state.counters.move(card, heir)

    def log_row(self, decision: Decision, *, outcome: str, payload: str | None,
                chain: tuple[str, ...] | list[str] | None, t: float | None = None,
                approver: str | None = None,
                extra: tuple[int | None, str | None] | None = None,
                card: Node | None = None) -> None:
        """Append the decision's row to the arrow log (inside a write).

        ``card``: the node of ``decision.card`` when the caller has it at hand.
        """
        pending = self._pending
        if pending and decision.card in pending:
            # The card's suppressed refusals come first (SPEC §8 "Bounds").
            self.write_suppressed(decision.card)
        values = self._row_values(decision, outcome, payload, chain, t, approver, card)
        if extra is None:
            self.ctx.store.log.append_fields(values)
        else:
            self.ctx.store.log.append_fields(values, extra)

    def _row_values(self, decision: Decision, outcome: str, payload: str | None,
                    chain: tuple[str, ...] | list[str] | None, t: float | None,
                    approver: str | None, card: Node | None) -> list[Any]:
        """The decision's row as its `FIELDS` in order (``seq`` None, ``t`` None: now)."""
        state = self.ctx.state
        if card is None:
            card = state.canvas.node(decision.card or "")
        package = decision.package
        pkg = state.packages.get(package or "")
        # The fields in the order of `log.FIELDS` (checked at import, above).
        return [
            None, self.ctx.now() if t is None else t, card.workspace if card else None,
            decision.arrow, decision.card, package,
            pkg.hash if pkg is not None and pkg.installed else None, decision.call,
            decision.target, payload, list(chain) if chain is not None else None, outcome,
            decision.code, decision.reason, approver, decision.prompt,
        ]

    def refusal(self, decision: Decision, chain: tuple[str, ...] | None, args: Any,
                now: float | None = None, *,
                encode: Callable[[Any], str | None] | None = None) -> Decision:
        """A refused call writes nothing but its log row (or counts toward a `suppressed` one).

        ``now``: the time the call was decided at (read when not given), the row's time.
        ``encode``: the payload its row keeps when that is not one of ``args`` (a tool
        call's arguments as JSON), called only when the row is written (`_payload_of`);
        cut as any refused payload is (`clip_payload`).
        """
        if decision.code == "RATE_LIMITED":
            # Told on the caller's clock while time stands still (SPEC §6).
            behind = self.ctx.clock.behind()
            if behind > 0.0:
                whose = self.ctx.state.canvas.node(decision.card or "")
                limit = (window_limit(self.ctx.state, whose, str(decision.reason))
                         if whose is not None and decision.reason in SETTING_LIMITS else None)
                decision = on_the_clock(decision, behind, limit)
        state = self.ctx.state
        known = self._known.get(id(decision)) if chain is None else None
        if (known is not None and known.decision is decision and self._known_state is state
                and known.consent == state.consent_rev
                and known.canvas == state.canvas.revision):
            # A refusal the decision cache remembers, met before since anything
            # its row reads last changed: everything but the call's time and
            # payload was worked out then (`_remember`).
            answer, key = known.answer, known.key
            t = self.ctx.now() if now is None else now
            if not self.denials.admit(key, t, known.limit):
                self._suppress(answer, key, known.node, t)
                return answer
            payload = _payload_of(known.payload_arg, args, encode)
            if payload is not None and not (len(payload) <= PAYLOAD_KEPT and payload.isascii()):
                # Cut or escaped (`clip_payload`): its row has the extra fields.
                return self._write_refusal(answer, payload, None, key, t, known.node)
            pending = self._pending
            if (pending and (key in pending or known.row_card in pending)) or not (
                    type(t) is float and t - t == 0.0):
                # A `suppressed` row to write first (`_refused_row`, `log_row`:
                # another card's do not matter), or a time the row's JSON is not
                # `float.__repr__`'s (`append_fields`).
                return self._write_refusal(answer, payload, None, key, t, known.node)
            known.alone(known.kind, t, payload)
            return answer
        card = decision.card  # read once: a Decision's attributes are not free
        cached = decision
        if decision.arrow is None and decision.target and card:
            arrow = state.canvas.arrow_between(card, decision.target)
            if arrow is not None:
                decision = decision.with_(arrow=arrow.id)
        key, node, limit = self._budget_of(card)
        t = self.ctx.now() if now is None else now
        if self._admit(decision, key, node, limit, t):
            self._write_refusal(decision, _payload_of(_payload_arg(decision.call), args, encode),
                                chain, key, t, node)
        if chain is None and self._row_kind is not None:
            self._remember(cached, decision, key, node, limit)
        return decision

    def _write_refusal(self, decision: Decision, payload: str | None,
                       chain: tuple[str, ...] | None, key: str | None, t: float,
                       node: Node | None) -> Decision:
        # A refusal admitted to a row of its own: written as an operation.
        # A summary row to write first needs a savepoint; a lone row does not.
        with self.ctx.write(one_statement=key not in self._pending):
            self._refused_row(decision, payload, chain, key, t, node)
        return decision

    def _remember(self, cached: Decision, answer: Decision, key: str | None,
                  node: Node | None, limit: int) -> None:
        """Keep what the row of ``cached``'s refusals needs (`_Known`) when the decision
        cache holds ``cached`` for its call: the next such refusal costs the row alone.

        Everything kept is read from the state (the arrow, the card's node, its
        workspace's denial limit, its package's version) and stands until the
        consent revision or the canvas's moves on, which `refusal` checks; a
        decision the cache does not hold (made afresh each time) is not kept.
        """
        state = self.ctx.state
        card = cached.card
        if (card is None or state.cache_consent != state.consent_rev
                or state.cache_canvas != state.canvas.revision
                or state.cache.get((card, cached.call, cached.target)) is not cached):
            return
        row_decision, row_node = self._shown(answer, node)
        values = self._row_values(row_decision, row_decision.outcome, None, None, 0.0, None,
                                  row_node)
        assert self._row_kind is not None and self._alone is not None
        kind = self._row_kind(values)
        if kind is None:
            return
        spec = CALLS.get(answer.call)
        known = self._known
        if len(known) >= _KNOWN_MAX or self._known_state is not state:
            known.clear()
            self._known_state = state
        known[id(cached)] = _Known(cached, answer, key, node, limit, row_decision.card,
                                   spec.payload_arg or None if spec is not None else None,
                                   kind,
                                   self._alone, state.consent_rev, state.canvas.revision)

    def _forget_known(self) -> None:
        # The state was replaced (`Context.reload`): what was read from it goes.
        self._known.clear()
        self._known_state = None

    def _let_go(self, how: Gone) -> None:
        """Nodes left the canvas: their refusal budgets go, and so do their keys among
        the pending summaries (`_pending`) — each written as its ``suppressed`` row by
        the removal's own write, since the node will have no next row to precede.

        ``here`` (inside this engine's removal): the row is written now. ``caught-up``:
        the engine that removed the node wrote it in its removal; a summary it left
        (older code) is written by the next engine to open the store, as a killed
        process's is. ``reloaded``: the keys are the store's, just read, and stay, so
        that the next row, the close or the open writes them (SPEC §8 "Bounds").
        """
        live = self.ctx.state.canvas.has_node
        self.denials.keep(live)
        pending = self._pending
        if how == "reloaded" or not pending:
            return
        for key in [k for k in pending if k is not None and not live(k)]:
            if how == "here":
                self.write_suppressed(key)
            else:
                pending.discard(key)

    def writes_alone(self, card: str) -> bool:
        """True when `log_row` for ``card`` appends its row and nothing else: no row
        summing up the card's suppressed refusals goes first (writing that one deletes
        their pending summary too, so its write needs a savepoint)."""
        return card not in self._pending

    def _budget_of(self, card: str | None) -> tuple[str | None, Node | None, int]:
        # The refusal budget a refusal counts in: its key (the card's id, None
        # for the one budget of cards the canvas does not hold), the card's
        # node and the limit, from one look-up of the card (every refusal
        # passes here).
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
        self._suppress(decision, key, node, t)
        return False

    def _suppress(self, decision: Decision, key: str | None, node: Node | None, t: float,
                  *, sender: Node | None = None) -> None:
        """A refusal beyond its budget: counted toward the budget's pending summary in the
        store, in a write of its own (or the caller's), so that the answer, given once the
        batch has committed, is durable like a row's.

        ``node``: the card ``key`` names; ``sender``: the agent or terminal whose port
        delivery was refused, when the budget is its own (`refused_delivery`).
        """
        # No savepoint, though more than one statement may run: the summary's read
        # (`_held`) first writes the rows earlier operations left to the commit
        # (`DeferredRows.write`, all of them or none), then comes this refusal's
        # upsert (one statement, or a row left to the commit). A failure that left
        # rows changed fails the whole batch, closed (`Transactions.undo` compares
        # the connection's changes); one that did not changes nothing. No memory
        # is changed before them but the batch's summaries, which an undo forgets
        # (`_take_pending`).
        with self.ctx.write(one_statement=True):
            held = self._held(key)
            if held is None:
                if sender is not None:
                    held = Suppressed(None, None, sender.workspace, t, t, target=sender.id)
                else:
                    held = Suppressed(key, decision.package if key else None,
                                      node.workspace if node is not None else None, t, t)
            held.add(t, decision.code, decision.call)
            # The whole summary as it now stands (merged under the write lock):
            # on SQLite left to the commit, many refusals of a batch in one.
            self.ctx.store.save_pending_summary(key, held)
            self._mirror[key] = held
            self._pending.add(key)

    def _held(self, key: str | None) -> Suppressed | None:
        """Inside a write: the pending summary of budget ``key`` as the batch now has it,
        read from the store once a batch (the batch holds the write lock, so no other
        engine changes it meanwhile) and kept in `_mirror` for the batch's other
        refusals of that budget."""
        tag = (self.ctx.store.batch, self.ctx.reloads)
        mirror = self._mirror
        if self._mirror_of != tag:
            mirror.clear()
            self._mirror_of = tag
        elif key in mirror:
            return mirror[key]
        held = mirror[key] = self.ctx.store.pending_summary(key)
        return held

    def _take_pending(self) -> None:
        # The state was loaded again (at open, after a failed write was undone, or
        # when another process's commit could not be applied change by change):
        # what this engine held of the batch may have been rolled back, and the
        # new state's keys are the store's as it was read (`State.suppressed`).
        self._mirror.clear()
        self._mirror_of = None
        self._pending = self.ctx.state.suppressed

    def _refused_row(self, decision: Decision, payload: str | None,
                     chain: tuple[str, ...] | None, key: str | None, t: float | None = None,
                     node: Node | None = None) -> None:
        # A refusal's row, inside a write: 4 KiB of its payload with the whole
        # one's length and SHA-256, and the names the card chose cut to a
        # bounded size. ``key`` is its refusal budget (`_budget_of`), ``t``
        # the row's time (None: now), ``node`` the card's when known.
        if key is None and key in self._pending:
            # Cards the canvas does not hold share a summary; `log_row`
            # writes a real card's before its next row.
            self.write_suppressed(None)
        extra: tuple[int | None, str | None] | None = None
        if payload is not None:
            payload, size, digest = clip_payload(payload)
            if size is not None:
                extra = (size, digest)
        decision, node = self._shown(decision, node)
        self.log_row(decision, outcome=decision.outcome, payload=payload, chain=chain, t=t,
                     extra=extra, card=node)

    def _shown(self, decision: Decision, node: Node | None) -> tuple[Decision, Node | None]:
        # The decision as its row names it: the names the card chose cut to
        # `SHOWN` characters, so that a card cannot fill the log with them.
        # A loop, not any() over a generator: every refusal passes here.
        for x in (decision.card, decision.call, decision.target, decision.reason):
            if type(x) is str and len(x) > SHOWN:
                return self._cut(decision, node)
        return decision, node

    def _cut(self, decision: Decision, node: Node | None) -> tuple[Decision, Node | None]:
        # `_shown` with a long name: a card or target the canvas holds is
        # written whole (its id is already in the store, and `log_rows(card=…)`
        # and the card's `suppressed` row look it up whole); only names no node
        # has are cut (and a cut card has no node: None).
        canvas = self.ctx.state.canvas
        if node is None and type(decision.card) is str:
            node = canvas.node(decision.card)
        cut = {
            name: value[:SHOWN] + "…"
            for name in ("card", "call", "target", "reason")
            if type(value := getattr(decision, name)) is str and len(value) > SHOWN
            and not (name == "card" and node is not None)
            and not (name == "target" and canvas.node(value) is not None)}
        return decision.with_(**cut), node if "card" not in cut else None

    def refused_or_counted(self, decision: Decision, payload: str | None, *,
                           chain: tuple[str, ...] | None = None) -> None:
        """Inside a write: a refusal found while performing gets its row unless suppressed.

        ``chain``: the causal chain of the tool call the call was made in, if any.
        """
        key, node, limit = self._budget_of(decision.card)
        if self._admit(decision, key, node, limit):
            self._refused_row(decision, payload, chain, key)

    def refused_delivery(self, decision: Decision, payload: str, sender: Node) -> None:
        """Inside a write: data ``sender`` (an agent or a terminal) sent out on a port,
        refused by the card an arrow leads it to, gets its row as any refusal does
        (4 KiB of the payload with the whole one's length and SHA-256), unless it is
        beyond the sender's ``denial_log_limit``: then it is counted toward the sender's
        `suppressed` row.

        The sender's budget, not the card's: the card did nothing, and an agent or
        terminal whose output is refused in a loop is what would fill the log.
        """
        t = self.ctx.now()
        limit = self.ctx.state.workspace_of(sender).settings.denial_log_limit
        if not self.denials.admit(sender.id, t, limit):
            self._suppress(decision, sender.id, None, t, sender=sender)
            return
        if sender.id in self._pending:
            self.write_suppressed(sender.id)
        self._refused_row(decision, payload, None, sender.id, t)

    def write_suppressed(self, key: str | None) -> None:
        """Inside a write: the row that sums up a card's suppressed refusals, written from
        its pending summary, which goes in the same write (a failed write keeps both as
        they were: the undo reads the pending summaries again, `_take_pending`)."""
        if key not in self._pending:
            return
        held = self._held(key)
        self._pending.discard(key)
        if held is None:
            return  # summed up meanwhile by another engine on the store
        calls = list(held.calls)
        codes = list(held.codes)
        self.ctx.store.log.append_fields([
            None, held.last, held.workspace, None, held.card, held.package, None,
            calls[0] if len(calls) == 1 else None, held.target,
            json.dumps(held.summary(), sort_keys=True), None, "suppressed",
            codes[0] if len(codes) == 1 and codes[0] != "none" else None,
            f"{held.count} refusals not logged row by row", None, None,
        ])
        self.ctx.store.drop_pending_summary(key)
        self._mirror[key] = None

    def flush_suppressed(self) -> None:
        """Write every pending `suppressed` row this engine knows of, in one write: at
        close, and at open, where they are those a killed process left (its "at close",
        SPEC §8) and any a running engine on the same store has not written yet (summed
        up early: their rows go with their summary, never counted twice)."""
        if not self._pending:
            return
        # Counts of refusals already made: written whatever another process committed
        # meanwhile (caught up with, never `Stale`, which would escape `Engine.close`).
        with self.ctx.write_settled():
            for key in sorted(self._pending, key=row_key):
                self.write_suppressed(key)
