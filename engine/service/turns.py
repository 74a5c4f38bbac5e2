"""The plain calls `FastLane.take` took in one turn of the loop, decided together.

A card's ``POST /v1/calls`` read whole costs no task: the turn's calls go to the
engine at once (`Turns`) and each is answered through the server's short way
out (`engine.service.protocol`'s ``_Direct``) once its rows are durable, or, when
that way is closed, by a small ASGI app run as the request's task.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine
from functools import partial
from typing import TYPE_CHECKING, Any

from engine.core.errors import ConsentError
from engine.service.answers import JSON_HEAD, decision_bytes, decisions_bytes, send_bytes
from engine.service.problems import ServiceError, error_response, internal_problem
from engine.store.transactions import resume

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from engine.core.decision import Decision
    from engine.engine import Engine
    from engine.service.direct import Direct
    from engine.services.calls import CallArgs

__all__ = ["Turns"]

#: A call's answer's header lines by its length (`answers.JSON_HEAD` filled in): a
#: refusal's or a prompt's JSON comes in a few hundred lengths; a call's ``value``
#: may make any (bounded here).
_HEADS: dict[int, bytes] = {}
_HEADS_MAX = 1024


class Turns:
    """The plain calls taken in one turn of the loop, decided together at the next.

    `FastLane.take` hands each call here (`add`) with the server's short way out
    for its request (``Direct``); at the next turn the turn's calls go to the
    engine as one `Engine.call_many` (each decided as it would be alone, in the
    order given, in the open group commit), or, alone, as `Engine.call`, and
    each is answered through its ``Direct`` once its rows are durable. A call
    that failed is answered as the lane answers it in a task (`_failed`).
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        #: The calls given in this turn of the loop, decided together at the next.
        self._turn: list[tuple[Direct, CallArgs]] | None = None
        #: The tasks deciding a turn's calls (the loop keeps only weak references).
        self._tasks: set[asyncio.Task[None]] = set()

    def add(self, direct: Direct, call: CallArgs) -> None:
        """Decide ``call`` with the others given in this turn; answer it through ``direct``."""
        turn = self._turn
        if turn is None:
            # The first of the turn: decided at the next turn, after every request
            # read in this one (the loop runs what was ready when it began).
            # Scheduled first: a turn is never kept without its decision to come.
            asyncio.get_running_loop().call_soon(self._decide)
            self._turn = turn = []
        turn.append((direct, call))

    def _decide(self) -> None:
        """Decide the calls `add` was given in the last turn; each is answered once durable."""
        turn, self._turn = self._turn, None
        assert turn is not None
        if len(turn) > 1:
            # Every call decided now, in this turn, as `Engine.call_many`'s coroutine
            # runs up to its wait for the commit; a task waits for the rest. (Made
            # a task at once, it would begin only at the next turn.) Both in one
            # context, the task's: the engine sets a context variable before the
            # wait and resets it after (`engine.store.transactions.JOINED`).
            many = self._decide_many(turn)
            its = contextvars.copy_context()
            try:
                step = its.run(many.send, None)
            except StopIteration:
                return
            task = asyncio.get_running_loop().create_task(_rest(many, step), context=its)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return
        # Alone in its turn (one connection, say): `Engine.call`, whose commit a lone
        # caller's batch makes at once (`run_eagerly`), where `call_many`'s would wait
        # for the next turn; mostly answered right here, without a task.
        direct, (card, call, target, args, context) = turn[0]
        try:
            done = asyncio.ensure_future(self._engine.call(
                card, call, target, args, context=context))
        except Exception as exc:  # as `call_many` would have it
            _respond(direct, exc)
            return
        if done.done():
            _answer_done(direct, done)
        else:
            done.add_done_callback(partial(_answer_done, direct))

    async def _decide_many(self, turn: list[tuple[Direct, CallArgs]]) -> None:
        """A turn's calls as one `Engine.call_many`, each answered once durable."""
        results: list[Decision | Exception]
        try:
            results = await self._engine.call_many([call for _, call in turn])
        except Exception as exc:  # each call fails alike (`Engine.call`'s error)
            results = [exc] * len(turn)
        for (direct, _), d in zip(turn, results, strict=True):
            _respond(direct, d)


async def _rest(coro: Coroutine[Any, Any, None], step: Any) -> None:
    """The rest of ``coro``, which has run up to a wait and yielded ``step``."""
    await resume(coro, step)


def _answer_done(direct: Direct, done: asyncio.Future[Decision]) -> None:
    """Answer a call `FastLane.take` decided alone, now its future is done."""
    if done.cancelled():  # the server is closing: as a task cancelled would be
        _respond(direct, asyncio.CancelledError())
        return
    exc = done.exception()
    _respond(direct, done.result() if exc is None else exc)


def _respond(direct: Direct, d: Decision | BaseException) -> None:
    """Answer a call `FastLane.take` took: its decision, or what its call raised."""
    if isinstance(d, BaseException):
        direct.run(_failed(d))
        return
    try:
        body = decision_bytes(d) or decisions_bytes([d], False)
        head = _HEADS.get(len(body))
        if head is None:
            head = JSON_HEAD % len(body)
            if len(_HEADS) < _HEADS_MAX:
                _HEADS[len(body)] = head
        if direct.respond(200, head, body):
            return
    except Exception as exc:  # raised in the lane's task, it would be answered 500
        direct.run(_failed(exc))
        return
    direct.run(_sending(body))


def _failed(exc: BaseException) -> ASGIApp:
    """An ASGI app answering a call `FastLane.take` took as `FastLane.__call__` answers
    the call's ``exc``: problem+json for the service's and the engine's errors;
    any other exception 500 ``INTERNAL`` (`internal_problem`, as FastAPI's routes answer
    it); a cancellation (the server closing) goes on, for the server."""
    async def answer(scope: Scope, receive: Receive, send: Send) -> None:
        if isinstance(exc, (ServiceError, ConsentError)):
            await error_response(exc)(scope, receive, send)
        elif isinstance(exc, Exception):
            await internal_problem(exc)(scope, receive, send)
        else:
            raise exc

    return answer


def _sending(body: bytes) -> ASGIApp:
    """An ASGI app sending a call's 200 answer, when the server's short way cannot."""
    async def answer(scope: Scope, receive: Receive, send: Send) -> None:
        await send_bytes(send, 200, body)

    return answer
