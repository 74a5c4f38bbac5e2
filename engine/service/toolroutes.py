"""Tool-call routes (SPEC §9, §10.1): agents call cards' tools, cards answer.

- ``POST /v1/tool-calls`` (an agent token, as that agent): ``{"agent", "card",
  "tool", "args"}`` → ``{"id", "state", "decision"}``. A refusal is a 200 too,
  with ``id`` null, ``state`` ``refused`` and the Decision, as for cards' calls.
- ``POST /v1/tool-calls/{id}/result`` (the called card's token): ``{"result"}``
  or ``{"error"}``, once.
- ``GET /v1/tool-calls/{id}`` and ``GET /v1/tool-calls/{id}/wait?timeout=S``
  (the calling agent, the called card or the operator): the tool call, with
  the prompts its card made in its chain that wait for a person (``held``);
  the wait returns at once when there is one — a tool call never blocks for a
  person. Waiting is on the engine's memory, never holding a database lock.
- ``POST /v1/tool-calls/{id}/cancel`` (the calling agent): the agent gives up.
- ``GET /v1/agents/{agent}/tools`` (that agent): the tools of the cards an
  arrow connects to it, as ``arrowgate mcp`` lists them.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

from fastapi import APIRouter, Depends, FastAPI, Query
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from engine.core.checks import check_card
from engine.core.decision import Decision
from engine.service.context import Caller, Service, decision_json, json_response
from engine.service.models import DecisionOut
from engine.service.problems import ServiceError

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from engine.core.tools import ToolCall

__all__ = ["agent_tools", "register_tools"]

#: The longest a client may ask ``/wait`` to wait, in seconds (as for prompts).
MAX_WAIT = 300.0

_Id = Field(min_length=1, max_length=256)


class ToolCallBody(BaseModel):
    """An agent calls a card's tool (SPEC §9)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    agent: str = _Id
    card: str = _Id
    tool: str = Field(min_length=1, max_length=64)
    args: dict[str, Any] | None = None


class ToolAnswerBody(BaseModel):
    """The card's answer: a JSON ``result`` or an ``error`` text, not both."""

    model_config = ConfigDict(extra="forbid", strict=True)
    result: Any = None
    error: str | None = None


class ToolCallOpened(BaseModel):
    """The tool call opened (``state`` open), or refused with the Decision."""

    id: str | None
    state: Literal["open", "refused"]
    decision: DecisionOut


class ToolError(BaseModel):
    """Why a tool call ended without a result."""

    code: str | None
    reason: str | None
    message: str


class HeldPrompt(BaseModel):
    """A prompt the card made in the tool call's chain that waits for a person."""

    prompt: str
    state: str
    agent: str


class ToolCallOut(BaseModel):
    """A tool call: ``open``, ``answered`` (with ``result``), or ``failed``, ``expired``,
    ``cancelled`` (with ``error``)."""

    id: str
    state: Literal["open", "answered", "failed", "expired", "cancelled"]
    agent: str
    card: str
    tool: str
    result: Any = None
    error: ToolError | None = None
    held: list[HeldPrompt] = []


class ToolOut(BaseModel):
    """One tool an agent may call: ``name`` is ``<card>__<tool>`` (SPEC §10.2)."""

    name: str
    card: str
    tool: str
    description: str
    input: dict[str, Any]


_NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def agent_tools(service: Service, agent: str) -> list[dict[str, Any]]:
    """The tools of every card an arrow connects to ``agent``, sorted by name.

    Only cards whose package is installed and approved are listed: their
    calls would be refused anyway.
    """
    state = service.engine.state
    node = state.canvas.node(agent)
    if node is None or node.type != "agent":
        return []
    out: list[dict[str, Any]] = []
    cards = {a.dst if a.src == agent else a.src for a in state.canvas.arrows_of(agent)}
    for card_id in sorted(cards):
        found = check_card(state, card_id, "tools.list", agent)
        if isinstance(found, Decision):
            continue
        manifest = found[1].manifest
        assert manifest is not None
        for tool in manifest.tool_list:
            out.append({"name": f"{card_id}__{tool.name}", "card": card_id, "tool": tool.name,
                        "description": tool.description or "",
                        "input": tool.input if tool.input is not None else _NO_ARGS})
    return sorted(out, key=lambda t: str(t["name"]))


def register_tools(app: FastAPI, service: Service,
                   caller: Callable[..., Coroutine[Any, Any, Caller]]) -> None:
    """Add the tool-call routes to ``app``."""
    engine = service.engine
    Who = Depends(caller)
    r = APIRouter(tags=["tools"])

    def _as_agent(who: Caller, agent: str) -> None:
        p = who.principal
        if p.is_operator or (p.kind == "agent" and p.node == agent):
            return
        raise ServiceError(403, "APPROVAL_REFUSED",
                           f"a {p.kind} token ({p.raw}) may not act as "
                           f"agent {agent}", reason="wrong-principal")

    def _visible(call_id: str, who: Caller) -> ToolCall:
        tc = engine.tool_call(call_id)
        p = who.principal
        if tc is None or not (p.is_operator or (p.kind == "agent" and p.node == tc.agent)
                              or (p.kind == "card" and p.node == tc.card)):
            raise ServiceError(404, "NOT_FOUND", f"no tool call {call_id!r}",
                               reason="missing")
        return tc

    def _json(tc: ToolCall) -> dict[str, Any]:
        out = tc.to_json()
        out["held"] = [{"prompt": p.id, "state": p.state, "agent": p.agent}
                       for p in engine.tool_call_holds(tc)] if tc.is_open else []
        return out

    @r.post("/v1/tool-calls", response_model=ToolCallOpened)
    async def call_tool(body: ToolCallBody, who: Caller = Who) -> Response:
        """An agent calls a card's tool: the open call's id, or the refusal (a 200 too)."""
        _as_agent(who, body.agent)
        d = await engine.tool(body.agent, body.card, body.tool, body.args)
        if d.allowed:
            return json_response({"id": d.value["id"], "state": "open",
                                  "decision": decision_json(d)})
        return json_response({"id": None, "state": "refused", "decision": decision_json(d)})

    @r.post("/v1/tool-calls/{call_id}/result", response_model=ToolCallOut)
    async def answer_tool(call_id: str, body: ToolAnswerBody, who: Caller = Who) -> Response:
        """The called card answers, once (another principal: 404; answered already: 404)."""
        if who.principal.kind != "card":
            raise ServiceError(403, "APPROVAL_REFUSED", "only the called "
                               "card's token answers a tool call", reason="wrong-principal")
        fields = body.model_fields_set
        if ("result" in fields) == ("error" in fields):
            raise ServiceError(400, "INVALID_ARGUMENT", "send a result or an "
                               "error, not both and not neither", reason="answer")
        answer: dict[str, Any] = {"error": body.error} if "error" in fields else \
            {"result": body.result}
        if "error" in fields and body.error is None:
            raise ServiceError(400, "INVALID_ARGUMENT", "error must be text",
                               reason="error")
        tc = await engine.answer_tool(call_id, **answer, by=who.principal)
        return json_response(_json(tc))

    @r.get("/v1/tool-calls/{call_id}", response_model=ToolCallOut)
    async def get_tool_call(call_id: str, who: Caller = Who) -> Response:
        """A tool call and its state (the calling agent, the called card, the operator)."""
        return json_response(_json(_visible(call_id, who)))

    @r.get("/v1/tool-calls/{call_id}/wait", response_model=ToolCallOut)
    async def wait_tool_call(call_id: str, who: Caller = Who,
                             timeout: float = Query(30.0, ge=0, le=MAX_WAIT)) -> Response:
        """Wait up to ``timeout`` seconds for the answer, or for a prompt in its chain to be
        held; the tool call now."""
        _visible(call_id, who)
        waiter = asyncio.ensure_future(engine.wait_tool(call_id, timeout=timeout,
                                                        until_held=True))
        closer = asyncio.ensure_future(service.closing.wait())
        try:
            await asyncio.wait({waiter, closer}, timeout=timeout,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            for fut in (waiter, closer):
                fut.cancel()
        return json_response(_json(_visible(call_id, who)))

    @r.post("/v1/tool-calls/{call_id}/cancel", response_model=ToolCallOut)
    async def cancel_tool_call(call_id: str, who: Caller = Who) -> Response:
        """The calling agent gives up on its tool call (logged ``cancelled``)."""
        tc = _visible(call_id, who)
        if who.principal.kind == "card":
            raise ServiceError(403, "APPROVAL_REFUSED", "a card answers its "
                               "tool calls; it does not cancel them", reason="wrong-principal")
        return json_response(_json(await engine.cancel_tool(tc.id, by=who.principal)))

    @r.get("/v1/agents/{agent}/tools", response_model=list[ToolOut])
    async def list_tools(agent: str, who: Caller = Who) -> Response:
        """The tools an agent may call now: those of the cards connected to it by an arrow."""
        _as_agent(who, agent)
        return json_response(agent_tools(service, agent))

    app.include_router(r)
