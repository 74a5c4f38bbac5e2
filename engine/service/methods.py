"""The two methods every server answers beyond its routes: ``HEAD`` on each GET route, and
``OPTIONS *``, the server as a whole.

RFC 9110 §9.1: a general-purpose server MUST support GET and HEAD. A client
checking a route (a monitor asking ``HEAD /v1/health``, a proxy, ``curl -I``)
was answered 405, ``Allow: GET``: the route exists, the method is refused. So a
``HEAD`` is carried out as the ``GET`` of its target would be, through the
same lane and routes — the same authentication, the same decision, the same
status and header fields, ``Transfer-Encoding`` too where the GET's is streamed — and
answered without a body (RFC 9110 §9.3.2). Its
answer is complete once its head is sent: an events stream (``GET
/v1/events``) is opened and ended at once, and a wait (``GET
/v1/tool-calls/{id}/wait``) waits as its GET would, since only then is its
status known. Nothing a HEAD reaches changes anything: GET is safe on every
route (SPEC §10.1).

``OPTIONS *`` (RFC 9110 §9.3.7) asks what the server supports, of no resource:
it is answered 200, ``Allow`` the methods some route serves (with HEAD and
OPTIONS), ``Content-Length: 0``, with no token asked — it says no more than a
405's ``Allow`` says to anyone. ``OPTIONS`` of a path stays 405, naming that
path's methods: no route answers OPTIONS.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["allowed", "head", "options_asterisk"]


def allowed(methods: Iterable[str]) -> str:
    """An ``Allow`` value: ``methods`` sorted, with HEAD where GET is (`head`)."""
    found = set(methods)
    if "GET" in found:
        found.add("HEAD")
    return ", ".join(sorted(found))


async def head(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer a ``HEAD`` as ``app`` answers the ``GET`` of its target, with no body.

    The server's own scope keeps the method HEAD, so uvicorn writes no body
    and frames the answer as a HEAD's; ``app`` is given a copy that says GET,
    without the server's short way out (`engine.service.direct.Direct`), which
    would write the body itself. Once the head is sent, the answer is complete:
    what ``app`` sends after it is dropped, and its ``receive`` tells a
    streaming route the client is gone (uvicorn's does, once the answer is
    complete), so a stream ends rather than run unread.
    """
    as_get = {key: value for key, value in scope.items() if key != "arrowgate.direct"}
    as_get["method"] = "GET"
    done = False

    async def send_head(message: Message) -> None:
        nonlocal done
        if done:
            return  # the body of the GET: a HEAD's answer has none
        if message["type"] == "http.response.start":
            message = _framed_as_get(message)
        await send(message)
        if message["type"] == "http.response.start":
            done = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    await app(as_get, receive, send_head)


def _framed_as_get(start: Message) -> Message:
    """``start`` with the framing its GET's head would carry: ``Transfer-Encoding:
    chunked`` where the answer names no length (a stream: the events, a log export).

    The server adds that field to a GET's head itself, and not to a HEAD's, which
    has no body to frame; but a HEAD's head is to be its GET's (RFC 9110 §9.3.2,
    and RFC 9112 §6.1 lets it say Transfer-Encoding), so a client asking ``HEAD``
    learns the answer is streamed. A 1xx, 204 or 304 has no body to frame in
    either (the server adds nothing there).
    """
    status = start["status"]
    names = {name.lower() for name, _ in start.get("headers", ())}
    if status < 200 or status in (204, 304) or names & {b"content-length", b"transfer-encoding"}:
        return start
    return {**start, "headers": [*start.get("headers", ()), (b"transfer-encoding", b"chunked")]}


def options_asterisk(allow: str) -> ASGIApp:
    """The answer to ``OPTIONS *``: 200, ``Allow: allow``, no body."""
    headers = [(b"allow", allow.encode("ascii")), (b"content-length", b"0")]

    async def answer(_scope: Scope, _receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    return answer
