"""``arrowgate mcp --agent ID`` (SPEC §10.2): card tools for a real coding agent, over MCP.

An MCP server on standard input/output, built on the official SDK's low-level
`mcp.server.lowlevel.Server` (its tool list is per agent and changes with the
canvas). It talks to `arrowgate serve` as agent ``ID`` with that agent's token,
and so goes through SPEC §9 in full:

- ``tools/list`` is exactly the tools of the cards an arrow connects to the
  agent now, named ``<card>__<tool>`` with their description and input schema,
  plus ``arrowgate__prompt_status``.
- ``notifications/tools/list_changed`` is sent once for each change of that
  set after the client has listed it. The bridge follows the list rather than
  polling it: one request waits on the service until the list differs from the
  one the bridge has (``If-None-Match`` and ``?wait``, `engine.service.toolwatch`),
  so an agent whose tools do not change costs the service one listing a
  `FOLLOW_WAIT`; a service that was away is asked for the whole list again. A
  token the service refuses (`TokenRefused`: the agent removed, its token
  revoked) leaves the agent no card tools: told once, then no longer followed.
- Every ``tools/call`` is decided by the engine, never by the client's list: a
  tool the client still lists after its arrow went is refused by the engine
  (and logged), and the refusal is a tool result with ``isError: true`` and the
  Decision's message. Arguments are checked by the engine against the tool's
  schema (so bad ones are logged too), not by the SDK.
- A long call reports progress while it waits (when the client sent a progress
  token); ``notifications/cancelled`` cancels the tool call on the service
  (logged ``cancelled``).
- At most `MAX_IN_FLIGHT` requests (`MAX_IN_FLIGHT_BYTES` of lines) are in
  flight; one beyond is answered at once with an error, and a request that
  cannot be read (nested too deep, not one the protocol knows) is answered with
  an error naming its id, or, when its id is none MCP takes (an object, an
  array, a boolean, null), with ``"id": null`` as JSON-RPC 2.0 answers an
  Invalid Request: a client is never left waiting for an answer, nor can it
  make the server hold its requests without bound. Standard input and output
  are read and written so whatever they are (pipes on the loop; a file or a
  terminal in a thread, never the SDK's own stdio transport, which would only
  log those requests).
- When the card's work for the call makes a prompt that is held for a person,
  the call returns at once with the held prompt's id and state (a tool call
  never blocks for a person); ``arrowgate__prompt_status`` reports it, or the
  tool call's own answer, later.

A plain ``tools/call`` takes a short way (issue 17: it is on the agent's
critical path). On stdio, the SDK's session turns each request into
about a dozen pydantic validations and dumps and five tasks' turns (reader,
session, server, handler, writer): more CPU than the tool call's own HTTP
request. So `AgentMCP._take` answers a ``tools/call`` itself when it is plain
— after the client's ``notifications/initialized``, a JSON-RPC request whose
params are only a listed tool's ``name``, ``arguments`` (an object) and
``_meta.progressToken`` — with the same handler, the same result, progress
and cancellation (``notifications/cancelled``: the error response the SDK
sends, the tool call cancelled on the service) as the SDK's way; every other
message, and any request that is not plain, is the SDK's
(``tests/service/test_mcp.py`` runs both ways).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol, cast

if TYPE_CHECKING:
    from engine.app.stdiofiles import Overlong, OverlongParts

__all__ = ["STATUS_TOOL", "AgentMCP", "OutputFailed", "ServiceClient", "ServiceError",
           "ServiceUnreachable", "TokenRefused", "default_agent_token_file", "register"]

#: The tool that reports a held prompt's (or a tool call's) state later.
STATUS_TOOL = "arrowgate__prompt_status"
#: Seconds between tries to follow the agent's tool list while the service is away
#: (or the client has not listed its tools yet, or the service answers at once).
POLL = 0.5
#: Seconds one request following the agent's tool list waits on the service for it to
#: change (for list_changed; well within `REQUEST_TIMEOUT`).
FOLLOW_WAIT = 25.0
#: Seconds one wait on the service lasts before a progress notification.
PROGRESS_EVERY = 2.0
#: Seconds the request that opens a tool call also waits for its answer
#: (``POST /v1/tool-calls?wait=S``): a card that answers at once costs one
#: request, not two. Short, because a notifications/cancelled that arrives
#: meanwhile can cancel the call on the service only once its id is known.
FIRST_WAIT = 0.5
#: Seconds an idle connection to the service is reused (the service keeps them 60).
IDLE_REUSE = 30.0
#: Seconds one request to the service may take (a wait is at most PROGRESS_EVERY).
REQUEST_TIMEOUT = 60.0
#: Seconds `AgentMCP._follow` follows one tool call at most when the service does not
#: say how long it may still take (a service older than ``expires_in``): the longest
#: ``tool_timeout`` a workspace may set (a day, `canvas.model`), and a request's time
#: more. The engine ends every tool call at its own tool_timeout, so only a broken
#: service keeps one open this long; the agent then gets an error, and the call is
#: cancelled.
FOLLOW_LIMIT = 86_400.0 + REQUEST_TIMEOUT
#: Seconds a tool call is followed past the end its ``expires_in`` gave (the engine
#: ends it at its deadline, but its answer, like the engine's tick, may come a little
#: later on a busy service).
FOLLOW_MARGIN = 30.0
#: The largest response body read from the service.
MAX_BODY = 64 * 1024 * 1024
#: The longest id of a prompt or a tool call (the service's ids: `engine.service.models.Id`).
MAX_ID = 256
#: The most requests in flight at once on pipes (read, not yet answered: the SDK's and
#: `AgentMCP._take`'s). One beyond is answered at once with an error, so a client that
#: writes requests faster than they are answered cannot make the server hold them (and
#: their arguments) without bound; its requests stay read, so a cancellation still is.
MAX_IN_FLIGHT = 64
#: The most bytes of those requests' lines, together (the service takes a body of 8 MiB).
MAX_IN_FLIGHT_BYTES = 16 * 1024 * 1024
#: The most bytes of a line read from the client: a longer one is dropped unread and a
#: request on it refused naming this bound (`_overlong`). No more than its requests in
#: flight may hold together, which no request past it could ever fit in.
MAX_LINE = MAX_IN_FLIGHT_BYTES
#: The most JSON values a line may hold (counted on its text, `engine.core.jsoncount`):
#: the service's bound on a request body (`engine.service.bodyvalues.MAX_BODY_VALUES`),
#: which a tool call's arguments are sent in. A line past it is dropped unread, as one
#: past `MAX_LINE` is: read, 16 MiB of empty objects would be millions of them, built
#: by this bridge and again by the SDK, only for the service to refuse the body.
MAX_LINE_VALUES = 1 << 18


def default_agent_token_file(db: Path, agent: str) -> Path:
    """Where a driver writes agent ``agent``'s token: ``<db>.agents/<agent>.token``."""
    return db.with_name(db.name + ".agents") / f"{agent}.token"


class ServiceError(Exception):
    """The service could not be reached, or did not answer in time or as HTTP/1.1."""


class ServiceUnreachable(ServiceError):
    """The service could not be reached, or closed the connection before it answered (it
    is stopping or restarting): a request that changes nothing may be sent again."""


class TokenRefused(ServiceError):
    """The service refused the agent's token (401: unknown or revoked, as when its agent
    was removed). A token never becomes valid again: the agent has no tools through it."""


class _Reply:
    """A response: its status and its body."""

    __slots__ = ("status_code", "body")

    def __init__(self, status_code: int, body: bytes) -> None:
        self.status_code, self.body = status_code, body

    @property
    def text(self) -> str:
        """The body as text."""
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body as JSON (ValueError when it is not)."""
        from engine.service.jsonread import loads

        return loads(self.body)


class ServiceClient:
    """The service as agent ``agent`` sees it, over a Unix socket, loopback TCP or TLS.

    Not httpx: a tool call's request is on the agent's critical path, and
    httpx's request and response models cost about 1 ms of CPU a request on
    this machine (BENCHMARKS.md, issue 17). On the service's Unix socket the
    HTTP/1.1 goes through `engine.app.kept.UnixConnections` (the response
    framed by httptools' llhttp; round 10: httpcore and h11 cost about 0.15 ms
    of CPU a request more); over TCP and TLS it is httpcore's, its connections
    kept by `engine.app.kept.KeptConnections` rather than httpcore's pool,
    whose bookkeeping cost more than the request itself (round 8). Either way
    they are kept alive and one the service closed is never reused (the check
    before each reuse), so a POST is never sent twice, and each request leaves
    in one write, waking the service once.
    """

    def __init__(self, address: str, token: str, agent: str) -> None:
        import httpcore

        from engine.core.serviceaddress import service_address

        if not token or not token.isascii() or not token.isprintable() or " " in token:
            raise ValueError("the agent token must be one word of printable ASCII")
        self.agent = agent
        #: The socket path or URL the service is reached at, as given: named in errors.
        self.address = address
        # Plain http only to loopback, no user name, query or fragment (AddressRefused, a
        # ValueError naming the address and why): the token goes with every request.
        where = service_address(address)
        unix = where.socket
        self._headers = [(b"Authorization", f"Bearer {token}".encode("ascii")),
                         (b"Accept", b"application/json")]
        from engine.app.kept import KeptConnections, UnixConnections
        from engine.app.onewrite import OneWriteBackend

        if unix is None:
            scheme = where.scheme.encode("ascii")
            origin = httpcore.Origin(scheme, where.host.encode("idna"),
                                     where.port or (443 if scheme == b"https" else 80))
            #: A path the address ends with, before each request's own.
            self._prefix = where.path
        else:
            origin, self._prefix = httpcore.Origin(b"http", b"arrowgate", 80), ""
        # The service's own socket (the usual way) is spoken to without httpcore
        # and h11 (`UnixConnections`: about 0.15 ms of CPU less a request); TCP and
        # TLS stay on httpcore's connections.
        self._connections: KeptConnections | UnixConnections = \
            UnixConnections(unix, b"arrowgate", keepalive=IDLE_REUSE) if unix is not None \
            else KeptConnections(origin, OneWriteBackend(), keepalive=IDLE_REUSE)
        self._closed = False

    # ------------------------------------------------------------ requests
    async def request(self, method: str, path: str, body: Any = None,
                      headers: list[tuple[bytes, bytes]] | None = None) -> _Reply:
        """One request (``body`` sent as JSON when not None, ``headers`` besides the
        client's own); the service's reply.

        Raises:
            ServiceError: the service is unreachable, closed the connection,
                answered more than `MAX_BODY` bytes or did not answer within
                `REQUEST_TIMEOUT` seconds; or ``body`` nests deeper than the
                service reads (nothing is sent).
        """
        import httpcore

        from engine.app.kept import BodyTooLarge, ServerClosed

        if self._closed:
            raise ServiceError("the client is closed")
        headers = self._headers if headers is None else [*self._headers, *headers]
        data = b""
        if body is not None:
            from engine.app.deepjson import TooDeep

            try:
                data = _dumps(body)
            except TooDeep:
                from engine.service.jsonread import MAX_DEPTH

                raise ServiceError(
                    f"the request to {method} {path} is nested too deep for the service, "
                    f"which reads JSON nested at most {MAX_DEPTH:,} levels (a tool call's "
                    f"arguments: {MAX_DEPTH - 1:,}); nothing was sent") from None
            headers = [*headers, (b"Content-Type", b"application/json")]
        try:
            status, content = await self._connections.request(
                method.encode("ascii"), (self._prefix + path).encode("ascii"), headers, data,
                REQUEST_TIMEOUT, MAX_BODY)
        except BodyTooLarge:
            raise ServiceError("the service's response is too large") from None
        except httpcore.TimeoutException:
            raise ServiceError(f"the service did not answer {method} {path} within "
                               f"{REQUEST_TIMEOUT:g} s") from None
        except httpcore.ConnectError as exc:
            from engine.app.serviceclient import socket_hint

            raise ServiceUnreachable(f"cannot reach the service at {self.address} (is "
                                     f"`arrowgate serve` running there?): "
                                     f"{exc or type(exc).__name__}"
                                     f"{socket_hint(self.address)}") from exc
        except (httpcore.NetworkError, ServerClosed) as exc:
            raise ServiceUnreachable(f"the service closed the connection: "
                                     f"{exc or type(exc).__name__}") from exc
        except (httpcore.ProtocolError, httpcore.UnsupportedProtocol) as exc:
            raise ServiceError(f"the service closed the connection or answered badly: "
                               f"{exc or type(exc).__name__}") from exc
        return _Reply(status, content)

    async def tools(self) -> list[dict[str, Any]]:
        """The tools the agent may call now.

        Raises:
            TokenRefused: the service refused the agent's token.
            ServiceError: as `request`; the service refused, or answered something else
                than a list of tools as its API gives them (``name``, ``card`` and
                ``tool`` texts, ``description`` a text or null, ``input`` an object).
        """
        return self._tool_list(await self.request("GET", f"/v1/agents/{_seg(self.agent)}/tools"))

    async def tools_after(self, seen: str, wait: float) -> list[dict[str, Any]] | None:
        """The tools the agent may call, once they differ from the list tagged ``seen``
        (`engine.service.toolwatch.tag`): the service answers when they do, or after
        ``wait`` seconds with None (unchanged).

        Raises:
            ServiceError: as `tools`.
        """
        r = await self.request("GET",
                               f"/v1/agents/{_seg(self.agent)}/tools?wait={_seconds(wait)}",
                               headers=[(b"If-None-Match", seen.encode("ascii"))])
        return None if r.status_code == 304 else self._tool_list(r)

    @staticmethod
    def _tool_list(r: _Reply) -> list[dict[str, Any]]:
        if r.status_code == 401:
            raise TokenRefused(f"the service refused the agent's token: {r.text[:300]}")
        if r.status_code != 200:
            raise ServiceError(f"listing the tools failed: {r.status_code} {r.text[:300]}")
        try:
            tools = r.json()
        except ValueError:
            tools = None
        if type(tools) is not list or not all(
                type(t) is dict and type(t.get("name")) is str and type(t.get("card")) is str
                and type(t.get("tool")) is str and type(t.get("input")) is dict
                and (t.get("description") is None or type(t["description"]) is str)
                for t in tools):
            raise ServiceError("the service's tool list is not one its API gives: "
                               f"{r.text[:300]}")
        return tools

    async def call(self, card: str, tool: str, args: dict[str, Any],
                   wait: float | None = None) -> dict[str, Any]:
        """Open a tool call: ``{"id", "state", "decision"}``; with ``wait`` (seconds),
        also ``call``, the tool call after waiting that long for its answer."""
        query = "" if wait is None else f"?wait={_seconds(wait)}"
        return _json_or_problem(await self.request(
            "POST", "/v1/tool-calls" + query, {"agent": self.agent, "card": card,
                                               "tool": tool, "args": args}))

    async def wait(self, call_id: str, timeout: float) -> dict[str, Any]:
        """The tool call after waiting up to ``timeout`` seconds."""
        return _json_or_problem(await self.request(
            "GET", f"/v1/tool-calls/{_seg(call_id)}/wait?timeout={_seconds(timeout)}"))

    async def get(self, path: str) -> dict[str, Any]:
        """A GET as the agent (``path`` already quoted)."""
        return _json_or_problem(await self.request("GET", path))

    async def cancel(self, call_id: str) -> dict[str, Any]:
        """Give up on a tool call (the engine logs it ``cancelled``)."""
        return _json_or_problem(await self.request("POST",
                                                   f"/v1/tool-calls/{_seg(call_id)}/cancel"))

    async def aclose(self) -> None:
        """Close every connection."""
        self._closed = True
        await self._connections.aclose()


#: A request's JSON body, as ``json.dumps(body, separators=(",", ":"))`` writes it
#: (one encoder, not one made for every request).
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def _dumps(body: Any) -> bytes:
    """``body`` as JSON: json's encoder; past the depth it recurses to, `deepjson`'s, to
    the depth the service reads (`engine.service.jsonread.MAX_DEPTH`).

    Raises:
        deepjson.TooDeep: nested deeper than the service reads.
    """
    try:
        return _ENCODER.encode(body).encode()
    except RecursionError:
        from engine.app import deepjson
        from engine.service.jsonread import MAX_DEPTH

        return deepjson.dumps(body, MAX_DEPTH).encode()


def _seg(value: str) -> str:
    """``value`` as one path segment (a ``/`` or ``?`` in an id stays in the id)."""
    from urllib.parse import quote

    return quote(value, safe="")


def _seconds(value: float) -> str:
    """Seconds as the service's query takes them: a plain decimal to the millisecond,
    ``2`` or ``0.5`` (``:g`` wrote what little is left of a deadline as ``3e-05``, which
    the service refuses: not a plain decimal)."""
    return f"{max(value, 0.0):.3f}".rstrip("0").rstrip(".")


def _json_or_problem(r: _Reply) -> dict[str, Any]:
    try:
        body = r.json()
    except ValueError:
        body = {"message": r.text[:500]}
    if r.status_code >= 400:
        return {"problem": True, "status": r.status_code, **(body if isinstance(body, dict)
                                                                else {})}
    return dict(body) if isinstance(body, dict) else {"value": body}


class AgentMCP:
    """The MCP server of one agent (see the module docstring)."""

    def __init__(self, client: ServiceClient) -> None:
        from mcp import types
        from mcp.server.lowlevel import Server

        self.client = client
        self.types = types
        from engine.app.common import arrowgate_version

        # Its own version: the SDK's default is the mcp package's, which the agent's
        # client would show as arrowgate's.
        self.server: Any = Server("arrowgate", version=arrowgate_version(),
                                  lifespan=self._lifespan)
        self._session: Any = None
        self._listed: frozenset[tuple[str, str, str]] | None = None
        #: The tag of the latest list the service gave (`engine.service.toolwatch.tag`):
        #: what `_watch` asks the service to answer a change from.
        self._seen: str | None = None
        #: ``<card>__<tool>`` → (card, tool), from the latest list the service gave.
        self._names: dict[str, tuple[str, str]] = {}
        #: The same, as the client's latest ``tools/list`` was answered: what a name it
        #: calls meant when it was told it (`_meant`).
        self._told: dict[str, tuple[str, str]] = {}
        #: How many list_changed notifications were sent (for tests and logs).
        self.notified = 0
        #: The service refused the agent's token, and standard error said so (`_refused`).
        self._said_refused = False
        #: The client sent notifications/initialized: `_take` may answer tools/call.
        self._ready = False
        #: Request id → the cancel scope of a tools/call `_take` is answering.
        self._inflight: dict[int | str, Any] = {}
        #: Request id → the length of the line of a tools/call `_take` is answering.
        self._sizes: dict[int | str, int] = {}
        #: Request id → the lengths of the lines of the requests the SDK has and has
        #: not answered (a client may reuse an id meanwhile).
        self._passed: dict[int | str, list[int]] = {}
        #: Requests in flight and the bytes of their lines (`MAX_IN_FLIGHT`).
        self._count = self._bytes = 0
        from engine.app.stdiofiles import Overlong

        #: A line too long to read, or of too many values (`Flooded`), dropped (`_take`
        #: answers it; imported once, not for every line).
        self._overlong_lines = Overlong

        async def list_tools(req: Any) -> list[Any]:
            return await self._list_tools(req)

        # The SDK hands the request only to a handler whose parameter is typed
        # ListToolsRequest (and None when it refreshes its own cache): say so at
        # run time, as this module's annotations are strings.
        list_tools.__annotations__ = {"req": types.ListToolsRequest, "return": list[Any]}
        self.server.list_tools()(list_tools)  # type: ignore[no-untyped-call]
        self.server.call_tool(validate_input=False)(self._call_tool)

    @asynccontextmanager
    async def _lifespan(self, _server: Any) -> AsyncIterator[dict[str, Any]]:
        import anyio

        async with anyio.create_task_group() as tg:
            tg.start_soon(self._watch)
            try:
                yield {}
            finally:
                tg.cancel_scope.cancel()

    @staticmethod
    def _key(tools: list[dict[str, Any]]) -> frozenset[tuple[str, str, str]]:
        return frozenset((t["name"], t["description"], json.dumps(t["input"], sort_keys=True))
                         for t in tools)

    async def _watch(self) -> None:
        """Follow the agent's tool set (`ServiceClient.tools_after`); one list_changed
        per change the client has not seen."""
        import anyio

        while True:
            if self._session is None or self._listed is None:
                await anyio.sleep(POLL)
                continue  # nothing listed yet: the client's first list is current
            seen = self._seen
            try:
                tools = await self.client.tools() if seen is None else \
                    await self.client.tools_after(seen, FOLLOW_WAIT)
            except TokenRefused as exc:
                # The agent was removed, or its token revoked: no tool is its through
                # this token, now or later (a token never comes back). Told once; not
                # asked again, which would be refused twice a second for ever.
                self._refused(exc)
                if self._listed != frozenset():
                    self._listed = frozenset()
                    self.notified += 1
                    await self._session.send_tool_list_changed()
                return
            except Exception:
                # The service is away (a restart): once back, it is asked for the whole
                # list, so a change made meanwhile is told all the same.
                self._seen = None
                await anyio.sleep(POLL)
                continue
            if tools is None:
                continue  # the same list after FOLLOW_WAIT: asked again
            self._remember(tools)
            if self._seen == seen is not None:
                # The list it had, answered at once (a service that does not wait):
                # not asked again at once.
                await anyio.sleep(POLL)
            now = self._key(tools)
            if now != self._listed:
                self._listed = now
                self.notified += 1
                await self._session.send_tool_list_changed()

    def _refused(self, exc: TokenRefused) -> None:
        """The agent's token was refused: it has no tools (`_remember`); said once on
        standard error, which MCP clients keep in their logs."""
        if self._said_refused:
            return
        self._said_refused = True
        self._remember([])
        print(f"arrowgate mcp: {_first_line(exc)}; agent {self.client.agent} has no card "
              "tools through it", file=sys.stderr, flush=True)

    def _remember(self, tools: list[dict[str, Any]]) -> None:
        from engine.service.toolwatch import tag

        self._names = {t["name"]: (t["card"], t["tool"]) for t in tools}
        self._seen = tag(tools)

    async def _list_tools(self, req: Any) -> list[Any]:
        types = self.types
        try:
            tools = await self.client.tools()
        except TokenRefused as exc:
            self._refused(exc)
            tools = []  # the token is refused: no card's tool is the agent's
        self._remember(tools)
        if req is not None:
            # A real tools/list from the client (the SDK also calls this on a
            # cache miss, which the client never sees): what it now knows.
            self._session = self.server.request_context.session
            self._listed = self._key(tools)
            self._told = dict(self._names)
        listed = [types.Tool(name=t["name"], description=t["description"] or None,
                             inputSchema=t["input"]) for t in tools]
        listed.append(types.Tool(
            name=STATUS_TOOL,
            description="The state of a prompt that a card's tool made and that waits for a "
                        "person (give prompt), or of a tool call (give tool_call).",
            inputSchema={"type": "object", "properties": {
                "prompt": {"type": "string"}, "tool_call": {"type": "string"}},
                "additionalProperties": False}))
        return listed

    def _text(self, data: Any, *, error: bool = False) -> tuple[str, bool]:
        """A tool result: its text (JSON unless ``data`` is text) and whether it is an error."""
        return (data if isinstance(data, str) else json.dumps(data, sort_keys=True)), error

    async def _call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """The SDK's handler of ``tools/call``: `_outcome` as a ``CallToolResult``."""
        types = self.types
        ctx = self.server.request_context
        token = ctx.meta.progressToken if ctx.meta is not None else None
        notify = None
        if token is not None:
            async def notify(progress: float, message: str) -> None:
                await ctx.session.send_progress_notification(token, progress, message=message)

        text, error = await self._outcome(name, arguments, notify)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    isError=error)

    async def _outcome(self, name: str, arguments: dict[str, Any],
                       notify: _Notify | None) -> tuple[str, bool]:
        """A tool call's result text and whether it is an error; ``notify`` (if given)
        reports progress while it waits."""
        import anyio

        if name == STATUS_TOOL:
            return await self._status(arguments)
        # The name only says which card and tool are meant; whether the call may
        # happen is the engine's decision, made now: a tool the agent may no longer
        # call still goes to the engine, which refuses it, says why and logs it.
        meant = self._meant(name)
        if meant is None:
            return self._text(f"no tool is named {name} now: the name can be read as more "
                              "than one card's tool (<card>__<tool>, and a card's id or a "
                              "tool's name may hold __); list the tools again", error=True)
        card, tool = meant
        if not card or not tool:
            # No card's tool at all (the service would name its request's empty field,
            # which the agent never sent): nothing to ask, nor any arrow to log it on.
            return self._text(f"no tool is named {name!r}: a card's tool is named "
                              "<card>__<tool>, as tools/list gives it; list the tools "
                              "again", error=True)
        # Opened and first waited for in one request. Shielded: cancelled
        # halfway, the call would be open on the service with no one knowing
        # its id to cancel it; so a cancellation waits (at most FIRST_WAIT
        # seconds) for the id, then `_follow` cancels the call.
        with anyio.CancelScope(shield=True):
            opened = await self.client.call(card, tool, arguments, wait=FIRST_WAIT)
        try:
            if opened.get("problem"):
                return self._text(opened.get("message") or opened.get("detail") or "refused",
                                  error=True)
            if opened["state"] != "open":
                return self._text(opened["decision"]["message"], error=True)
            # A service without ?wait answers no "call": then the first wait is a request.
            return await self._follow(str(opened["id"]), opened.get("call"), notify)
        except (KeyError, TypeError, IndexError, AttributeError) as exc:
            # Read as the API gives it (`encode_tool_call`): anything else is the
            # service's fault, and said to be, not a bare "'state'".
            return self._text(f"the service's answer to tool call {name} is not one its API "
                              f"gives ({type(exc).__name__}: {_first_line(exc)})", error=True)

    def _meant(self, name: str) -> tuple[str, str] | None:
        """The (card, tool) a called name means: what it meant when the client was
        last told its tools (a name keeps that meaning until it lists them again,
        though the canvas may have given it another since), else what the service's
        latest list says, else the name read as ``<card>__<tool>`` (`_split`); None
        when it reads as more than one."""
        return self._told.get(name) or self._names.get(name) or _split(name)

    async def _follow(self, call_id: str, first: dict[str, Any] | None = None,
                      notify: _Notify | None = None) -> tuple[str, bool]:
        """The tool call's outcome: ``first`` (the call after a wait, if given), then
        waits of `PROGRESS_EVERY` seconds, each followed by a progress notification;
        whatever the service answers, no longer than the seconds its answers say the
        call may still take (``expires_in``) and `FOLLOW_MARGIN` (a later answer may
        bring that end nearer, never move it away), and `FOLLOW_LIMIT` seconds at most.

        A wait the service answers "open" sooner than asked is not followed by the
        next at once, but when it would have ended: a service that answers at once
        is asked every `PROGRESS_EVERY` seconds, not as fast as the loop runs.

        A service that cannot be reached meanwhile (`ServiceUnreachable`: stopping,
        restarting) is asked again in the same rhythm, within the same bounds: an open
        tool call outlives a restart of the service, and its card may answer it after.
        """
        import time

        import anyio

        waited = 0
        start = time.monotonic()
        deadline = start + FOLLOW_LIMIT
        gone: ServiceUnreachable | None = None  #: why the last wait found no service
        try:
            while True:
                asked = began = 0.0
                if first is not None:
                    tc, first = first, None
                    await anyio.lowlevel.checkpoint_if_cancelled()
                else:
                    began = time.monotonic()
                    asked = min(PROGRESS_EVERY, deadline - began)
                    if asked <= 0:
                        return await self._give_up(call_id, deadline - start, gone)
                    try:
                        tc = await self.client.wait(call_id, asked)
                    except ServiceUnreachable as exc:
                        gone = exc
                        waited += 1
                        if notify is not None:
                            await notify(float(waited), f"waiting for the service, which "
                                                        f"{_first_line(exc)[:200]}")
                        await anyio.sleep(max(0.0, asked - (time.monotonic() - began)))
                        continue
                    gone = None
                if tc.get("problem"):
                    return self._text(tc.get("message") or "the tool call is gone", error=True)
                if tc["state"] == "answered":
                    return self._text(tc["result"])
                if tc["state"] != "open":
                    return self._text(tc["error"]["message"], error=True)
                if tc.get("held"):
                    held = tc["held"][0]
                    return self._text({
                        "tool_call": call_id, "state": "open", "held": tc["held"],
                        "message": f"prompt {held['prompt']} to {held['agent']} waits for a "
                                   f"person's OK; the tool call stays open. Ask "
                                   f"{STATUS_TOOL} with prompt or tool_call later."})
                deadline = min(deadline, _end_said(tc.get("expires_in")))
                waited += 1
                if notify is not None:
                    await notify(float(waited), f"waiting for {tc['card']} to answer "
                                                f"tool call {call_id}")
                early = asked - (time.monotonic() - began)
                if early > 0:
                    await anyio.sleep(early)
        except anyio.get_cancelled_exc_class():
            # notifications/cancelled (or the client went away): the tool call
            # is cancelled on the service and logged, whatever happens here.
            with anyio.CancelScope(shield=True):
                try:
                    await self.client.cancel(call_id)
                except ServiceError:
                    pass  # the service is gone: the call ends at its deadline there
            raise

    async def _give_up(self, call_id: str, limit: float,
                       gone: ServiceUnreachable | None = None) -> tuple[str, bool]:
        """Stop following a tool call the service kept open past ``limit`` seconds, or
        that it could not be asked about since (``gone``): it is cancelled on the service
        (if the service still takes that) and the agent told so."""
        import anyio

        with anyio.CancelScope(shield=True):
            try:
                await self.client.cancel(call_id)
            except ServiceError:
                pass  # the service is gone too: the agent is told all the same
        if gone is not None:
            return self._text(f"{gone}: arrowgate mcp asked after tool call {call_id} for "
                              f"{round(limit, 1):g} s and gave up on it", error=True)
        return self._text(f"the card did not answer tool call {call_id} within "
                          f"{round(limit, 1):g} s "
                          "(the service kept it open): arrowgate mcp gave up on it and "
                          "cancelled it", error=True)

    async def _status(self, arguments: dict[str, Any]) -> tuple[str, bool]:
        # Its input schema, checked here (the SDK's check is off for every tool): a
        # misspelt argument read as absent would ask after another id than meant.
        other = sorted(set(arguments) - {"prompt", "tool_call"})
        if other:
            return self._text(f"{STATUS_TOOL} takes no argument {other[0]!r} (only prompt "
                              "or tool_call)", error=True)
        prompt, call_id = arguments.get("prompt"), arguments.get("tool_call")
        for key, given in (("prompt", prompt), ("tool_call", call_id)):
            # null is taken as not given, as a model often writes an optional argument.
            if given is not None and not isinstance(given, str):
                return self._text(f"{key} must be a text (an id), not {given!r:.60}",
                                  error=True)
        for given in (prompt, call_id):
            if isinstance(given, str) and len(given) > MAX_ID:
                # No such id exists (the service's ids are at most this long), and
                # one in the request's path would pass the server's line limit.
                return self._text(f"no prompt or tool call {given[:40]}…: an id is at "
                                  f"most {MAX_ID} characters", error=True)
        if isinstance(prompt, str) and prompt and call_id is None:
            out = await self.client.get(f"/v1/prompts/{_seg(prompt)}")
            if out.get("problem"):
                return self._text(out.get("message") or f"no prompt {prompt}", error=True)
            return self._text({k: out.get(k) for k in ("id", "agent", "state", "code",
                                                       "reason", "message")})
        if isinstance(call_id, str) and call_id and prompt is None:
            out = await self.client.get(f"/v1/tool-calls/{_seg(call_id)}")
            if out.get("problem"):
                return self._text(out.get("message") or f"no tool call {call_id}", error=True)
            return self._text(out)
        return self._text("give prompt or tool_call (one of them)", error=True)

    # ------------------------------------------------ the short way (pipes)
    async def _take(self, line: str, out: _Output, tg: Any) -> bool:
        """Answer ``line`` here when it is a plain ``tools/call`` (or cancels one taken
        here); False: the SDK's way (see the module docstring)."""
        if isinstance(line, self._overlong_lines):
            refusal = _overlong(line)
            if refusal is not None:
                await out.send(refusal)
                return True
            return False  # no request's id in sight: an ignored line (`_lines_transport`)
        # Every line is parsed (microseconds, against the SDK's ~1.9M instructions a
        # message): a text filter would miss a method name written with escapes
        # (notifications\/cancelled), which the SDK reads as the same name.
        message = _loads(line)
        if message is None:
            refusal = _unreadable(line)
            if refusal is not None:
                await out.send(refusal)
                return True
        elif type(message) is list:
            # A JSON-RPC batch, which the SDK cannot read and would only log.
            await self._refuse_batch(message, out)
            return True
        elif type(message) is dict and "id" in message \
                and type(message["id"]) is not int and type(message["id"]) is not str:
            # The SDK would read it as a notification (its id not one it takes) and
            # never answer it.
            refusal = _invalid_request(message, "")
            if refusal is not None:
                await out.send(refusal)
                return True
        if message is not None and \
                (self._count >= MAX_IN_FLIGHT or self._bytes + len(line) > MAX_IN_FLIGHT_BYTES) \
                and type(message) is dict and type(message.get("method")) is str \
                and type(message.get("id")) in (int, str):
            await out.send(_line({"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32000, "message": f"arrowgate mcp is busy: {self._count} requests are "
                                           f"in flight (at most {MAX_IN_FLIGHT}, of "
                                           f"{MAX_IN_FLIGHT_BYTES >> 20} MiB together); send "
                                           "this one again once one is answered"}}))
            return True
        method = message.get("method") if type(message) is dict else None
        if method == "notifications/initialized":
            self._ready = True
        elif method == "notifications/cancelled":
            params = message.get("params")
            rid = params.get("requestId") if type(params) is dict else None
            # int or str exactly, as the SDK's RequestId (strict int): True is
            # equal to 1 and would otherwise cancel request 1.
            if (type(rid) is int or type(rid) is str) and rid in self._inflight:
                scope = self._inflight.pop(rid)
                self._release(self._sizes.pop(rid))
                # As the SDK's `RequestResponder.cancel`: the error response now,
                # the handler cancelled (it cancels the tool call on the service).
                scope.cancel()
                await out.send(_line({"jsonrpc": "2.0", "id": rid, "error": {
                    "code": 0, "message": "Request cancelled"}}))
                return True
        call = _plain_call(message) if self._ready and method == "tools/call" else None
        if call is None:
            return False
        rid, name, arguments, token = call
        if rid in self._inflight or (name != STATUS_TOOL and name not in self._told
                                     and name not in self._names):
            # An id in use, or a name the SDK would first look up afresh: its way.
            return False
        import anyio

        scope = anyio.CancelScope()
        self._inflight[rid] = scope
        self._sizes[rid] = len(line)
        self._hold(len(line))
        tg.start_soon(self._answer, rid, name, arguments, token, scope, out)
        return True

    @staticmethod
    async def _refuse_batch(batch: list[Any], out: _Output) -> None:
        """Answer a JSON-RPC batch as JSON-RPC answers one: an array of the responses to
        its requests (none when it holds none), each an Invalid Request error. MCP
        2025-06-18 has no batches (2025-03-26 had), nor does the SDK read them."""
        answers = []
        for item in batch:
            refusal = _invalid_request(item, "arrowgate mcp takes no JSON-RPC batch: send "
                                             "each request on a line of its own")
            if refusal is not None:
                answers.append(refusal[:-1])
        if answers:
            await out.send(b"[" + b",".join(answers) + b"]\n")

    def _hold(self, size: int) -> None:
        """Count a request in flight whose line is ``size`` characters long."""
        self._count += 1
        self._bytes += size

    def _release(self, size: int) -> None:
        """A request counted by `_hold` was answered."""
        self._count -= 1
        self._bytes -= size

    def _passed_on(self, rid: int | str, size: int) -> None:
        """Request ``rid`` (a line of ``size`` characters) goes to the SDK to answer."""
        self._passed.setdefault(rid, []).append(size)
        self._hold(size)

    def _answered(self, rid: int | str) -> None:
        """The SDK answered request ``rid`` (an answer to no request it had: nothing)."""
        sizes = self._passed.get(rid)
        if sizes:
            self._release(sizes.pop(0))
            if not sizes:
                del self._passed[rid]

    async def _answer(self, rid: int | str, name: str, arguments: dict[str, Any],
                      token: int | str | None, scope: Any, out: _Output) -> None:
        """Answer a ``tools/call`` taken by `_take`, as the SDK's handler would."""
        notify = None
        if token is not None:
            async def notify(progress: float, message: str) -> None:
                await out.send(_line({"method": "notifications/progress", "params": {
                    "progressToken": token, "progress": progress, "message": message},
                    "jsonrpc": "2.0"}))

        with scope:
            try:
                text, error = await self._outcome(name, arguments, notify)
            except Exception as exc:  # as the SDK's handler: a tool result that is an error
                text, error = str(exc), True
        if self._inflight.get(rid) is scope:
            del self._inflight[rid]
            self._release(self._sizes.pop(rid))
        if scope.cancel_called:
            # Cancelled by the client: `_take` sent the error response (and a
            # result that came back from a shielded request meanwhile is dropped,
            # as the SDK drops a cancelled request's).
            return
        # Written before any await: a cancellation that comes now finds no call.
        await out.send(_line({"jsonrpc": "2.0", "id": rid, "result": {
            "content": [{"type": "text", "text": text}], "isError": error}}))

    async def run_stdio(self) -> None:
        """Serve MCP on standard input/output until the client closes it."""
        import anyio
        from mcp.server.lowlevel import NotificationOptions

        options = self.server.create_initialization_options(
            notification_options=NotificationOptions(tools_changed=True))
        async with _stdio() as (lines, stdout):
            # Every line read here first (plain tools/call requests answered here,
            # requests the SDK cannot read refused here), the rest the SDK's.
            async with anyio.create_task_group() as tg:
                out = _EndingOut(stdout, tg.cancel_scope)
                try:
                    async with _lines_transport(lines, out, self, tg) as (read, write):
                        await self.server.run(read, write, options)
                finally:
                    # Input ended: calls in flight are cancelled, as the SDK's are.
                    tg.cancel_scope.cancel()
        if out.failed is not None:
            raise OutputFailed(out.failed)


class _PipeLines:
    """Standard input as the SDK's stdio transport reads it: text lines, on the loop.

    The SDK reads standard input line by line in a worker thread, and writes
    standard output in one too: each message crosses threads twice (the
    worker woken, then the loop). An MCP client starts this server with a
    pipe at each end, which asyncio reads and writes on the loop itself
    (issue 17: a tool call's two messages are on the agent's critical path).
    """

    def __init__(self, reader: Any) -> None:
        import asyncio

        from engine.app.stdiofiles import OverlongParts

        self._reader = reader
        # Imported once, not for every line.
        self._parts = OverlongParts
        self._errors = asyncio.IncompleteReadError, asyncio.LimitOverrunError

    def __aiter__(self) -> _PipeLines:
        return self

    async def __anext__(self) -> str:
        incomplete, overrun = self._errors
        parts: OverlongParts | None = None
        while True:
            try:
                line: bytes = await self._reader.readuntil(b"\n")
            except incomplete as end:  # the last line, without its newline
                line = end.partial
            except overrun as over:
                # A line beyond `MAX_LINE`: read on to its end, a piece at a time, and
                # dropped whole (`_take` answers it when it names its id); its rest is
                # never read as a line of its own.
                if parts is None:
                    parts = self._parts()
                parts.add(await self._reader.read(max(over.consumed, 1)))
                continue
            if parts is not None:
                parts.add(line)
                return parts.line()
            if not line:
                raise StopAsyncIteration
            # As the SDK's own stdin: UTF-8, a bad byte replaced (the line then fails to
            # parse).
            return line.decode("utf-8", "replace")


class _PipeOut:
    """Standard output as the SDK's stdio transport writes it (`_PipeLines`)."""

    def __init__(self, writer: Any) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        """Send one message's line."""
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        """Wait while the client is not reading (the pipe is full)."""
        await self._writer.drain()

    async def send(self, data: bytes) -> None:
        """Send one message's line (bytes) and wait while the client is not reading."""
        self._writer.write(data)
        await self._writer.drain()


class _Output(Protocol):
    """Standard output as the bridge writes it: `_PipeOut`, or `stdiofiles.FileOut`."""

    async def write(self, text: str) -> None:
        """Send one message's line (the SDK's messages)."""

    async def flush(self) -> None:
        """Wait until what `write` sent is on its way."""

    async def send(self, data: bytes) -> None:
        """Send one message's line (bytes) and wait until it is on its way."""


class OutputFailed(Exception):
    """Standard output refused a write: the bridge can answer its client no more.

    ``error`` is the write's `OSError`: a closed pipe or connection (the client
    went away) or a fault of the file (a full disk).
    """

    def __init__(self, error: OSError) -> None:
        super().__init__(f"standard output: {error.strerror or error}")
        self.error = error

    @property
    def client_gone(self) -> bool:
        """Whether the client closed its end (an ending, as the end of input is)."""
        return isinstance(self.error, (BrokenPipeError, ConnectionResetError))


class _EndingOut:
    """Standard output (`_Output`) that ends the session at its first failed write.

    A bridge that cannot write has no client to serve: every later answer would
    fail too, and its input may stay open for ever (a client that closed only the
    end it reads). The first failure is kept and the session's scope cancelled, so
    `AgentMCP.run_stdio` ends and says why (`OutputFailed`).
    """

    def __init__(self, out: _Output, scope: Any) -> None:
        self._out, self._scope = out, scope
        #: The first write standard output refused, or None.
        self.failed: OSError | None = None

    async def write(self, text: str) -> None:
        """As `_Output.write`; a failure ends the session."""
        await self._guarded(self._out.write(text))

    async def flush(self) -> None:
        """As `_Output.flush`; a failure ends the session."""
        await self._guarded(self._out.flush())

    async def send(self, data: bytes) -> None:
        """As `_Output.send`; a failure ends the session."""
        await self._guarded(self._out.send(data))

    async def _guarded(self, step: Awaitable[None]) -> None:
        import anyio

        try:
            await step
        except OSError as exc:
            if self.failed is None:
                self.failed = exc
            self._scope.cancel()
            await anyio.lowlevel.checkpoint()  # cancelled here: nothing after it runs


#: Progress of a tool call that waits: (progress, message).
_Notify = Callable[[float, str], Awaitable[None]]


def _loads(line: str) -> Any:
    """A line as JSON, or None when it is not (the SDK then says so)."""
    from engine.service.jsonread import loads

    try:
        return loads(line, strict=True)
    except ValueError:
        return None


def _unreadable(line: str) -> bytes | None:
    """The error response to a request that `_loads` refuses but that names its id, or
    None (not JSON at all, or no request: told as an ignored line by `_lines_transport`).

    JSON with NaN, Infinity or a lone surrogate escape (which a client's encoder can
    write when the model's text holds one), or nested more than 1,024 levels deep,
    is JSON to Python's reader (or too deep even for it) but refused here and by the
    SDK; the SDK then logs an error and never answers the request, so the agent
    would wait for an answer until its own timeout.
    """
    try:
        message = json.loads(line)
    except ValueError:
        return None
    except RecursionError:
        message = _top_level(line)
    return _invalid_request(message, "it holds NaN, Infinity or a lone surrogate, or is "
                                     "nested more than 1,024 levels deep, which it does not "
                                     "take as JSON")


#: A request's id as the last member of its line's object (a TypeScript client writes it
#: last): ``,"id":ID}`` at the line's very end.
_LAST_ID = re.compile(r'[,{]\s*"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")\s*}\s*$')


def _overlong(line: Any) -> bytes | None:
    """The error response to a request on a line dropped unread (`stdiofiles.Overlong`: too
    long to read; `stdiofiles.Flooded`: of too many values), naming the bound; None when no
    request's id is in sight (at the top level of the line's start, with its method, or as
    the last member of its object)."""
    head = line.head.decode("utf-8", "replace")
    found = _top_level(head) or {}
    if type(found.get("method")) is not str:
        return None
    rid = found.get("id")
    if "id" not in found:
        last = _LAST_ID.search(line.tail.decode("utf-8", "replace"))
        if last is None:
            return None
        try:
            rid = json.loads(last.group(1))
        except ValueError:
            return None
    if type(rid) is not int and type(rid) is not str:
        return None
    return _line({"jsonrpc": "2.0", "id": rid, "error": {
        "code": -32600, "message": f"arrowgate refuses this request: its line {_dropped(line)}"}})


def _bounded(line: str) -> str:
    """``line``, or, when it holds more than `MAX_LINE_VALUES` JSON values, it dropped
    unread (`stdiofiles.Flooded`): told before anything of it is read into objects."""
    from engine.app.stdiofiles import Flooded, Overlong, OverlongParts
    from engine.core.jsoncount import holds_more_values

    if isinstance(line, Overlong) or not holds_more_values(line, MAX_LINE_VALUES):
        return line
    data = line.rstrip("\r\n").encode("utf-8", "surrogatepass")
    keep = OverlongParts.KEEP
    return Flooded(data[:keep], data[-keep:], len(data))


def _dropped(line: Overlong) -> str:
    """Why the line was dropped unread, after "its line" or "it"."""
    from engine.app.stdiofiles import Flooded

    if isinstance(line, Flooded):
        return (f"holds more than {MAX_LINE_VALUES:,} JSON values (its commas and brackets "
                "counted), the most a line may hold; it was not read")
    return f"is {line.size:,} bytes long, more than the {MAX_LINE:,} bytes a line may be"


def _invalid_request(message: Any, why: str) -> bytes | None:
    """The error response (Invalid Request) to ``message`` when it is a request naming
    its id, saying ``why``; else None.

    An id is an int or a text, as the SDK's; or a number written with a fraction or
    an exponent (``1.5``, ``2.0``), which JSON-RPC allows and the SDK does not read:
    answered with that id, saying so, as its client waits for an answer to it. An id
    of any other type (an object, an array, a boolean, null: no id MCP takes) is
    answered with ``"id": null``, as JSON-RPC 2.0 answers a request whose id cannot
    be read; a message without ``id`` is a notification, answered never.
    """
    if type(message) is not dict or type(message.get("method")) is not str \
            or "id" not in message:
        return None
    rid = message["id"]
    if type(rid) is float:  # finite: `_loads` refuses NaN and Infinity
        why = f"its id {rid!r} is not an integer or a text, as an MCP request's id is"
    elif type(rid) is not int and type(rid) is not str:
        why = (f"its id is {_ID_KINDS.get(type(rid), type(rid).__name__)}, not an integer "
               "or a text, as an MCP request's id is")
        rid = None
    return _line({"jsonrpc": "2.0", "id": rid, "error": {
        "code": -32600, "message": f"arrowgate refuses this request: {why}"}})


#: What a JSON value that is no id is, said in a refusal (`_invalid_request`).
_ID_KINDS: dict[type, str] = {dict: "an object", list: "an array", bool: "a boolean",
                              type(None): "null"}

#: The tokens of JSON text as `_top_level` reads them: a string (or one that never
#: ends, to the line's end), a run of opening or of closing brackets (with the space
#: between them), one ``:`` or ``,``, a run of anything else (a number, a literal, or
#: what is not JSON), space. Every character is in one token, so a line is read once: a
#: string that had to end was tried again from each of its quotes to the line's end
#: when it never did (``"\"\"\"…``, time quadratic in the line).
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[{\[][{\[\s]*|[}\]][}\]\s]*|[:,]|[^\s"{}\[\]:,]+|\s+')


def _top_level(line: str) -> dict[str, Any] | None:
    """The ``id`` and ``method`` of the object ``line`` begins with, when they are plain
    values at its top level (either may be missing); None when ``line`` does not begin
    with an object. Read without nesting, so at any depth, and only as far as both
    are found: for a request too deeply nested for any JSON reader here, which is
    refused whatever follows.
    """
    members: dict[str, Any] = {}
    depth, key, after_colon, began = 0, "", False, False
    for match in _JSON_TOKEN.finditer(line):
        token = match.group()
        first = token[0]
        if first in " \t\r\n":
            continue
        if not began:
            if first != "{":
                return None
            began = True
        elif depth == 0:
            break  # past the object's end
        if first in "{[":
            depth += token.count("{") + token.count("[")
            after_colon = False
        elif first in "}]":
            depth -= token.count("}") + token.count("]")
        elif depth == 1:
            if first == ":":
                after_colon = bool(key)
            elif first == ",":
                key, after_colon = "", False
            elif after_colon:
                after_colon = False
                if key in ("id", "method"):
                    try:
                        members[key] = json.loads(token)
                    except ValueError:
                        break
                    if len(members) == 2:
                        break
            elif first == '"':
                try:
                    key = json.loads(token)
                except ValueError:
                    break
    return members if began else None


async def _ignored(out: _Output, number: int, why: str) -> None:
    """Tell the client, by a log notification, and standard error, in one line, that line
    ``number`` of its input was no MCP message and was ignored, and ``why``."""
    said = f"ignored line {number} of the client's input: {why}"
    print(f"arrowgate mcp: {said}", file=sys.stderr, flush=True)
    await out.send(_line({"jsonrpc": "2.0", "method": "notifications/message", "params": {
        "level": "error", "logger": "arrowgate", "data": f"arrowgate mcp {said}"}}))


def _not_a_message(line: str, parsed: Any, exc: Exception) -> str:
    """Why ``line`` (``parsed``: it as JSON, or None) is no JSON-RPC message the server
    takes; ``exc``: the SDK's reason, said when no shorter one is found."""
    from engine.app.stdiofiles import Overlong

    if isinstance(line, Overlong):  # a `Flooded` line too
        return f"it {_dropped(line)}"
    if parsed is None and line.strip() != "null":
        return "it is not JSON (or JSON the protocol does not take: NaN, Infinity, a lone " \
               "surrogate, nesting past 1,024 levels)"
    if type(parsed) is not dict:
        kind = {str: "a text", int: "a number", float: "a number"}.get(
            type(parsed), _ID_KINDS.get(type(parsed), type(parsed).__name__))
        return f"it is {kind}, not a JSON-RPC message (an object)"
    if parsed.get("jsonrpc") != "2.0":
        return 'it has no "jsonrpc": "2.0", as every JSON-RPC 2.0 message has'
    if "method" not in parsed and "id" not in parsed:
        return 'it has neither a "method" nor an "id"'
    if "params" in parsed and type(parsed["params"]) is not dict:
        return 'its "params" is not an object, as MCP\'s params are'
    return f"the MCP SDK cannot read it: {_first_line(exc)}"


def _first_line(exc: Exception) -> str:
    """What went wrong, briefly: the first lines of ``exc``'s text (a pydantic error's
    first error), at most 300 characters."""
    return " ".join(str(exc).splitlines()[:3])[:300]


def _line(message: dict[str, Any]) -> bytes:
    """A JSON-RPC message as one line."""
    import orjson

    try:
        return orjson.dumps(message) + b"\n"
    except TypeError:  # a lone surrogate in a text (orjson refuses it): escaped, as json does
        return json.dumps(message, separators=(",", ":")).encode() + b"\n"


#: The keys of a plain ``tools/call`` request and of its params (`_plain_call`).
_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_PARAMS_KEYS = frozenset({"name", "arguments", "_meta"})


def _plain_call(message: Any) -> tuple[int | str, str, dict[str, Any], int | str | None] | None:
    """(id, name, arguments, progress token) of a ``tools/call`` request in the plainest
    form the SDK accepts as it is; None for anything else (the SDK's to judge)."""
    if type(message) is not dict or message.keys() != _REQUEST_KEYS or \
            message["jsonrpc"] != "2.0" or message["method"] != "tools/call":
        return None
    rid, params = message["id"], message["params"]
    if type(rid) not in (int, str) or type(params) is not dict or \
            not params.keys() <= _PARAMS_KEYS:
        return None
    name, arguments, meta = params.get("name"), params.get("arguments"), params.get("_meta")
    if type(name) is not str or (arguments is not None and type(arguments) is not dict):
        return None
    token = None
    if meta is not None:
        if type(meta) is not dict or not meta.keys() <= {"progressToken"}:
            return None
        token = meta.get("progressToken")
        if token is not None and type(token) not in (int, str):
            return None
    return rid, name, arguments or {}, token


@asynccontextmanager
async def _lines_transport(lines: AsyncIterator[str], out: _Output, agent: AgentMCP,
                           tg: Any) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport (`mcp.server.stdio.stdio_server`: the same parsing,
    the same messages), over `_stdio`'s lines and output, with `AgentMCP._take` first on
    each line: a line it answers never reaches the SDK. ``tg`` runs those answers. A
    request the SDK would refuse (`engine.app.mcprequests.RequestCheck`: a method MCP does
    not have, params it does not take, a request before ``initialize``) is answered
    here too, naming why."""
    import anyio
    from mcp import types
    from mcp.shared.message import SessionMessage

    from engine.app.mcprequests import RequestCheck
    from engine.app.stdiofiles import Overlong

    read_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    answers = (types.JSONRPCResponse, types.JSONRPCError)
    check = RequestCheck()
    write_stream, write_reader = anyio.create_memory_object_stream[Any](0)

    async def reader() -> None:
        number = 0
        try:
            async with read_writer:
                async for read in lines:
                    number += 1
                    # Held to its bound on values before anything of it is read.
                    line = _bounded(read)
                    if await agent._take(line, out, tg):
                        continue
                    try:
                        message = types.JSONRPCMessage.model_validate_json(line)
                    except Exception as exc:
                        # A request the SDK cannot read (nested past its parser's
                        # limit, or not one the protocol knows) it would only log:
                        # answered here, so the agent is not left waiting.
                        parsed = _loads(line)
                        refusal = _invalid_request(parsed, "the MCP SDK cannot read "
                                                           f"it: {_first_line(exc)}")
                        if refusal is not None:
                            await out.send(refusal)
                        elif line.strip() or isinstance(line, Overlong):
                            # No request: nobody waits for an answer. The SDK would
                            # tell the client "Internal Server Error" (nothing inside
                            # failed) and write pydantic's pages to standard error.
                            await _ignored(out, number, _not_a_message(line, parsed, exc))
                        continue
                    root = message.root
                    if isinstance(root, answers):
                        # This server asks the client nothing (no sampling, roots or
                        # pings): the SDK would say "Internal Server Error" to it.
                        await _ignored(out, number, f"it answers a request (id {root.id!r}), "
                                                    "and arrowgate mcp sends the client none")
                        continue
                    if isinstance(root, (types.JSONRPCRequest, types.JSONRPCNotification)):
                        # As the SDK's session reads it (`RequestCheck`).
                        dumped = root.model_dump(by_alias=True, mode="json", exclude_none=True)
                        if isinstance(root, types.JSONRPCNotification):
                            check.seen(root.method, dumped)
                        else:
                            refusal = check.refusal(root.id, root.method, dumped)
                            if refusal is not None:
                                # The SDK would refuse it naming nothing (and keep an
                                # early one for good): refused here, saying why.
                                await out.send(refusal)
                                continue
                            agent._passed_on(root.id, len(line))
                    await read_writer.send(SessionMessage(message))
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async def writer() -> None:
        try:
            async with write_reader:
                async for message in write_reader:
                    root = message.message.root
                    text = message.message.model_dump_json(by_alias=True, exclude_none=True)
                    await out.write(text + "\n")
                    if isinstance(root, answers):
                        agent._answered(root.id)
                    await out.flush()
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as own:
        own.start_soon(reader)
        own.start_soon(writer)
        yield read_stream, write_stream


@asynccontextmanager
async def _stdio() -> AsyncIterator[tuple[AsyncIterator[str], _Output]]:
    """Standard input's lines and standard output: on the loop when both are pipes or
    sockets; else read and written in threads (`engine.app.stdiofiles`), as a terminal
    or a file is left blocking (made non-blocking, it would be so for every other
    process sharing it too). Either way the same lines, the same writes."""
    import asyncio
    import os
    import stat

    try:
        fds = [f.fileno() for f in (sys.stdin, sys.stdout)]
        modes = [os.fstat(fd).st_mode for fd in fds]
    except (OSError, ValueError, AttributeError):  # closed, or replaced by a non-file
        modes = []
    if not modes or not all(stat.S_ISFIFO(m) or stat.S_ISSOCK(m) for m in modes):
        from engine.app.stdiofiles import FileLines, FileOut

        # The binary streams under sys.stdin and sys.stdout, never closed here
        # (`_cmd_mcp` refused to start without them).
        stdin, stdout = _binary(sys.stdin), _binary(sys.stdout)
        if stdin is None or stdout is None:
            raise ValueError("standard input or output is closed")
        yield FileLines(stdin, MAX_LINE), FileOut(stdout)
        return
    loop = asyncio.get_running_loop()
    # Copies of the descriptors: the transports close theirs, never stdin and stdout.
    # Lines of up to MAX_LINE bytes (the default limit is 64 KiB); a longer one is
    # dropped (`_PipeLines`).
    reader = asyncio.StreamReader(limit=MAX_LINE)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(fds[0]), "rb", 0))
    write_transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(os.dup(fds[1]), "wb", 0))
    writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
    try:
        yield _PipeLines(reader), _PipeOut(writer)
    finally:
        read_transport.close()
        write_transport.close()


def _binary(stream: Any) -> BinaryIO | None:
    """The file of bytes ``stream`` (standard input or output) reads or writes: its
    buffer, or itself when it is one; None when it is closed or is none."""
    import io

    binary = getattr(stream, "buffer", stream)
    if not isinstance(binary, (io.RawIOBase, io.BufferedIOBase)) or binary.closed:
        return None
    return cast(BinaryIO, binary)


def _stdio_missing() -> str | None:
    """``"standard input"`` or ``"standard output"`` when it is closed (or is no file of
    bytes) and so cannot be served; None when both can."""
    for name, stream in (("standard input", sys.stdin), ("standard output", sys.stdout)):
        if _binary(stream) is None:
            return name
    return None


def _end_said(expires_in: Any) -> float:
    """When (`time.monotonic`) to stop following a tool call whose answer said it may
    take ``expires_in`` seconds more: then and `FOLLOW_MARGIN`; infinity when it said
    nothing that reads as seconds (a service older than ``expires_in``)."""
    import math
    import time

    if type(expires_in) not in (int, float) or not 0 <= expires_in < math.inf:
        return math.inf
    return time.monotonic() + float(expires_in) + FOLLOW_MARGIN


def _split(name: str) -> tuple[str, str] | None:
    """``name`` read as ``<card>__<tool>`` when no list gave it: split where what follows
    the ``__`` is a tool's name (SPEC §2); None when that is so at more than one place
    (card ``x``'s ``a__b`` and card ``x__a``'s ``b``: a guess would send the call, and
    its arguments, to a card the agent may not have meant). Where it is so nowhere, at
    the last ``__``, for the engine to refuse (or no tool at all; a card or a tool that
    is empty names none, which `AgentMCP._outcome` says without asking the service)."""
    readings = [(name[:at], name[at + 2:]) for at in range(1, len(name) - 2)
                if name.startswith("__", at) and _TOOL_NAME.fullmatch(name, at + 2)]
    if len(readings) > 1:
        return None
    if readings:
        return readings[0]
    card, sep, tool = name.rpartition("__")
    return (card, tool) if sep else (name, "")


#: A tool's name (SPEC §2; `engine.core.manifest`).
_TOOL_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


def _read_private(path: Path) -> str:
    """The token in ``path``, a regular file of the user's that only the user may read
    or write (as the service keeps its own: SPEC §10.1), stripped.

    Judged on the file opened (a link is followed to it), so the file read is the file
    judged.

    Raises:
        OSError: it cannot be opened or read.
        ValueError: it is not a regular file, not the user's, or group or others may
            read or write it, naming the file and its mode.
    """
    import os
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    with open(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"the agent token {path} is not a regular file")
        if st.st_uid != os.getuid():
            raise ValueError(f"the agent token {path} belongs to user {st.st_uid}, not to "
                             f"this one ({os.getuid()}): it is not taken")
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            raise ValueError(f"the agent token {path} has mode {mode:04o}: "
                             "group or others may read or write it, so it is not taken "
                             f"(make it private: chmod 600 {path})")
        return fh.read(64 * 1024).decode("utf-8", "replace").strip()


def _cmd_mcp(args: argparse.Namespace) -> int:
    import anyio

    from engine.app.common import CliError, NoDatabase, db_path
    from engine.core.serviceaddress import AddressRefused, service_address
    from engine.service.listen import default_socket_path

    if args.service:
        try:  # before anything is read or started: the agent's token goes there
            service_address(args.service)
        except AddressRefused as exc:
            print(f"arrowgate mcp: {exc}", file=sys.stderr)
            return 2
    db = None
    if not args.service or not args.token_file:
        try:
            db = db_path(args, create=False)
        except CliError as exc:
            if args.db and isinstance(exc, NoDatabase):
                # Not made here: the database is the one a service serves, and making
                # another is no way to an agent's tools.
                raise CliError(f"{exc.said}: give --db the absolute path of the database "
                               "`arrowgate serve` serves (an agent starts its MCP servers "
                               "in a folder of its own choosing)") from None
            if args.db:
                raise
            # The database is only where the defaults are found: say what to give
            # instead (a PostgreSQL store has no file beside which a token lies).
            # (Its hints to make a database are no way to an agent's token.)
            said = exc.said if isinstance(exc, NoDatabase) else exc.message
            raise CliError(f"{said}, beside which the defaults lie: "
                           "give --db of the database `arrowgate serve` serves, or "
                           "--service and --token-file (the agent's token)") from None
    address = args.service or str(default_socket_path(db))  # type: ignore[arg-type]
    token_file = Path(args.token_file) if args.token_file else \
        default_agent_token_file(db, args.agent)  # type: ignore[arg-type]
    try:
        token = _read_private(token_file)
    except FileNotFoundError as exc:
        # A person wiring an agent of their own: say how its token is made, into this file.
        import shlex

        body = json.dumps({"principal": f"agent:{args.agent}"})
        mint = shlex.join(["arrowgate", "token", "mint", f"agent:{args.agent}", "--out",
                           str(token_file), *(["--db", str(db)] if db is not None else [])])
        print(f"arrowgate mcp: cannot read the agent token {token_file}: {exc.strerror} "
              f"(the operator mints one: `{mint}`"
              f"{'' if db is not None else ' with --db of the served database or --service'}"
              f", or through `arrowgate serve`: POST /v1/tokens {body}; see the README's "
              f"\"Wiring your own coding agent\")", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"arrowgate mcp: cannot read the agent token {token_file}: {exc.strerror}",
              file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"arrowgate mcp: {exc}", file=sys.stderr)
        return 2
    if not token:
        print(f"arrowgate mcp: the agent token file {token_file} is empty", file=sys.stderr)
        return 2
    try:
        client = ServiceClient(address, token, args.agent)
    except ValueError as exc:  # a token that is not one word, a service address without host
        print(f"arrowgate mcp: {exc}", file=sys.stderr)
        return 2
    missing = _stdio_missing()
    if missing is not None:  # the client opened no connection yet: nothing to close
        print(f"arrowgate mcp: {missing} is closed: there is no client to serve",
              file=sys.stderr)
        return 2

    async def main() -> None:
        try:
            await AgentMCP(client).run_stdio()
        finally:
            await client.aclose()

    try:
        anyio.run(main)
    except OutputFailed as exc:
        if exc.client_gone:
            return 0  # the client closed its end: an ending, as the end of its input
        print(f"arrowgate mcp: {exc}: the client can be answered no more", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # Ctrl-C from the person who ran it, or SIGINT from its client: an ending
        # asked for, not a fault to show as a traceback (the shell's 128 + SIGINT).
        return 130
    return 0


def register(sub: Any) -> None:
    """Add the ``mcp`` subcommand to the command line."""
    from engine.app.common import given

    p = sub.add_parser(
        "mcp", help="an MCP server on stdio giving an agent its cards' tools",
        description="An MCP server on standard input and output that a coding agent starts "
                    "(README \"Wiring your own coding agent\"): it acts as the agent node "
                    "--agent through a running `arrowgate serve`, listing the tools of the "
                    "cards an arrow connects it to.",
        epilog="Exit codes: 0 its input ended or its client closed its end; 1 its output "
               "failed (a full disk under a file); 2 usage or invalid input (the address, the "
               "token file, no database); 130 interrupted (Ctrl-C).")
    p.add_argument("--agent", required=True, help="the agent node this server acts as")
    p.add_argument("--service", metavar="ADDRESS", type=given,
                   help="the service's socket path, http://127.0.0.1:PORT (loopback only) or "
                        "https://HOST[:PORT] (default: the service's own socket beside --db)")
    p.add_argument("--token-file", metavar="FILE", type=given,
                   help="the agent's token (default: <db>.agents/AGENT.token, as the agent "
                        "drivers write it)")
    p.add_argument("--db", metavar="FILE", type=given,
                   help="the database `arrowgate serve` serves, beside which the defaults of "
                        "--service and --token-file lie (must exist; default: $ARROWGATE_DB "
                        "or ~/.local/share/arrowgate/arrowgate.db)")
    p.set_defaults(fn=_cmd_mcp)

