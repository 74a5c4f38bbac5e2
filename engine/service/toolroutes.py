"""Tool-call routes (SPEC §9, §10.1): agents call cards' tools, cards answer.

- ``POST /v1/tool-calls`` (an agent token, as that agent): ``{"agent", "card",
  "tool", "args"}`` → ``{"id", "state", "decision"}``. A refusal is a 200 too,
  with ``id`` null, ``state`` ``refused`` and the Decision, as for cards' calls.
  With ``?wait=S`` (an extension of SPEC §10.1, issue 17) the answer also
  holds ``call``: the tool call after waiting up to ``S`` seconds, exactly as
  ``GET /v1/tool-calls/{id}/wait?timeout=S`` would answer it (null when
  refused), so an agent's call is one request instead of two. The call is
  durable and the card told before the wait begins, as without it.
- ``POST /v1/tool-calls/{id}/result`` (the called card's token): ``{"result"}``
  or ``{"error"}``, once.
- ``GET /v1/tool-calls/{id}`` and ``GET /v1/tool-calls/{id}/wait?timeout=S``
  (the calling agent, the called card or the operator): the tool call, with
  the prompts the cards of its card's package made since it opened that wait for a
  person (``held``: any may be the call's work, `Engine.tool_call_holds`);
  the wait returns at once when there is one — a tool call never blocks for a
  person. Waiting is on the engine's memory, never holding a database lock.
- ``POST /v1/tool-calls/{id}/cancel`` (the calling agent): the agent gives up.
- ``GET /v1/agents/{agent}/tools`` (that agent): the tools of the cards an
  arrow connects to it, as ``arrowgate mcp`` lists them.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from fastapi import APIRouter, Depends, FastAPI, Header, Query
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from engine.core.checks import check_card
from engine.core.decision import Decision
from engine.core.errors import ConsentError
from engine.core.text import named
from engine.core.toolnames import agent_tool_name
from engine.service.bodyvalues import BoundedRoute
from engine.service.context import (
    Caller,
    Service,
    Shown,
    decision_json,
    json_response,
    kind_phrase,
)
from engine.service.models import DecisionOut, NoBody
from engine.service.problems import ServiceError
from engine.service.queryparams import DECIMAL_HELP
from engine.service.toolwatch import ListChanges, matches, tag

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from engine.core.principal import Principal
    from engine.core.tools import ToolCall
    from engine.engine import Engine

__all__ = ["RESERVED_TOOL_NAMES", "ToolAnswerBody", "ToolCallBody", "agent_tools",
           "answer_tool_call", "open_tool_call", "register_tools", "tool_call_after_wait"]

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


class ToolError(BaseModel):
    """Why a tool call ended without a result."""

    code: str | None
    reason: str | None
    message: str


class HeldPrompt(BaseModel):
    """A prompt a card of the called card's package made while the tool call was open that
    waits for a person."""

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
    expires_in: float | None = Field(
        None, description="while open: the seconds left before the engine ends the tool "
                          "call at the workspace's tool_timeout (TOOL_TIMEOUT), so a caller "
                          "need follow it no longer; null once it has ended")


class ToolOut(BaseModel):
    """One tool an agent may call: ``name`` is ``<card>__<tool>`` (SPEC §10.2), written
    as every agent client takes a tool's name when the card's id holds what none does
    (`engine.core.toolnames.agent_tool_name`); ``card`` and ``tool`` say which it is."""

    name: str
    card: str
    tool: str
    description: str
    input: dict[str, Any]


class ToolCallOpened(BaseModel):
    """The tool call opened (``state`` open), or refused with the Decision; with
    ``?wait=S``, also ``call``: the tool call after the wait (null when refused)."""

    id: str | None
    state: Literal["open", "refused"]
    decision: DecisionOut
    call: ToolCallOut | None = None


_NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

#: Names an MCP bridge gives a tool of its own (`engine.app.mcp.STATUS_TOOL`): a card's
#: tool listed under one of them would shadow it, or be shadowed.
RESERVED_TOOL_NAMES = frozenset({"arrowgate__prompt_status"})


def agent_tools(service: Service, agent: str) -> list[dict[str, Any]]:
    """The tools of every card a plain arrow connects to ``agent``, sorted by name.

    Only cards whose package is installed and approved, and a plain arrow's, are
    listed: a tool call needs a plain arrow (a port arrow carries port data one
    way, SPEC §1), so other calls would be refused anyway. A name is
    ``<card>__<tool>``, written as every agent client takes a tool's name when the
    card's id holds what none does (`engine.core.toolnames.agent_tool_name`). Node
    ids are free text and tool names may hold ``__``, so two tools can share a name
    (card ``x``'s ``a__b`` and card ``x__a``'s ``b``) — such a name is left out
    for both, as is a reserved one: a name that could mean two tools would send
    an agent's call (and its arguments) to a card it did not mean.
    """
    service.engine.catch_up()  # arrows and grants another server just changed
    state = service.engine.state
    node = state.canvas.node(agent)
    if node is None or node.type != "agent":
        return []
    out: list[dict[str, Any]] = []
    cards = {a.other(agent) for a in state.canvas.arrows_of(agent) if not a.is_port}
    for card_id in sorted(cards):
        found = check_card(state, card_id, "tools.list", agent)
        if isinstance(found, Decision):
            continue
        manifest = found[1].manifest
        assert manifest is not None
        for tool in manifest.tool_list:
            out.append({"name": agent_tool_name(card_id, tool.name), "card": card_id,
                        "tool": tool.name,
                        "description": tool.description or "",
                        "input": tool.input if tool.input is not None else _NO_ARGS})
    taken = Counter(str(t["name"]) for t in out)
    return sorted((t for t in out if taken[str(t["name"])] == 1
                   and t["name"] not in RESERVED_TOOL_NAMES), key=lambda t: str(t["name"]))


def _as_agent(principal: Principal, agent: str) -> None:
    if principal.is_operator or (principal.kind == "agent" and principal.node == agent):
        return
    raise ServiceError(403, "APPROVAL_REFUSED",
                       f"{kind_phrase(principal.kind)} token ({principal.raw}) may not act as "
                       f"agent {named(agent)}", reason="wrong-principal")


def _visible(service: Service, call_id: str, principal: Principal) -> ToolCall:
    engine = service.engine
    # An open call is read from memory: one another server just opened or
    # resolved is caught up with first.
    engine.catch_up()
    tc = engine.tool_call(call_id)
    p = principal
    if tc is None or not (p.is_operator or (
            ((p.kind == "agent" and p.node == tc.agent) or (p.kind == "card" and p.node == tc.card))
            # Not one of an earlier node given the token's node's id.
            and not service.made.predates(p.node or "", tc.t))):
        raise ServiceError(404, "NOT_FOUND", f"no tool call {named(call_id)!r}",
                           reason="missing-tool-call")
    return tc


def _json(engine: Engine, tc: ToolCall) -> dict[str, Any]:
    """A tool call as the routes give it (`ToolCallOut`): the agent's view, its held
    prompts and, while open, the seconds left before its deadline."""
    out = tc.to_json()
    if tc.is_open:
        out["held"] = [{"prompt": p.id, "state": p.state, "agent": p.agent}
                       for p in engine.tool_call_holds(tc)]
        # Seconds left, not the deadline: the engine's clock is not the caller's. On
        # the clock, as it times out: the engine's time may stand still (SPEC §6).
        out["expires_in"] = round(engine.tool_left(tc.id) or 0.0, 3)
    else:
        out["held"], out["expires_in"] = [], None
    return out


async def open_tool_call(service: Service, principal: Principal, body: ToolCallBody,
                         shown: Shown, wait: float | None = None,
                         idle: Callable[[], None] | None = None) -> dict[str, Any]:
    """``POST /v1/tool-calls``: the open call's id, or the refusal (a 200 too).

    With ``wait`` (seconds), also ``call``: the open call after waiting that
    long for its answer or a hold (`tool_call_after_wait`, watching what the
    request ``shown``), None when refused.
    The wait begins only once the call has committed and the card has been
    handed its event, so durability is as without it; ``idle`` is called as
    it begins (the request writes nothing more: the server's group commit
    stops counting it, `engine.service.protocol._Direct.idle`). Shared by the
    FastAPI route and the fast lane (`engine.service.fastlane`).
    """
    _as_agent(principal, body.agent)
    d = await service.engine.tool(body.agent, body.card, body.tool, body.args)
    out: dict[str, Any]
    if not d.allowed:
        out = {"id": None, "state": "refused", "decision": decision_json(d)}
        if wait is not None:
            out["call"] = None
        return out
    call_id = str(d.value["id"])
    out = {"id": call_id, "state": "open", "decision": decision_json(d)}
    if wait is not None:
        if idle is not None:
            idle()
        out["call"] = await tool_call_after_wait(service, principal, call_id, wait, shown)
    return out


async def answer_tool_call(service: Service, principal: Principal, call_id: str,
                           body: ToolAnswerBody) -> dict[str, Any]:
    """``POST /v1/tool-calls/{id}/result``: the called card answers, once.

    Shared by the FastAPI route and the fast lane.
    """
    if principal.kind != "card":
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
    tc = await service.engine.answer_tool(call_id, **answer, by=principal)
    return _json(service.engine, tc)


async def tool_call_after_wait(service: Service, principal: Principal, call_id: str,
                               timeout: float, shown: Shown) -> dict[str, Any]:
    """``GET /v1/tool-calls/{id}/wait``: the tool call once answered, held or ``timeout``.

    The engine wakes the wait when the batch holding the answer commits
    (`engine.services.tools.Tools.wake_waiters`), never on a timer. The wait
    also ends when the request's token is revoked (then 401) or its client
    goes (`Service.watch`, on what the request ``shown``). Shared by the
    FastAPI route and the fast lane.
    """
    engine = service.engine
    tc = _visible(service, call_id, principal)
    if tc.is_open and engine.tool_call_holds(tc):
        return _json(engine, tc)
    # A call no longer open is waited for too: its resolution may not have
    # committed yet, and the agent is told only once it has (`Tools.settled`).
    # Waited in this task (no task of its own and a wait on both it and the
    # shutdown): the answer leaves in the turn of the loop the commit wakes it in.
    with service.watch(shown) as watch:
        try:
            found = await service.unless_closing(
                engine.wait_tool(call_id, timeout=timeout, until_held=True), watch)
        except ConsentError:
            found = None  # gone meanwhile: said below, as a GET would say it
        watch.require_standing()
    if found is not None:
        # The tool call as the wait saw it at its end: the same call, already
        # visible to this principal (a resolved call is read from the store,
        # so reading it once more would cost a query for nothing).
        return _json(engine, found)
    return _json(engine, _visible(service, call_id, principal))


def register_tools(app: FastAPI, service: Service,
                   caller: Callable[..., Coroutine[Any, Any, Caller]]) -> None:
    """Add the tool-call routes to ``app``."""
    engine = service.engine
    Who = Depends(caller)
    r = APIRouter(tags=["tools"], route_class=BoundedRoute)

    @r.post("/v1/tool-calls", response_model=ToolCallOpened)
    async def call_tool(body: ToolCallBody, who: Caller = Who,
                        wait: float | None = Query(
                            None, ge=0, le=MAX_WAIT,
                            description="Also wait up to this many seconds for the answer "
                                        "(or a held prompt it may be waiting on) and give the "
                                        "tool call as `call`, as `GET "
                                        "/v1/tool-calls/{id}/wait` would: one request "
                                        f"instead of two. Seconds, {DECIMAL_HELP}.")) -> Response:
        """An agent calls a card's tool: the open call's id, or the refusal (a 200 too);
        with ``wait``, also the tool call after waiting for its answer."""
        return json_response(await open_tool_call(service, who.principal, body, who.shown(),
                                                  wait))

    @r.post("/v1/tool-calls/{call_id}/result", response_model=ToolCallOut)
    async def answer_tool(call_id: str, body: ToolAnswerBody, who: Caller = Who) -> Response:
        """The called card answers, once (another principal: 404; answered already: 404)."""
        return json_response(await answer_tool_call(service, who.principal, call_id, body))

    @r.get("/v1/tool-calls/{call_id}", response_model=ToolCallOut)
    async def get_tool_call(call_id: str, who: Caller = Who) -> Response:
        """A tool call and its state (the calling agent, the called card, the operator)."""
        return json_response(_json(engine, _visible(service, call_id, who.principal)))

    @r.get("/v1/tool-calls/{call_id}/wait", response_model=ToolCallOut)
    async def wait_tool_call(call_id: str, who: Caller = Who,
                             timeout: float = Query(30.0, ge=0, le=MAX_WAIT, description=(
                                 f"How many seconds to wait, {DECIMAL_HELP}."))) -> Response:
        """Wait up to ``timeout`` seconds for the answer, or for a prompt it may wait on to be
        held; the tool call now."""
        return json_response(await tool_call_after_wait(service, who.principal, call_id,
                                                        timeout, who.shown()))

    @r.post("/v1/tool-calls/{call_id}/cancel", response_model=ToolCallOut)
    async def cancel_tool_call(call_id: str, who: Caller = Who,
                               body: NoBody | None = None) -> Response:
        """The calling agent gives up on its tool call (logged ``cancelled``)."""
        tc = _visible(service, call_id, who.principal)
        if who.principal.kind == "card":
            raise ServiceError(403, "APPROVAL_REFUSED", "a card answers its "
                               "tool calls; it does not cancel them", reason="wrong-principal")
        return json_response(_json(engine, await engine.cancel_tool(tc.id, by=who.principal)))

    changes = ListChanges(engine)

    @r.get("/v1/agents/{agent}/tools", response_model=list[ToolOut],
           responses={304: {"description": "The list is still the one `If-None-Match` "
                                           "names (after `wait` seconds, with `wait`)"}})
    async def list_tools(agent: str, who: Caller = Who,
                         if_none_match: str | None = Header(None),
                         wait: float | None = Query(
                             None, ge=0, le=MAX_WAIT,
                             description="With `If-None-Match` naming the list as it is "
                                         "(its `ETag`), wait up to this many seconds for it "
                                         "to change: the new list, or 304 when it did "
                                         f"not. Seconds, {DECIMAL_HELP}.")) -> Response:
        """The tools an agent may call now: those of the cards connected to it by an arrow;
        ``ETag`` names the list, and with ``If-None-Match`` and ``wait`` the answer waits
        until the list differs (how `arrowgate mcp` follows it)."""
        _as_agent(who.principal, agent)
        tools = agent_tools(service, agent)
        now = tag(tools)
        if wait and matches(if_none_match, now, star=False):
            tools, now = await _until_changed(agent, tools, now, if_none_match, wait, who)
        if matches(if_none_match, now):
            return Response(status_code=304, headers={"ETag": now})
        answer = json_response(tools)
        answer.headers["ETag"] = now
        return answer

    async def _until_changed(agent: str, tools: list[dict[str, Any]], now: str,
                             if_none_match: str | None, wait: float,
                             who: Caller) -> tuple[list[dict[str, Any]], str]:
        """The agent's tool list once it no longer matches ``if_none_match``, or as it is
        after ``wait`` seconds, the server's shutdown, the caller gone or its token
        revoked (then 401)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + wait
        with service.watch(who.shown()) as watch:
            while matches(if_none_match, now, star=False) and \
                    (left := until - loop.time()) > 0:
                try:
                    async with asyncio.timeout(left):
                        woke = await service.unless_closing(_woken(), watch)
                except TimeoutError:
                    break
                if woke is None:
                    break  # the shutdown, or the watch's end: said below
                tools = agent_tools(service, agent)
                now = tag(tools)
            watch.require_standing()
        return tools, now

    async def _woken() -> bool:
        await changes.next()
        return True

    app.include_router(r)
