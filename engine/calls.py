"""Calls a card makes (SPEC §5): decide, carry out, log; port data and tool calls."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from canvas import (
    Arrow,
    Node,
)

from .catalogue import CALLS, PORT_INPUTS, PORT_OUTPUTS
from .checks import Passed, check_card, decide, denial
from .decision import Decision

if TYPE_CHECKING:
    from .engine import Engine

from .log import FIELDS
from .transactions import consistent

# `_log_row` lists a row's fields by position, for speed: fail at import, not
# in a hash, if the log's field order ever changes.
if FIELDS != ("seq", "t", "workspace", "arrow", "card", "package", "version", "call", "target",
              "payload", "chain", "outcome", "code", "reason", "approver", "prompt"):
    raise ImportError("engine.calls._log_row does not match engine.log.FIELDS")

__all__ = ["CallsMixin"]


class CallsMixin:
    """Cards' calls, port data and agents' tool calls."""

    @consistent
    async def call(self: Engine, card: str, call: str, target: str | None = None,
                   args: dict[str, Any] | None = None, *, context: str | None = None) -> Decision:
        """A card makes a call; returns the decision (never raises for a refusal).

        Args:
            context: the id of the tool call this call runs in (SPEC §9);
                the engine keeps its causal chain, the card only names it.
        """
        self._tick()
        now = self.now()
        chain: tuple[str, ...] | None = None
        if context is not None:
            tool = self._tool_calls.get(context)
            if tool is None or tool[1] != card:
                decision = denial(call, card, "INVALID_ARGUMENT", target=target,
                                  reason="context", why="no tool call of this card has that id")
                return self._log_refusal(decision, None, args)
            chain = tool[2]
        if not isinstance(args, (dict, type(None))):
            return self._log_refusal(denial(call, card, "INVALID_ARGUMENT", target=target,
                                            reason="args", why="args must be an object"),
                                     None, None)
        result = decide(self.state, card, call, target, args, now=now, chain=chain)
        if isinstance(result, Decision):
            return self._log_refusal(result, chain, args)
        return await self._carry_out(result, args or {}, now)

    def _payload(self: Engine, call: str, args: dict[str, Any] | None) -> str | None:
        spec = CALLS.get(call)
        if spec is None or not args:
            return None
        if spec.payload_arg and isinstance(args.get(spec.payload_arg), str):
            return str(args[spec.payload_arg])
        return None

    def _log_row(self: Engine, decision: Decision, *, outcome: str, payload: str | None,
                 chain: tuple[str, ...] | list[str] | None, t: float | None = None,
                 approver: str | None = None) -> None:
        card = self.state.canvas.node(decision.card or "")
        package = decision.package
        pkg = self.state.packages.get(package or "")
        # The fields in the order of `log.FIELDS` (checked at import, above).
        self.log.append_fields([
            None, self.now() if t is None else t, card.workspace if card else None,
            decision.arrow, decision.card, package,
            pkg.hash if pkg is not None and pkg.installed else None, decision.call,
            decision.target, payload, list(chain) if chain is not None else None, outcome,
            decision.code, decision.reason, approver, decision.prompt,
        ])

    def _log_refusal(self: Engine, decision: Decision, chain: tuple[str, ...] | None,
                     args: dict[str, Any] | None) -> Decision:
        """A refused call writes nothing but its log row."""
        if decision.arrow is None and decision.target and decision.card:
            arrow = self.state.canvas.arrow_between(decision.card, decision.target)
            if arrow is not None:
                decision = decision.with_(arrow=arrow.id)
        with self._write(one_statement=True):
            self._log_row(decision, outcome=decision.outcome,
                          payload=self._payload(decision.call, args), chain=chain)
        return decision

    async def _carry_out(self: Engine, passed: Passed, args: dict[str, Any], now: float) -> Decision:
        spec = passed.spec
        card = passed.card
        decision = Decision("ok", spec.name, card.id, passed.package.name,
                            passed.target.id if passed.target else None, passed.permission,
                            arrow=passed.arrow.id if passed.arrow else None,
                            message=f"ok: card {card.id} ({passed.package.name}) {spec.name}")
        payload = self._payload(spec.name, args)
        if spec.name == "net.fetch":
            # The request may take seconds: never hold the write lock for it.
            value = await self.world.fetch(self, passed, args)
            with self._write():
                if isinstance(value, Decision):
                    self._log_row(value, outcome=value.outcome, payload=payload, chain=None)
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
                self._log_row(value, outcome=value.outcome, payload=payload, chain=None)
                return value
            decision = decision.with_(value=value)
            if spec.name == "canvas.spawn":
                decision = decision.with_(target=value, arrow=f"{card.id}->{value}")
            self._log_row(decision, outcome="ok", payload=payload, chain=None)
        return decision

    def _count(self: Engine, card: str, key: str, now: float) -> None:
        self.db.execute("insert into rate_events (card, key, t) values (?, ?, ?)",
                        [card, key, now])
        self.state.counters.count(card, key, now)

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
        call = f"port:{port}"
        found = check_card(self.state, card, call)
        if isinstance(found, Decision):
            return {"": self._log_refusal(found, None, None)}
        node = found[0]
        _inputs, outputs = self.state.canvas.ports(node)
        if port not in outputs:
            refusal = denial(call, card, "INVALID_ARGUMENT", package=node.data["package"],
                             reason="port", why=f"{card} has no output port {port!r}")
            return {"": self._log_refusal(refusal, None, None)}
        chain = None
        if context is not None:
            tool = self._tool_calls.get(context)
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
