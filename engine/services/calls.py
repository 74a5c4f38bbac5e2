"""Calls a card makes (SPEC §5): decide, carry out, log; port data and tool calls."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from canvas import (
    Arrow,
    Node,
    WorkspaceSettings,
)
from engine.core.catalogue import CALLS, PORT_INPUTS, PORT_OUTPUTS
from engine.core.checks import (
    SHOWN,
    Passed,
    check_card,
    data_problem,
    decide,
    denial,
    malformed,
    shown,
)
from engine.core.decision import Decision
from engine.core.limits import rate_owner

if TYPE_CHECKING:
    from engine.engine import Engine

from engine.store.log import FIELDS, clip_payload
from engine.store.transactions import consistent

# `_log_row` lists a row's fields by position, for speed: fail at import, not
# in a hash, if the log's field order ever changes.
if FIELDS != ("seq", "t", "workspace", "arrow", "card", "package", "version", "call", "target",
              "payload", "chain", "outcome", "code", "reason", "approver", "prompt"):
    raise ImportError("engine.services.calls._log_row does not match engine.log.FIELDS")

__all__ = ["CallsMixin"]

#: The refusal budget of calls in the name of no card on the canvas.
_DEFAULT_DENIAL_LIMIT = WorkspaceSettings().denial_log_limit


class CallsMixin:
    """Cards' calls, port data and agents' tool calls."""

    @consistent
    async def call(self: Engine, card: str, call: str, target: str | None = None,
                   args: dict[str, Any] | None = None, *, context: str | None = None) -> Decision:
        """A card makes a call; returns the decision (never raises for a refusal).

        Whatever the arguments hold (any type, any size, lone surrogates), the
        answer is a logged `Decision`: bad input is ``INVALID_ARGUMENT`` (or
        ``CARD_UNKNOWN``, ``UNKNOWN_CALL``) in the order of SPEC §5.

        Args:
            context: the id of the tool call this call runs in (SPEC §9);
                the engine keeps its causal chain, the card only names it.
                A prompt made without one while the card has tool calls open
                is checked against the chain of each of them.
        """
        self._tick()
        now = self.now()
        if not (type(card) is str and type(call) is str and card.isascii() and call.isascii()
                and (target is None or type(target) is str and target.isascii())):
            refusal = malformed(self.state, card, call, target)
            if refusal is not None:
                return self._log_refusal(refusal, None, args)
        chain: tuple[str, ...] | None = None
        if context is not None:
            tool = self._tool_calls.get(context) if type(context) is str else None
            if tool is None or tool[1] != card:
                decision = denial(call, card, "INVALID_ARGUMENT", target=target,
                                  reason="context", why="no tool call of this card has that id")
                return self._log_refusal(decision, None, args)
            chain = tool[2]
        if args is not None and type(args) is not dict:
            found = check_card(self.state, card, call, target)
            if isinstance(found, Decision):
                return self._log_refusal(found, None, None)
            return self._log_refusal(denial(call, card, "INVALID_ARGUMENT", target=target,
                                            package=found[1].name, reason="args",
                                            why="args must be an object"), None, None)
        if chain is None and call == "agents.prompt" and self._tool_calls:
            chains = self._open_chains(card, now)
            if chains:
                result, chain = self._decide_in_chains(chains, card, call, target, args, now)
                if isinstance(result, Decision):
                    return self._log_refusal(result, chain, args)
                return await self._carry_out(result, args or {}, now)
        result = decide(self.state, card, call, target, args, now=now, chain=chain)
        if isinstance(result, Decision):
            return self._log_refusal(result, chain, args)
        return await self._carry_out(result, args or {}, now)

    def _open_chains(self: Engine, card: str, now: float) -> list[tuple[str, ...]]:
        """The causal chains of the card's open tool calls, oldest first.

        A tool call is open until the card's tool timeout has passed since it
        began (the answer that closes it earlier comes with the round trip).
        """
        node = self.state.canvas.node(card)
        if node is None or node.type != "card":
            return []
        timeout = self.state.workspace_of(node).settings.tool_timeout
        return [chain for tool_id, (_agent, owner, chain) in self._tool_calls.items()
                if owner == card and now < self._tool_opened.get(tool_id, -math.inf) + timeout]

    def _decide_in_chains(self: Engine, chains: list[tuple[str, ...]], card: str, call: str,
                          target: str | None, args: dict[str, Any] | None, now: float, *,
                          port_arrow: Arrow | None = None
                          ) -> tuple[Decision | Passed, tuple[str, ...]]:
        """A prompt made in no named context while tool calls are open (SPEC §9).

        Checked against the chain of every open tool call and refused if any
        would refuse it; it goes on (and is logged) with the longest chain, the
        newest of equally long ones. Returns the decision and that chain.
        """
        longest = chains[0]
        for chain in chains:
            if len(chain) >= len(longest):
                longest = chain
        passed: Decision | Passed | None = None
        for chain in sorted(chains, key=len, reverse=True):
            result = decide(self.state, card, call, target, args, now=now, chain=chain,
                            port_arrow=port_arrow)
            if isinstance(result, Decision):
                return result, longest
            if chain is longest:
                passed = result
        assert passed is not None
        return passed, longest

    def _payload(self: Engine, call: str, args: Any) -> str | None:
        spec = CALLS.get(call)
        if spec is None or type(args) is not dict or not args:
            return None
        if spec.payload_arg and type(value := args.get(spec.payload_arg)) is str:
            return value
        return None

    def _log_row(self: Engine, decision: Decision, *, outcome: str, payload: str | None,
                 chain: tuple[str, ...] | list[str] | None, t: float | None = None,
                 approver: str | None = None,
                 extra: tuple[int | None, str | None] | None = None) -> None:
        held = self._denials.held
        if held and decision.card in held:
            # The card's suppressed refusals come first (SPEC §8 "Bounds").
            self._write_suppressed(decision.card)
        card = self.state.canvas.node(decision.card or "")
        package = decision.package
        pkg = self.state.packages.get(package or "")
        # The fields in the order of `log.FIELDS` (checked at import, above).
        values = [
            None, self.now() if t is None else t, card.workspace if card else None,
            decision.arrow, decision.card, package,
            pkg.hash if pkg is not None and pkg.installed else None, decision.call,
            decision.target, payload, list(chain) if chain is not None else None, outcome,
            decision.code, decision.reason, approver, decision.prompt,
        ]
        if extra is None:
            self.log.append_fields(values)
        else:
            self.log.append_fields(values, extra)

    def _log_refusal(self: Engine, decision: Decision, chain: tuple[str, ...] | None,
                     args: Any) -> Decision:
        """A refused call writes nothing but its log row (or counts toward a `suppressed` one)."""
        if decision.arrow is None and decision.target and decision.card:
            arrow = self.state.canvas.arrow_between(decision.card, decision.target)
            if arrow is not None:
                decision = decision.with_(arrow=arrow.id)
        key = self._denial_key(decision)
        if not self._admit_refusal(decision, key):
            return decision
        # A summary row to write first needs a savepoint; a lone row does not.
        with self._write(one_statement=key not in self._denials.held):
            self._log_refused_row(decision, self._payload(decision.call, args), chain)
        return decision

    def _denial_key(self: Engine, decision: Decision) -> str | None:
        """Whose refusal budget a refusal counts in: its card's, or one for unknown cards."""
        node = self.state.canvas.node(decision.card) if decision.card else None
        return decision.card if node is not None and node.type == "card" else None

    def _admit_refusal(self: Engine, decision: Decision, key: str | None) -> bool:
        """True when the refusal gets its own row; else it is counted for a `suppressed` row."""
        node = self.state.canvas.node(key) if key is not None else None
        limit = (self.state.workspace_of(node).settings.denial_log_limit if node is not None
                 else _DEFAULT_DENIAL_LIMIT)
        t = self.now()
        if self._denials.admit(key, t, limit):
            return True
        self._denials.suppress(key, t, card=key, package=decision.package if key else None,
                               workspace=node.workspace if node is not None else None,
                               code=decision.code, call=decision.call)
        return False

    def _log_refused_row(self: Engine, decision: Decision, payload: str | None,
                         chain: tuple[str, ...] | None) -> None:
        """A refusal's row, inside a write: 4 KiB of its payload with the whole one's
        length and SHA-256, and the names the card chose cut to a bounded size."""
        key = self._denial_key(decision)
        if key is None and key in self._denials.held:
            # Cards the canvas does not hold share a summary; `_log_row`
            # writes a real card's before its next row.
            self._write_suppressed(None)
        extra: tuple[int | None, str | None] | None = None
        if payload is not None:
            payload, size, digest = clip_payload(payload)
            if size is not None:
                extra = (size, digest)
        if any(type(x) is str and len(x) > SHOWN
               for x in (decision.card, decision.call, decision.target, decision.reason)):
            decision = decision.with_(**{
                name: value[:SHOWN] + "…"
                for name in ("card", "call", "target", "reason")
                if type(value := getattr(decision, name)) is str and len(value) > SHOWN})
        self._log_row(decision, outcome=decision.outcome, payload=payload, chain=chain,
                      extra=extra)

    def _write_suppressed(self: Engine, key: str | None) -> None:
        """Inside a write: the row that sums up a card's suppressed refusals."""
        held = self._denials.held.pop(key, None)
        if held is None:
            return
        calls = list(held.calls)
        codes = list(held.codes)
        self.log.append_fields([
            None, held.last, held.workspace, None, held.card, held.package, None,
            calls[0] if len(calls) == 1 else None, None,
            json.dumps(held.summary(), sort_keys=True), None, "suppressed",
            codes[0] if len(codes) == 1 and codes[0] != "none" else None,
            f"{held.count} refusals not logged row by row", None, None,
        ])

    def _log_suppressed(self: Engine) -> None:
        """Write every pending `suppressed` row (at close)."""
        if not self._denials.held:
            return
        with self._write():
            for key in list(self._denials.held):
                self._write_suppressed(key)

    async def _carry_out(self: Engine, passed: Passed, args: dict[str, Any], now: float) -> Decision:
        spec = passed.spec
        card = passed.card
        decision = Decision("ok", spec.name, card.id, passed.package.name,
                            passed.target.id if passed.target else None, passed.permission,
                            arrow=passed.arrow.id if passed.arrow else None,
                            message=f"ok: card {card.id} ({passed.package.name}) {spec.name}")
        payload = self._payload(spec.name, args)
        if spec.name == "net.fetch" or spec.name.startswith("fs."):
            # A request may take seconds and file work runs in a thread (a
            # slow disk must not stall other calls): never hold the write
            # lock for either.
            value = await (self.world.fetch if spec.name == "net.fetch"
                           else self.world.files)(self, passed, args)
            with self._write():
                if isinstance(value, Decision):
                    if "logged" in value.extra:
                        # A fetch abandoned in flight was allowed, then consent went:
                        # it is logged `cancelled` (SPEC §8.1), never suppressed.
                        self._log_row(value, outcome=value.extra["logged"],
                                      payload=payload, chain=None)
                    elif self._admit_refusal(value, self._denial_key(value)):
                        self._log_refused_row(value, payload, None)
                    return value
                decision = decision.with_(value=value)
                self._log_row(decision, outcome="ok", payload=payload, chain=None)
            return decision
        if spec.name == "agents.prompt":
            assert passed.target is not None
            with self._write():
                prompt = self._new_prompt(passed, str(args["text"]), now)
                return await self._accept_prompt(prompt, decision, passed, now)
        with self._write():
            if passed.rate_key is not None:
                self._count(card.id, passed.rate_key, now)
            value = self.world.perform(self, passed, args, now)
            if isinstance(value, Decision):  # refused by scope while performing
                if self._admit_refusal(value, self._denial_key(value)):
                    self._log_refused_row(value, payload, None)
                return value
            decision = decision.with_(value=value)
            if spec.name == "canvas.spawn":
                decision = decision.with_(target=value, arrow=f"{card.id}->{value}")
            self._log_row(decision, outcome="ok", payload=payload, chain=None)
        return decision

    def _count(self: Engine, card: str, key: str, now: float) -> None:
        # Copies of a card count in the windows of their spawn tree's root (SPEC §6).
        owner = rate_owner(self.state.canvas, card)
        self.db.execute("insert into rate_events (card, key, t) values (?, ?, ?)",
                        [owner, key, now])
        self.state.counters.count(owner, key, now)

    @consistent
    async def emit(self: Engine, card: str, port: str, data: Any, *,
                   context: str | None = None) -> dict[str, Decision]:
        """A card puts data on an output port; it travels every port arrow from it.

        Returns the decision for each port arrow, by arrow id. When the emit
        itself is refused (unknown card, package not installed or pending, no
        such output port) the one refusal is under the key ``""``.
        """
        self._tick()
        now = self.now()
        call = f"port:{port}" if type(port) is str else f"port:{shown(port)}"
        if not (type(card) is str and card.isascii()):
            refusal = malformed(self.state, card, shown(call), None)
            if refusal is not None:
                return {"": self._log_refusal(refusal, None, None)}
        found = check_card(self.state, card, shown(call))
        if isinstance(found, Decision):
            return {"": self._log_refusal(found, None, None)}
        node = found[0]
        _inputs, outputs = self.state.canvas.ports(node)
        if type(port) is not str or port not in outputs:
            refusal = denial(shown(call), card, "INVALID_ARGUMENT", package=node.data["package"],
                             reason="port", why=f"{card} has no output port {shown(port)!r}")
            return {"": self._log_refusal(refusal, None, None)}
        limit = self.state.workspace_of(node).settings.max_payload
        problem = data_problem(data, limit)
        if problem is None and type(data) is not str and len(json.dumps(data)) > limit:
            problem = f"is more than max_payload ({limit}) bytes as JSON"
        if problem is not None:
            refusal = denial(call, card, "INVALID_ARGUMENT", package=node.data["package"],
                             reason="data", why=f"the data {problem}")
            return {"": self._log_refusal(refusal, None, None)}
        chain = None
        if context is not None:
            tool = self._tool_calls.get(context) if type(context) is str else None
            chain = tool[2] if tool and tool[1] == card else None
        results: dict[str, Decision] = {}
        for arrow in self.state.canvas.port_arrows_from(card, port):
            results[arrow.id] = await self._deliver_port(node, arrow, data, now, chain)
        return results

    async def _deliver_port(self: Engine, card: Node, arrow: Arrow, data: Any, now: float,
                            chain: tuple[str, ...] | None) -> Decision:
        target = self.state.canvas.node(arrow.dst)
        assert target is not None and arrow.to_port is not None
        if target.type == "card":
            # Card to card: both declared the ports and a person drew the
            # arrow, which is the consent for this data (SPEC §1).
            decision = Decision("ok", f"port:{arrow.from_port}", card.id, card.data["package"],
                                target.id, None, arrow=arrow.id,
                                message=f"ok: {card.id}.{arrow.from_port} -> "
                                        f"{target.id}.{arrow.to_port}")
            with self._write():
                self._emit("port.data", target.id, port=arrow.to_port, data=data,
                           source=card.id, arrow=arrow.id)
                self._log_row(decision, outcome="ok",
                              payload=data if isinstance(data, str) else json.dumps(data),
                              chain=None)
            return decision
        spec = PORT_INPUTS[(target.type, arrow.to_port)]
        arg = "command" if spec.action == "terminals.run" else "text"
        if not isinstance(data, str):
            return self._log_refusal(denial(spec.action, card.id, "INVALID_ARGUMENT",
                                            package=card.data["package"], target=target.id,
                                            reason="data", arrow=arrow.id,
                                            why="port data for this input must be text"),
                                     None, None)
        chains = self._open_chains(card.id, now) if (
            chain is None and spec.action == "agents.prompt" and self._tool_calls) else []
        result: Decision | Passed
        if chains:
            result, chain = self._decide_in_chains(chains, card.id, spec.action, target.id,
                                                   {arg: data}, now, port_arrow=arrow)
        else:
            result = decide(self.state, card.id, spec.action, target.id, {arg: data}, now=now,
                            chain=chain, port_arrow=arrow)
        if isinstance(result, Decision):
            return self._log_refusal(result.with_(arrow=arrow.id), chain, {arg: data})
        if spec.action == "agents.prompt":
            base = Decision("ok", "agents.prompt", card.id, result.package.name, target.id,
                            result.permission, arrow=arrow.id, message="ok")
            with self._write():
                prompt = self._new_prompt(result, data, now, call="port:prompt")
                return await self._accept_prompt(prompt, base, result, now)
        return await self._carry_out(result, {arg: data}, now)

    def _node_output(self: Engine, node: Node, port: str, data: Any) -> None:
        """A built-in node's output port: data to each card a port arrow leads to.

        Inside the caller's transaction. The receiving card needs the port's
        permission (`PORT_OUTPUTS`); each delivery or refusal is a row on the
        arrow's log, and the card's subscriptions check again when it takes it.
        """
        permission = PORT_OUTPUTS.get((node.type, port))
        if permission is None:
            return
        call = f"port:{port}"
        payload = data if isinstance(data, str) else json.dumps(data)
        for arrow in self.state.canvas.port_arrows_from(node.id, port):
            found = check_card(self.state, arrow.dst, call, node.id)
            if isinstance(found, Decision):
                if found.code == "CARD_UNKNOWN":
                    continue  # into a built-in card: nothing to tell
                self._log_row(found.with_(arrow=arrow.id), outcome=found.outcome,
                              payload=payload, chain=None)
                continue
            card, pkg = found
            if not (self.state.declares(pkg, permission)
                    and self.state.granted(pkg.name, permission)):
                reason = "not-declared" if not self.state.declares(pkg, permission) \
                    else "not-granted"
                refusal = denial(call, card.id, "PERMISSION_DENIED", package=pkg.name,
                                 target=node.id, permission=permission, reason=reason,
                                 arrow=arrow.id,
                                 why=f"data from {node.type} port {port!r} needs {permission}")
                self._log_row(refusal, outcome="denied", payload=payload, chain=None)
                continue
            decision = Decision("ok", call, card.id, pkg.name, node.id, permission,
                                arrow=arrow.id,
                                message=f"ok: {node.id}.{port} -> {card.id}.{arrow.to_port}")
            self._emit("port.data", card.id, port=arrow.to_port, data=data, source=node.id,
                       arrow=arrow.id)
            self._log_row(decision, outcome="ok", payload=payload, chain=None)
