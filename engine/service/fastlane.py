"""The hot routes without the router: ``POST /v1/calls``, ``/v1/calls:batch``, health,
a tool call's round trip and the card's event stream.

A card's call is the request an app makes most. FastAPI's routing and
dependency injection cost several times what the engine's decision does
(measured: about 1.9 ms of a 2.7 ms request on this machine), so these three
routes are answered here, a plain ASGI app in front of FastAPI, with the
same functions the FastAPI routes use: `authenticate`, the pydantic body
models (parsed straight from the bytes), `decide_call` / `decide_batch`, and
the same problem+json errors. The FastAPI routes stay the documented
contract (``openapi.json``) and serve these paths when the lane is not in
front (``tests/service/test_fastlane.py`` checks both answer alike).

An MCP tool call makes three requests on the agent's critical path (``POST
/v1/tool-calls``, the card's ``POST /v1/tool-calls/{id}/result`` and ``GET
/v1/tool-calls/{id}/wait``; issue 17): the lane answers those too, but only
when the request is well formed — a known token, a JSON body its model
accepts, a plain ``timeout`` — and hands anything else, body included, to
FastAPI, so that every error is FastAPI's own. The open route's ``?wait=S``
(the call and its wait in one request, so two requests instead of three) is
answered here too, when S is a plain number.

A query the lane does not take itself (any on the call routes and the
result route, anything but the one plain parameter elsewhere) is handed on
too: FastAPI's route refuses a parameter it does not take, or one given twice
(`engine.service.queryparams`). A plain request has no query, so asking costs
it one look at the scope.

A card's event stream (``GET /v1/events``) carries the ``tool.call`` event on
that path too: the lane writes it straight to the connection through the
server's short way out (`FastLane._events`, `engine.service.events.CardFeed.serve`),
in the turn of the loop that committed the call, when the request is plain;
else FastAPI's route streams it through Starlette.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from engine.core.catalogue import waits
from engine.core.errors import ConsentError
from engine.service.answers import (
    JSON_HEAD,
    decision_bytes,
    decisions_bytes,
    encode_tool_call,
    send_bytes,
)
from engine.service.bodyvalues import too_many_values
from engine.service.context import (
    FETCH_MARK_NAME,
    HEALTH,
    Service,
    Shown,
    authenticate,
    carries_fetch_mark,
    decision_json,
    disconnected,
    may_act_as_card,
)
from engine.service.direct import Direct
from engine.service.jsonread import loads
from engine.service.methods import allowed, head, options_asterisk
from engine.service.models import BatchBody, CallBody
from engine.service.problems import (
    ServiceError,
    error_response,
    guarded,
    json_content_type,
    leaf_routes,
    validation_problem,
)
from engine.service.segments import encoded_slash
from engine.service.toolroutes import (
    MAX_WAIT,
    ToolAnswerBody,
    ToolCallBody,
    answer_tool_call,
    open_tool_call,
    tool_call_after_wait,
)
from engine.service.turns import Turns

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from engine.core.decision import Decision
    from engine.core.principal import Principal
    from engine.engine import Engine
    from engine.services.calls import CallArgs

__all__ = ["FastLane", "batch_answer", "decide_batch", "decide_call"]


async def decide_call(engine: Engine, principal: Principal, body: CallBody) -> dict[str, Any]:
    """One card's call as the principal may make it: the Decision as JSON."""
    may_act_as_card(principal, body.card)
    d = await engine.call(body.card, body.call, body.target, body.args, context=body.context)
    return decision_json(d)


async def decide_batch(engine: Engine, principal: Principal, body: BatchBody) -> dict[str, Any]:
    """Many calls, all allowed to the principal or none tried; decisions in order.

    Decided one after another in the order given, each as if sent alone, in
    one group commit (`Engine.call_many`), answered once it has committed.
    A call that failed (the store could not write it: it did not happen)
    fails the request with its error, the first in order; the batch's other
    calls happened and are durable, as they would be if sent one by one.
    """
    for c in body.calls:
        may_act_as_card(principal, c.card)
    return await batch_answer(engine, [(c.card, c.call, c.target, c.args, c.context)
                                       for c in body.calls])


async def batch_answer(engine: Engine, calls: list[CallArgs]) -> dict[str, Any]:
    """The answer to ``calls:batch`` (the principal may make every call): see `decide_batch`."""
    return {"decisions": [decision_json(d) for d in _decided(await engine.call_many(calls))]}


def _decided(decisions: list[Decision | Exception]) -> list[Decision]:
    """The decisions of a batch; the first call that failed fails the request with its error."""
    for d in decisions:
        if isinstance(d, Exception):
            raise d
    return decisions  # type: ignore[return-value]  # none is an Exception


def _bearer(scope: Scope) -> str | None:
    return _request_headers(scope)[0]


def _json_content(scope: Scope) -> bool:
    return _request_headers(scope)[1]


class FastLane:
    """Answers the hot routes itself; everything else goes to ``app`` (FastAPI)."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app, self.service = app, service
        #: The calls `take` took, decided a turn of the loop at a time.
        self._turns = Turns(service.engine)
        #: The answer to ``OPTIONS *``: the methods some route serves, HEAD and OPTIONS.
        served = {method for route in leaf_routes(getattr(app, "routes", ()))
                  for method in getattr(route, "methods", None) or ()}
        self._options = options_asterisk(allowed(served | {"OPTIONS"}))

    def take(self, scope: Scope, direct: Direct, raw: bytes | bytearray) -> bool:
        """Take a plain ``POST /v1/calls`` whose body has all arrived, to be decided with
        the other calls read in this turn of the loop; False (nothing done) when the
        request must go the ordinary way, through `__call__` in a task of its own.

        The server asks as each request's body completes (`engine.service.protocol`),
        before it makes the request a task. A call taken costs no task and no
        coroutine: the turn's calls go to the engine as one `Engine.call_many`
        (each decided as it would be alone, in the order read, in the open group
        commit) and each is answered through ``direct`` once its rows are
        durable. Only the plainest requests are taken — those `__call__` would
        answer 200 with a decision: a body within the limit, JSON, `_plain_call`'s
        form, a known token that may act as the card. Anything else `__call__`
        answers, errors included, so that every answer stays its own. A call that
        may wait on something (`engine.core.catalogue.waits`: a fetch, file
        work) goes that way too: in a `Engine.call_many` the turn's later calls
        would wait behind it.
        """
        if scope.get("root_path") or scope["query_string"] or len(raw) > self.service.max_body:
            return False  # a query: the call routes take none (`__call__` refuses it)
        header, json_body, declared = _call_headers(scope)
        if header is None or not json_body or not declared:
            return False
        tokens = self.service.tokens
        found = tokens.recall(header, direct.token_memo)
        if found is None:
            token = _token_of(header)
            found = tokens.peek(token) if token else None
            if found is None:
                return False  # 401: `__call__` says so
            tokens.remember(header, token, direct.token_memo)  # type: ignore[arg-type]
        call = _read_plain_call(raw)
        if call is None:
            return False
        try:
            may_act_as_card(found[1], call[0])
        except ServiceError:
            return False  # 403: `__call__` says so
        if waits(call[1]):
            return False
        self._turns.add(direct, call)
        return True

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # Not a coroutine of its own (as `BodyLimit`): FastAPI's requests are handed on.
        if b"%" in scope.get("raw_path", b"") and scope["type"] == "http":
            refusal = encoded_slash(scope["raw_path"])
            if refusal is not None:  # decoded, it would be routed as two segments
                return refusal(scope, receive, send)
        if scope["type"] != "http" or scope.get("root_path") or \
                not _lane_route(scope["method"], scope["path"]):
            # Not the lane's (nor the hot routes'): the methods answered beyond the routes.
            method = scope.get("method")
            if method == "HEAD":
                return head(self, scope, receive, send)  # its GET, the lane's or FastAPI's
            if method == "OPTIONS" and scope["path"] == "*":
                return self._options(scope, receive, send)
            return self.app(scope, receive, send)
        if scope["path"] == "/v1/health" and scope["method"] == "GET" and \
                not scope["query_string"]:
            # A constant answer, nothing to guard: no coroutine of ours around it
            # (the check canvas apps poll, and the service's measure of itself).
            # Asked with a query (``ready``: `engine.service.readiness`), FastAPI's.
            return _answer(scope, send, _HEALTH)
        return self._lane_or_app(scope, receive, send)

    async def _lane_or_app(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A request of the lane's routes: answered by the lane, or handed on to FastAPI.

        Each is guarded once (`guarded`: an exception no route expected is a 500
        problem+json): the lane's own answer here, a request it hands on by the
        FastAPI app's own guard (`create_app`), outside this one.
        """
        hand_on = await guarded(self._lane, scope, receive, send)
        if hand_on is not None:
            await self.app(scope, hand_on, send)

    async def _lane(self, scope: Scope, receive: Receive, send: Send) -> Receive | None:
        """A request of the lane's routes (`_lane_route`): None once answered, else the
        ``receive`` to hand it on to FastAPI with (its body replayed, when read here)."""
        method, path = scope["method"], scope["path"]
        if carries_fetch_mark(scope["headers"]):
            return receive  # a card's fetch: refused by the app (`refuse_card_fetch`)
        if path == "/v1/events" and method == "GET":
            return await self._events(scope, receive, send)
        if method != "POST" or path not in _CALL_ROUTES:
            if path.startswith("/v1/tool-calls"):
                return await self._tool_call(scope, receive, send)
            return receive
        if scope["query_string"]:
            return receive  # the call routes take no query: FastAPI's route refuses it
        try:
            header, json_body, declared = _call_headers(scope)
            direct: Direct | None = scope.get("arrowgate.direct")
            tokens = self.service.tokens
            # The connection's memo of its token, when the server keeps one: the
            # same header as its last request needs no hash (`TokenStore.recall`).
            found = None if direct is None or header is None else \
                tokens.recall(header, direct.token_memo)
            if found is None:
                token = None if header is None else _token_of(header)
                found = authenticate(tokens, token)
                if direct is not None and token:
                    tokens.remember(header, token, direct.token_memo)  # type: ignore[arg-type]
            principal = found[1]
            # A declared length was checked by the body limit in front; a body sent
            # without one is read through ``receive``, which counts it.
            raw = direct.body() if direct is not None and declared else None
            if raw is None:
                raw = await _body(receive)
                if raw is None:
                    return None  # the client went away
            if not json_body or not raw:
                # Not JSON by its Content-Type, or empty: a body FastAPI reads as
                # bytes or as missing. Its route says what is wrong, in its words.
                return _replay(raw, receive)
            if too_many_values(raw):
                # Refused unread by FastAPI's route (`BoundedRoute`): 413, in its words.
                return _replay(raw, receive)
            engine = self.service.engine
            single = path == "/v1/calls"
            try:
                # Parsed as FastAPI does (json.loads, then the model in Python
                # mode), so both paths give the same values and messages.
                data = loads(raw)
                if not isinstance(data, dict):
                    raise ServiceError(400, "INVALID_ARGUMENT", "body: Input "
                                       "should be a valid dictionary or object to extract "
                                       "fields from", reason="invalid", problems=[
                                           {"where": "body", "problem": "Input should be a "
                                            "valid dictionary or object to extract fields "
                                            "from"}])
                # The common body needs no model: `_plain_calls` takes only what the
                # model takes unchanged; anything else is the model's to judge.
                # FastAPI validates with ``from_attributes``, which words a call that
                # is not an object its own way: the same here.
                calls = _plain_calls(data, single)
                if calls is None:
                    if single:
                        c = CallBody.model_validate(data, from_attributes=True)
                        calls = [(c.card, c.call, c.target, c.args, c.context)]
                    else:
                        calls = [(c.card, c.call, c.target, c.args, c.context) for c in
                                 BatchBody.model_validate(data, from_attributes=True).calls]
            except ValidationError as exc:
                response = validation_problem([{**e, "loc": ("body", *e["loc"])}
                                               for e in exc.errors(include_url=False)])
            except ValueError:
                # Not JSON (`json.JSONDecodeError`), not UTF-8 (`UnicodeDecodeError`) or
                # nested past what json reads: FastAPI's route says which, in its words
                # (its reader is json's, the lane's orjson first: `jsonread.loads`).
                return _replay(raw, receive)
            else:
                if single:
                    card, call, target, args, context = calls[0]
                    may_act_as_card(principal, card)
                    d = await engine.call(card, call, target, args, context=context)
                    body = decision_bytes(d) or decisions_bytes([d], False)
                else:
                    for item in calls:
                        may_act_as_card(principal, item[0])
                    body = decisions_bytes(_decided(await engine.call_many(calls)), True)
                if direct is None or not direct.respond(200, JSON_HEAD % len(body), body):
                    await send_bytes(send, 200, body)
                return None
        except (ServiceError, ConsentError) as exc:
            response = error_response(exc)
        await response(scope, receive, send)
        return None

    async def _tool_call(self, scope: Scope, receive: Receive, send: Send) -> Receive | None:
        """A tool call's hot routes when the request is well formed; else FastAPI's
        (handed on, as `_lane`)."""
        method, parts = scope["method"], scope["path"].split("/")
        # ["", "v1", "tool-calls"] or ["", "v1", "tool-calls", ID, "result" | "wait"]
        if parts[1:3] != ["v1", "tool-calls"]:
            kind = ""
        elif len(parts) == 3:
            kind = "open" if method == "POST" else ""
        elif len(parts) == 5 and parts[3]:
            kind = {("POST", "result"): "result", ("GET", "wait"): "wait"}.get(
                (method, parts[4]), "")
        else:
            kind = ""
        token = _bearer(scope)
        found = self.service.tokens.peek(token) if token and kind else None
        if found is None:
            return receive
        assert token is not None  # found by it
        principal, shown = found[1], Shown(token, found[0], receive,
                                           scope.get("arrowgate.direct"))
        if kind != "wait":
            # Neither client sends its next request before a commit this one
            # leads to: the agent's next call comes after it has this one's
            # result, the card's next answer after the next call's event. So
            # the server's group commit need not wait for them (expected.Expected).
            scope["arrowgate.once"] = True
        answer: dict[str, Any] | None
        query = scope.get("query_string", b"")
        try:
            if kind == "wait":
                timeout = _seconds(query, b"timeout", 30.0)
                if timeout is None:
                    return receive
                answer = await tool_call_after_wait(self.service, principal, parts[3], timeout,
                                                    shown)
            else:
                # The open route's optional ?wait=S (negative: no wait asked); the result
                # route takes no query, so FastAPI's route refuses any.
                wait = _seconds(query, b"wait", -1.0) if kind == "open" else \
                    None if query else -1.0
                if wait is None:
                    return receive
                raw = await _body(receive)
                if raw is None:
                    return None  # the client went away
                if kind == "open":
                    call = _model(scope, raw, ToolCallBody)
                    direct: Direct | None = scope.get("arrowgate.direct")
                    answer = None if call is None else \
                        await open_tool_call(self.service, principal, call, shown,
                                             None if wait < 0 else wait,
                                             None if direct is None else direct.idle)
                else:
                    result = _model(scope, raw, ToolAnswerBody)
                    answer = None if result is None else \
                        await answer_tool_call(self.service, principal, parts[3], result)
                if answer is None:
                    return _replay(raw, receive)
        except (ServiceError, ConsentError) as exc:
            await error_response(exc)(scope, receive, send)
            return None
        # Straight to the connection when the server offers it (as a call's answer):
        # not two messages through uvicorn's send, on the agent's critical path.
        await _answer(scope, send, encode_tool_call(answer))
        return None

    async def _events(self, scope: Scope, receive: Receive, send: Send) -> Receive | None:
        """``GET /v1/events`` written straight to the connection, when the request is
        plain and the server offers its short way out; else FastAPI's route (handed on,
        as `_lane`).

        FastAPI's route answers through Starlette's ``StreamingResponse``: each
        event is a task's wake-up, a message through the middleware and
        uvicorn's ``send``, then the coalesced write a turn later — four or
        five turns of the loop after the commit, on a tool call's critical
        path (issue 17). Here each event is written in the commit's own turn
        (`CardFeed.serve`), with the same gate, resumption, heartbeat and
        ``events.dropped``. Taken only when FastAPI would stream too: a known
        token that may read the card, ``card`` absent or a plain id, and
        ``Last-Event-ID`` absent or plain digits.
        """
        direct: Direct | None = scope.get("arrowgate.direct")
        token = _bearer(scope) or ""
        found = self.service.tokens.peek(token) if direct is not None else None
        card, last = _events_request(scope)
        principal = found[1] if found is not None else None
        if principal is None or card == "":
            pass
        elif principal.kind == "card" and card in (None, principal.node):
            card = principal.node
        elif not (principal.is_operator and card):
            card = ""
        feed = None
        if principal is not None and card:
            try:
                feed = self.service.feed_hub().get(card)
            except ConsentError:
                pass  # no such card: FastAPI's route says so
            if feed is not None and found is not None and feed.crowded(found[0]):
                feed = None  # as many streams open as a token may: FastAPI's route says so
        out = direct.stream(_EVENTS_HEAD) if feed is not None and direct is not None else None
        if feed is None or out is None:
            return receive
        gone = asyncio.ensure_future(disconnected(receive))
        assert found is not None  # a feed is served only to a known token
        standing = self.service.tokens.standing(token, found[0])
        try:
            await feed.serve(out, last, heartbeat=self.service.heartbeat,
                             closing=self.service.closing, gone=gone, standing=standing)
        finally:
            standing.close()
            gone.cancel()
            out.end()
        return None


_M = TypeVar("_M", ToolCallBody, ToolAnswerBody)


def _model(scope: Scope, raw: bytes, model: type[_M]) -> _M | None:
    """The body as ``model``, or None when FastAPI should say what is wrong with it."""
    if not _json_content(scope) or too_many_values(raw):
        return None  # FastAPI's route says what is wrong (too many values: 413, unread)
    try:
        # jsonread's reading (json's values, orjson first): a body nested as deep as
        # `MAX_DEPTH` is read whole, where json's reader stops short of it.
        data = loads(raw)
        if not isinstance(data, dict):
            return None
        return model.model_validate(data)
    except (ValueError, RecursionError, ValidationError):  # JSON, UTF-8, nesting or the model
        return None


def _events_request(scope: Scope) -> tuple[str | None, int | None]:
    """An events request's ``card`` (None: not given) and ``Last-Event-ID`` (None: not
    given), when both are plain; ``""`` as the card when not (FastAPI answers it)."""
    query = scope.get("query_string", b"")
    card: str | None = None
    if query:
        key, _, value = query.partition(b"=")
        if key != b"card" or not _PLAIN_ID.fullmatch(value):
            return "", None
        card = value.decode("ascii")
    ids = [value for name, value in scope.get("headers", ()) if name == b"last-event-id"]
    if not ids:
        return card, None
    if len(ids) > 1 or not _PLAIN_SEQ.fullmatch(ids[0]):
        return "", None
    return card, int(ids[0])


#: A card's id as a query gives it unchanged (nothing to decode), within the route's bound.
_PLAIN_ID = re.compile(rb"[A-Za-z0-9._:~-]{1,256}")
#: A ``Last-Event-ID`` that is plainly a sequence number (the route's bound: 40 characters).
_PLAIN_SEQ = re.compile(rb"[0-9]{1,40}")
#: The events stream's header lines, as Starlette's ``StreamingResponse`` writes them.
_EVENTS_HEAD = (b"cache-control: no-store\r\nx-accel-buffering: no\r\n"
                b"content-type: text/event-stream; charset=utf-8\r\n")


def _seconds(query: bytes, name: bytes, default: float) -> float | None:
    """Seconds from a query that is empty (``default``) or only ``name=N``, N a plain
    number up to `MAX_WAIT`; None for anything else (FastAPI answers it)."""
    if not query:
        return default
    key, _, value = query.partition(b"=")
    if key != name or not _PLAIN_NUMBER.fullmatch(value):
        return None
    seconds = float(value)
    return seconds if seconds <= MAX_WAIT else None


_PLAIN_NUMBER = re.compile(rb"[0-9]{1,6}(\.[0-9]{1,9})?")


def _replay(raw: bytes, receive: Receive) -> Receive:
    """``receive`` with the body already read given back first (for FastAPI)."""
    sent = False

    async def again() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        return await receive()

    return again


async def _body(receive: Receive) -> bytes | None:
    """The whole request body (the body limit in front counts it), or None on disconnect."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


#: The routes of a card's calls.
_CALL_ROUTES = frozenset({"/v1/calls", "/v1/calls:batch"})


def _lane_route(method: str, path: str) -> bool:
    """Whether the lane answers ``method path`` (some of them through FastAPI after all)."""
    if method == "POST" and path in _CALL_ROUTES:
        return True
    if method == "GET" and path in ("/v1/health", "/v1/events"):
        return True
    return method != "HEAD" and path.startswith("/v1/tool-calls")  # HEAD: `methods.head`


_CALL_KEYS = frozenset(CallBody.model_fields)
_BATCH_KEYS = frozenset(BatchBody.model_fields)


def _max_length(model: type[BaseModel], field: str) -> int:
    # The model's own bound on a field, so that `_plain_call` never takes what
    # the model would refuse.
    # (pydantic keeps it as an ``annotated_types.MaxLen`` in the field's metadata.)
    return next(bound for m in model.model_fields[field].metadata
                if isinstance(bound := getattr(m, "max_length", None), int))


_CARD_MAX, _CALL_MAX, _TARGET_MAX, _CONTEXT_MAX, _CALLS_MAX = (
    _max_length(CallBody, "card"), _max_length(CallBody, "call"),
    _max_length(CallBody, "target"), _max_length(CallBody, "context"),
    _max_length(BatchBody, "calls"))


def _plain_call(data: Any) -> CallArgs | None:
    """The call's fields when ``data`` is a body `CallBody` takes as it is, else None.

    Only the plainest form is taken: exactly the model's keys, strings of ASCII
    within the model's lengths, ``args`` an object or null. Anything else
    (a wrong type, an unknown key, text beyond ASCII) goes to the model, which
    accepts it or says what is wrong, so the answers stay the model's.
    """
    if type(data) is not dict or not data.keys() <= _CALL_KEYS:
        return None
    card, call = data.get("card"), data.get("call")
    target, args, context = data.get("target"), data.get("args"), data.get("context")
    if type(card) is not str or not 0 < len(card) <= _CARD_MAX or not card.isascii() or \
            type(call) is not str or not 0 < len(call) <= _CALL_MAX or not call.isascii():
        return None
    if target is not None and (type(target) is not str or len(target) > _TARGET_MAX
                               or not target.isascii()):
        return None
    if context is not None and (type(context) is not str or len(context) > _CONTEXT_MAX
                                or not context.isascii()):
        return None
    if args is not None and type(args) is not dict:
        return None
    return card, call, target, args, context


def _read_plain_call(raw: bytes | bytearray) -> CallArgs | None:
    """``_plain_call(loads(raw))`` for a body orjson reads, for less; else None.

    `loads` reads with orjson, then looks through the text for a run of 19
    digits (an integer orjson may have read as a float) and reads it again
    with json if there is one: as dear as orjson's reading of a call. A plain
    call's fields are text, and so, most often, is every value of its
    ``args``: then the value holds no number at all and orjson's reading is
    json's. One that holds anything else is read `loads`' whole way; a body
    orjson refuses (not JSON, or NaN, a lone surrogate) is left to the caller.
    """
    if too_many_values(raw):
        return None  # refused unread by `__call__`'s way
    try:
        call = _plain_call(orjson.loads(raw))
    except orjson.JSONDecodeError:
        return None
    if call is not None and call[3] is not None:
        for value in call[3].values():
            if type(value) is not str:
                return _plain_call(loads(bytes(raw)))
    return call


def _plain_calls(data: dict[str, Any], single: bool) -> list[CallArgs] | None:
    """The calls of a body in its plainest form (`_plain_call`), or None: the model decides."""
    if single:
        call = _plain_call(data)
        return None if call is None else [call]
    if data.keys() != _BATCH_KEYS:
        return None
    items = data["calls"]
    if type(items) is not list or len(items) > _CALLS_MAX:
        return None
    calls = []
    for item in items:
        call = _plain_call(item)
        if call is None:
            return None
        calls.append(call)
    return calls


def _call_headers(scope: Scope) -> tuple[bytes | None, bool, bool]:
    """The ``Authorization`` header's raw value (the first), whether the body is JSON,
    and whether its length was declared: `_request_headers` for the call routes, with
    the token left to `TokenStore.recall` (most requests need no decoding)."""
    header: bytes | None = None
    # No Content-Type: not JSON. FastAPI's routes (``strict_content_type``, on by
    # default since 0.132) read such a body as bytes and refuse it.
    json_body = False
    seen_type = declared = False
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            if header is None:
                header = value
        elif name == FETCH_MARK_NAME:
            # A card's fetch (`carries_fetch_mark`, in this loop over the headers):
            # never the lane's; `_lane` hands it to the app.
            return None, False, False
        elif name == b"content-type":
            if not seen_type:
                seen_type = True
                # The common value as bytes first: the same answer, no decoding.
                json_body = value == b"application/json" or _json_type(value)
        elif name == b"content-length":
            declared = True
    return header, json_body, declared


def _json_type(value: bytes) -> bool:
    """Whether a ``Content-Type`` header's raw value names JSON (`json_content_type`)."""
    return json_content_type(value.decode("latin-1"))


def _token_of(header: bytes) -> str | None:
    """The token of an ``Authorization`` header's raw value; None when not a bearer token."""
    scheme, _, rest = header.decode("latin-1").partition(" ")
    return rest.strip() if scheme.lower() == "bearer" else None


def _request_headers(scope: Scope) -> tuple[str | None, bool, bool]:
    """The bearer token, whether the body is JSON, and whether its length was declared."""
    header, json_body, declared = _call_headers(scope)
    return None if header is None else _token_of(header), json_body, declared


async def _answer(scope: Scope, send: Send, body: bytes) -> None:
    """A 200 JSON answer: through the server's short way when it offers one, else ASGI."""
    direct: Direct | None = scope.get("arrowgate.direct")
    if direct is None or not direct.respond(200, JSON_HEAD % len(body), body):
        await send_bytes(send, 200, body)


#: The health answer: always the same bytes.
_HEALTH = json.dumps(HEALTH, separators=(",", ":")).encode()
