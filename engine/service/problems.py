"""Errors as ``application/problem+json`` (RFC 9457), and the request body limit.

Every error the service answers carries the engine's ``code``, ``reason``,
``permission`` and ``message``, in one shape, made here. A refused *call*
is not an error: it is a 200 with the Decision.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engine.core.errors import (
    ApprovalRefused,
    CardUnknown,
    ConsentError,
    NotFound,
    PackageNotInstalled,
    PackagePending,
    RequestRefused,
    StoreFailed,
    with_code,
)
from engine.service.methods import allowed as allow_value

__all__ = ["PROBLEM", "BodyLimit", "ServiceError", "Unexpected", "error_response", "guarded",
           "install_handlers", "internal_problem", "json_content_type", "leaf_routes", "problem",
           "status_of", "validation_problem"]

PROBLEM = "application/problem+json"

_T = TypeVar("_T")

#: Where an exception no route expected is logged, with its traceback.
_log = logging.getLogger("arrowgate.service")

_TITLES = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 409: "Conflict", 413: "Content Too Large",
           415: "Unsupported Media Type", 500: "Internal Server Error",
           503: "Service Unavailable"}


class ServiceError(Exception):
    """An error the service itself raises (no token, not allowed, not found).

    ``message`` is ``text`` with ``code`` in front (`with_code`, as every
    engine error has it); the raise site gives the code once and the text.
    """

    def __init__(self, status: int, code: str, text: str, *, reason: str | None = None,
                 permission: str | None = None, headers: dict[str, str] | None = None,
                 **extra: Any) -> None:
        message = with_code(code, text)
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.reason, self.permission, self.extra = reason, permission, extra
        self.headers = headers  #: response headers, e.g. a 405's Allow


def problem(status: int, code: str, message: str, *, reason: str | None = None,
            permission: str | None = None, headers: dict[str, str] | None = None,
            **extra: Any) -> Response:
    """A problem+json response."""
    body: dict[str, Any] = {
        "type": f"urn:arrowgate:problem:{code.lower()}",
        "title": _TITLES.get(status, "Error"),
        "status": status,
        "detail": message,
        "code": code,
        "reason": reason,
        "permission": permission,
        "message": message,
    }
    body.update({k: v for k, v in extra.items() if k not in body})
    headers = dict(headers or {})
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    retry_after = extra.get("retry_after")
    # Said only where the service knows when asking again can be answered otherwise:
    # a token check's outage (`engine.service.auth`), a PostgreSQL store away,
    # reconnecting (`engine.store.pg.parts`), and a token's too-many-streams 429 (the
    # heartbeat, by which a stream whose client is gone is found: `routes._crowded`).
    # Not a lock another program holds (``locked``: it ends when that program ends its
    # transaction), nor a write that failed otherwise: a full disk or a file gone wait
    # for a person's fix, and a lost PostgreSQL connection is tried again by the next
    # request itself, at once: a server that refuses it (stopped, restarting) names no
    # time it returns, and one that does not answer is "away", above. The server never
    # answers for its own shutdown: it stops accepting, ends streams and waits with what
    # holds then, and closes idle connections.
    if status in (429, 503) and isinstance(retry_after, (int, float)):
        # The problem says when to ask again: so does the field clients read (RFC 9110
        # §10.2.3), in whole seconds, rounded up (asked sooner, the answer is the same).
        headers["Retry-After"] = str(max(1, math.ceil(retry_after)))
    return Response(json.dumps(body, default=str), status_code=status, media_type=PROBLEM,
                    headers=headers)


def internal_problem(exc: BaseException) -> Response:
    """The answer to an exception no route expected: 500 ``INTERNAL`` as problem+json.

    Its traceback goes to the server's log, not to the client: it may hold what
    the client may not see (paths, values of the store).
    """
    _log.error("arrowgate: an unexpected error answering a request", exc_info=exc)
    return problem(500, "INTERNAL", with_code(
        "INTERNAL", f"the service failed answering this request ({type(exc).__name__}); "
        "the server's log holds why"), reason="unexpected")


class Unexpected:
    """Answer an exception no route expected with a problem+json 500, the connection kept.

    Starlette's last resort answers ``text/plain`` and raises on, and the server then
    closes a connection whose answer it saw begin: a keep-alive client's next request
    on it meets a reset. Here the error is logged and answered, and the request ends
    as any other (`guarded`).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await guarded(self.app, scope, receive, send)


async def guarded(answer: Callable[[Scope, Receive, Send], Awaitable[_T]], scope: Scope,
                  receive: Receive, send: Send) -> _T | None:
    """What ``answer(scope, receive, send)`` returns, or None once an exception it did
    not expect is answered with a problem+json 500 (`Unexpected`).

    An answer already begun (a stream) cannot be taken back: the server refuses a
    second start, and the exception then goes on, so the server ends the connection
    (the body is cut short, which the client sees). Nothing is wrapped a request
    (no ``send`` that watches for the start): every request of the service passes
    here, the health check and the hot call route included.
    """
    try:
        return await answer(scope, receive, send)
    except StarletteHTTPException:
        raise  # expected: answered where it is meant for (a body over the limit: 413)
    except Exception as exc:
        try:
            await internal_problem(exc)(scope, receive, send)
        except Exception:
            # Begun already (through ``send`` or the server's short way out,
            # `Direct`): the server ends the connection.
            raise exc from None
    return None


def status_of(exc: ConsentError) -> int:
    """The HTTP status of an engine error, by its class (every other one is a 400)."""
    if isinstance(exc, ApprovalRefused):
        return 409 if exc.reason == "stale" else 403
    if isinstance(exc, StoreFailed):
        return 503
    if isinstance(exc, (NotFound, CardUnknown)):
        return 404
    if isinstance(exc, (PackageNotInstalled, PackagePending)):
        return 409
    if isinstance(exc, RequestRefused):
        return 403
    return 400


def _where(loc: Any) -> str:
    return ".".join(str(p) for p in loc)


def error_response(exc: ConsentError | ServiceError) -> Response:
    """The problem+json answer to an engine error or a service error."""
    if isinstance(exc, ServiceError):
        return problem(exc.status, exc.code, exc.message, reason=exc.reason,
                       permission=exc.permission, headers=exc.headers, **exc.extra)
    data = exc.to_json()
    extra = {k: v for k, v in data.items() if k not in ("code", "reason", "permission", "message")}
    return problem(status_of(exc), exc.code, exc.message, reason=exc.reason,
                   permission=exc.permission, **extra)


def validation_problem(errors: Sequence[Any], content_type: str | None = None) -> Response:
    """A 400 naming what was wrong with a request: malformed JSON, an unknown field, a type,
    or a body not sent as JSON (``content_type``: the request's, when the whole body
    was refused)."""
    first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    kind = str(first.get("type", ""))
    if tuple(first.get("loc", ())) == ("body",) and not json_content_type(content_type):
        # FastAPI reads a body as JSON only under a JSON type, and says of any
        # other that it is not an object: the type is what to fix.
        sent = f"Content-Type {content_type}" if content_type else "no Content-Type"
        return error_response(ServiceError(
            400, "INVALID_ARGUMENT", f"body: sent with {sent}; send JSON with "
            "Content-Type: application/json", reason="content-type"))
    # A JSON syntax error's location is a character offset, not a field.
    where = "body" if kind == "json_invalid" else _where(first.get("loc", ()))
    reason = "malformed-json" if kind == "json_invalid" else (
        "unknown-field" if kind == "extra_forbidden" else "invalid")
    problems = [{"where": _where(e.get("loc", ())), "problem": str(e.get("msg", ""))}
                for e in errors[:20]]
    said = str(first.get("msg", "invalid"))
    if kind == "json_invalid":
        said = _not_json(first)
    return error_response(ServiceError(400, "INVALID_ARGUMENT", f"{where or 'body'}: {said}",
                                       reason=reason, problems=problems))


def _not_json(error: Any) -> str:
    """What was wrong with a body that is not JSON, as FastAPI's error has it: the
    reader's reason (FastAPI says only "JSON decode error") and, where it stopped
    at a character, which."""
    ctx = error.get("ctx")
    why = str(ctx.get("error", "")) if isinstance(ctx, dict) else ""
    loc = tuple(error.get("loc", ()))
    at = loc[1] if len(loc) > 1 and type(loc[1]) is int else 0
    if not why:
        return "cannot be read as JSON"
    return f"cannot be read as JSON: {why[:200]}" + (f" (at character {at})" if at else "")


def json_content_type(content_type: str | None) -> bool:
    """Whether a ``Content-Type`` value names JSON, as FastAPI reads it: ``application/json``
    or ``application/*+json``, parameters aside (``email.message.Message``'s reading,
    which takes a type without exactly one ``/`` as ``text/plain``)."""
    if not content_type:
        return False
    kind = content_type.split(";")[0].strip().lower()
    if kind.count("/") != 1:
        return False
    main, sub = kind.split("/")
    return main == "application" and (sub == "json" or sub.endswith("+json"))


def install_handlers(app: FastAPI) -> None:
    """Turn every error into one problem+json shape."""

    async def consent(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ConsentError)
        return error_response(exc)

    async def service(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ServiceError)
        return error_response(exc)

    async def invalid(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return validation_problem(exc.errors(), request.headers.get("content-type"))

    async def http(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        if exc.status_code == 405:
            # Starlette names only the first route of the path; list every method.
            allowed: set[str] = set()
            for route in leaf_routes(request.app.router.routes):
                match, _child = route.matches(request.scope)
                if match != Match.NONE:
                    allowed |= set(getattr(route, "methods", None) or ())
            if allowed:
                # HEAD wherever GET is: the server answers it (`engine.service.methods`).
                exc.headers = {"Allow": allow_value(allowed)}
        code = "NOT_FOUND" if exc.status_code == 404 else "INVALID_ARGUMENT"
        # FastAPI's own 400 is a body it could not parse at all (not UTF-8).
        reason = {400: "malformed-json", 404: "route", 405: "route",
                  413: "too-large"}.get(exc.status_code)
        # 405 carries the Allow header (RFC 9110), which Starlette put on the exception.
        return error_response(ServiceError(exc.status_code, code, str(exc.detail), reason=reason,
                                           headers=dict(exc.headers or {})))

    app.add_exception_handler(ConsentError, consent)
    app.add_exception_handler(ServiceError, service)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(StarletteHTTPException, http)


def leaf_routes(routes: Any) -> Iterator[Any]:
    """Routes, with those of included routers (FastAPI wraps them) taken out."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from leaf_routes(inner.routes)
        else:
            yield route


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with 413, before any route reads them.

    A declared ``Content-Length`` over the limit is refused at once; a body
    sent without one (chunked) is counted as it arrives.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # Not a coroutine of its own: a request whose body needs no counting
        # (a declared length within the limit, or no body at all) is handed on
        # as the inner app's awaitable, one coroutine layer fewer a request.
        # (A server must therefore be told this is ASGI 3: `engine.service.serve`.)
        if scope["type"] != "http":
            return self.app(scope, receive, send)
        chunked = False
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    length = -1
                if length < 0 or length > self.limit:
                    return self._refuse(scope, receive, send, length)
                # The server reads exactly Content-Length bytes of body (and
                # refuses one that also says chunked), so nothing to count.
                return self.app(scope, receive, send)
            if name == b"transfer-encoding":
                chunked = True
        if not chunked:
            # Neither a length nor a transfer coding: a request without a body
            # (RFC 9112 §6.3), which the server reads as such.
            return self.app(scope, receive, send)
        return self._counted(scope, receive, send)

    async def _counted(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app, with a body sent without a declared length counted as it arrives."""
        seen = 0
        refused = False

        async def counting() -> Message:
            nonlocal seen, refused
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    refused = True
                    raise _TooLarge(self.limit)
            return message

        started = False

        async def tracking(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting, tracking)
        except _TooLarge:
            if not started:
                await self._refuse(scope, receive, send, seen)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, length: int) -> None:
        if length < 0:
            error = ServiceError(400, "INVALID_ARGUMENT", "Content-Length is not a number",
                                 reason="content-length")
        else:
            error = ServiceError(413, "INVALID_ARGUMENT", f"the request body is larger than "
                                 f"{self.limit} bytes", reason="too-large")
        response = error_response(error)
        if (b"expect", b"100-continue") in ((n, v.lower()) for n, v in scope.get("headers", ())):
            # Refused before the client was told to send its body: it never will,
            # so the connection ends here (its next request is not read as a body).
            response.headers["connection"] = "close"
        await response(scope, receive, send)


class _TooLarge(StarletteHTTPException):
    """Raised from ``receive`` when a streamed body passes the limit.

    An HTTPException, because FastAPI turns any other error met while reading
    a body into a 400; this one it lets through to `install_handlers`.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than {limit} bytes")
