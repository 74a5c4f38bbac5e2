"""``arrowgate mcp --agent ID`` (SPEC §10.2): card tools for a real coding agent, over MCP.

An MCP server on standard input/output, built on the official SDK's low-level
`mcp.server.lowlevel.Server` (its tool list is per agent and changes with the
canvas). It talks to `arrowgate serve` as agent ``ID`` with that agent's token,
and so goes through SPEC §9 in full:

- ``tools/list`` is exactly the tools of the cards an arrow connects to the
  agent now, named ``<card>__<tool>`` with their description and input schema,
  plus ``arrowgate__prompt_status``.
- ``notifications/tools/list_changed`` is sent once for each change of that
  set after the client has listed it (the service is polled; a poll is one
  cheap request).
- Every ``tools/call`` is decided by the engine, never by the client's list: a
  tool the client still lists after its arrow went is refused by the engine
  (and logged), and the refusal is a tool result with ``isError: true`` and the
  Decision's message. Arguments are checked by the engine against the tool's
  schema (so bad ones are logged too), not by the SDK.
- A long call reports progress while it waits (when the client sent a progress
  token); ``notifications/cancelled`` cancels the tool call on the service
  (logged ``cancelled``).
- When the card's work for the call makes a prompt that is held for a person,
  the call returns at once with the held prompt's id and state (a tool call
  never blocks for a person); ``arrowgate__prompt_status`` reports it, or the
  tool call's own answer, later.
"""

from __future__ import annotations

import argparse
import json
import select
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

__all__ = ["STATUS_TOOL", "AgentMCP", "ServiceClient", "ServiceError", "default_agent_token_file",
           "register"]

#: The tool that reports a held prompt's (or a tool call's) state later.
STATUS_TOOL = "arrowgate__prompt_status"
#: Seconds between polls of the agent's tool list (for list_changed).
POLL = 0.5
#: Seconds one wait on the service lasts before a progress notification.
PROGRESS_EVERY = 2.0
#: Seconds an idle connection to the service is reused (the service keeps them 60).
IDLE_REUSE = 30.0
#: Seconds one request to the service may take (a wait is at most PROGRESS_EVERY).
REQUEST_TIMEOUT = 60.0
#: The largest response head and body read from the service.
MAX_HEAD = 64 * 1024
MAX_BODY = 64 * 1024 * 1024


def default_agent_token_file(db: Path, agent: str) -> Path:
    """Where a driver writes agent ``agent``'s token: ``<db>.agents/<agent>.token``."""
    return db.with_name(db.name + ".agents") / f"{agent}.token"


class ServiceError(Exception):
    """The service could not be reached, or answered something that is not HTTP/1.1 as sent."""


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
        return json.loads(self.body)


class _Connection:
    """One kept-alive connection to the service and the bytes read past the last response."""

    __slots__ = ("stream", "buffer", "idle_since")

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.buffer = b""
        self.idle_since = 0.0

    def reusable(self, now: float) -> bool:
        """Idle briefly and not closed by the service meanwhile (nothing to read on it)."""
        from anyio.abc import SocketAttribute

        if now - self.idle_since > IDLE_REUSE:
            return False
        raw = self.stream.extra(SocketAttribute.raw_socket, None)
        if raw is None:
            return False
        try:
            # An idle connection has nothing to say: anything to read on it (a
            # byte, or the EOF of a service that closed it or restarted) means
            # it must not carry a request — a request written to it might be
            # lost after the service took it, and a POST must never be sent
            # twice. (A poll of the descriptor: for TCP, asyncio hands out a
            # socket wrapper that cannot read.)
            poll = select.poll()
            poll.register(raw.fileno(), select.POLLIN)
            return not poll.poll(0)
        except (OSError, ValueError):
            return False

    async def read_some(self) -> bytes:
        """The next bytes from the service (ServiceError at EOF)."""
        import anyio

        try:
            data: bytes = await self.stream.receive(65536)
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError) as exc:
            raise ServiceError("the service closed the connection") from exc
        return data

    async def aclose(self) -> None:
        """Close it (even while the caller is being cancelled)."""
        import anyio

        with anyio.CancelScope(shield=True):
            try:
                await self.stream.aclose()
            except (OSError, anyio.BrokenResourceError):
                pass


class ServiceClient:
    """The service as agent ``agent`` sees it, over a Unix socket or loopback TCP.

    A small HTTP/1.1 client of its own, keeping connections alive: each tool
    call makes two requests on the agent's critical path, and httpx spent
    about 1 ms of CPU on each (measured on this machine, against 0.1 ms for
    this one; see BENCHMARKS.md, issue 17). It speaks only what the service
    answers: JSON bodies with ``Content-Length`` or chunked, and it never
    sends a request on a connection the service may have closed.
    """

    def __init__(self, address: str, token: str, agent: str) -> None:
        from urllib.parse import urlsplit

        if not token or not token.isascii() or not token.isprintable() or " " in token:
            raise ValueError("the agent token must be one word of printable ASCII")
        self.agent = agent
        self._unix: str | None = None
        self._tls = False
        if address.startswith(("http://", "https://")):
            url = urlsplit(address)
            if url.hostname is None:
                raise ValueError(f"no host in the service address {address!r}")
            self._tls = url.scheme == "https"
            self._host: str = url.hostname
            self._port: int = url.port or (443 if self._tls else 80)
            host = url.netloc.rpartition("@")[2]  # as written: an IPv6 host keeps its brackets
            self._prefix = url.path.rstrip("/")
        else:
            self._unix, host, self._port, self._prefix = address, "arrowgate", 0, ""
            self._host = host
        self._head = (f"Host: {host}\r\nAuthorization: Bearer {token}\r\n"
                      f"Accept: application/json\r\n").encode("ascii")
        self._idle: list[_Connection] = []
        self._closed = False

    # ------------------------------------------------------------ requests
    async def _connect(self) -> _Connection:
        import anyio

        try:
            if self._unix is not None:
                stream: Any = await anyio.connect_unix(self._unix)
            elif self._tls:
                stream = await anyio.connect_tcp(self._host, self._port, tls=True)
            else:
                stream = await anyio.connect_tcp(self._host, self._port)
        except OSError as exc:
            raise ServiceError(f"cannot reach the service: {exc}") from exc
        return _Connection(stream)

    async def request(self, method: str, path: str, body: Any = None) -> _Reply:
        """One request (``body`` sent as JSON when not None); the service's reply.

        Raises:
            ServiceError: the service is unreachable, closed the connection or
                did not answer within `REQUEST_TIMEOUT` seconds.
        """
        import anyio

        if self._closed:
            raise ServiceError("the client is closed")
        data = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
        head = f"{method} {self._prefix}{path} HTTP/1.1\r\n".encode("ascii") + self._head
        if body is not None:
            head += b"Content-Type: application/json\r\n"
        if body is not None or method != "GET":
            head += b"Content-Length: %d\r\n" % len(data)
        conn = None
        now = anyio.current_time()
        while self._idle:
            candidate = self._idle.pop()
            if candidate.reusable(now):
                conn = candidate
                break
            await candidate.aclose()
        if conn is None:
            conn = await self._connect()
        ok = False
        try:
            with anyio.fail_after(REQUEST_TIMEOUT):
                try:
                    await conn.stream.send(head + b"\r\n" + data)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                    raise ServiceError(f"the service closed the connection: {exc}") from exc
                reply, keep = await _read_reply(conn)
            ok = True
        except TimeoutError:
            raise ServiceError(f"the service did not answer {method} {path} within "
                               f"{REQUEST_TIMEOUT:g} s") from None
        finally:
            if ok and keep and not self._closed:
                conn.idle_since = anyio.current_time()
                self._idle.append(conn)
            else:
                # Cancelled or failed half-way: what is left on it is unknown.
                await conn.aclose()
        return reply

    async def tools(self) -> list[dict[str, Any]]:
        """The tools the agent may call now."""
        r = await self.request("GET", f"/v1/agents/{_seg(self.agent)}/tools")
        if r.status_code != 200:
            raise ServiceError(f"listing the tools failed: {r.status_code} {r.text[:300]}")
        return list(r.json())

    async def call(self, card: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Open a tool call: ``{"id", "state", "decision"}``."""
        return _json_or_problem(await self.request(
            "POST", "/v1/tool-calls", {"agent": self.agent, "card": card, "tool": tool,
                                       "args": args}))

    async def wait(self, call_id: str, timeout: float) -> dict[str, Any]:
        """The tool call after waiting up to ``timeout`` seconds."""
        return _json_or_problem(await self.request(
            "GET", f"/v1/tool-calls/{_seg(call_id)}/wait?timeout={timeout:g}"))

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
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.aclose()


def _seg(value: str) -> str:
    """``value`` as one path segment (a ``/`` or ``?`` in an id stays in the id)."""
    from urllib.parse import quote

    return quote(value, safe="")


async def _read_reply(conn: _Connection) -> tuple[_Reply, bool]:
    """Read one response from ``conn``; returns it and whether the connection stays open."""
    buf = conn.buffer
    while (end := buf.find(b"\r\n\r\n")) < 0:
        if len(buf) > MAX_HEAD:
            raise ServiceError("the service's response head is too long")
        buf += await conn.read_some()
    lines = buf[:end].decode("latin-1").split("\r\n")
    buf = buf[end + 4:]
    version, _, rest = lines[0].partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/1.") or not code.isdigit():
        raise ServiceError(f"not an HTTP/1.1 response: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise ServiceError(f"a malformed response header: {line[:80]!r}")
        headers[name.strip().lower()] = value.strip()
    keep = headers.get("connection", "").lower() != "close" and version == "HTTP/1.1"
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = bytearray()
        while True:
            while (eol := buf.find(b"\r\n")) < 0:
                buf += await conn.read_some()
            try:
                size = int(buf[:eol].split(b";")[0], 16)
            except ValueError:
                raise ServiceError("a malformed chunk in the service's response") from None
            if len(body) + size > MAX_BODY:
                raise ServiceError("the service's response is too large")
            while len(buf) < eol + 2 + size + 2:
                buf += await conn.read_some()
            if size == 0:
                # No trailers are sent by the service: the last chunk ends the body.
                buf = buf[eol + 4:]
                break
            body += buf[eol + 2:eol + 2 + size]
            buf = buf[eol + 2 + size + 2:]
        data = bytes(body)
    elif "content-length" in headers:
        try:
            length = int(headers["content-length"])
        except ValueError:
            raise ServiceError("a malformed Content-Length from the service") from None
        if not 0 <= length <= MAX_BODY:
            raise ServiceError("the service's response is too large")
        while len(buf) < length:
            buf += await conn.read_some()
        data, buf = buf[:length], buf[length:]
    else:
        # Neither: the body runs until the service closes the connection.
        chunks = [buf]
        while True:
            try:
                chunks.append(await conn.read_some())
            except ServiceError:
                break
            if sum(len(c) for c in chunks) > MAX_BODY:
                raise ServiceError("the service's response is too large")
        data, buf, keep = b"".join(chunks), b"", False
    conn.buffer = buf
    return _Reply(int(code), data), keep


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
        self.server: Any = Server("arrowgate", lifespan=self._lifespan)
        self._session: Any = None
        self._listed: frozenset[tuple[str, str, str]] | None = None
        #: ``<card>__<tool>`` → (card, tool), from the latest list the service gave.
        self._names: dict[str, tuple[str, str]] = {}
        #: How many list_changed notifications were sent (for tests and logs).
        self.notified = 0

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
        """Poll the agent's tool set; one list_changed per change the client has not seen."""
        import anyio

        while True:
            await anyio.sleep(POLL)
            if self._session is None or self._listed is None:
                continue  # nothing listed yet: the client's first list is current
            try:
                tools = await self.client.tools()
            except Exception:  # the service is restarting: try again at the next poll
                continue
            self._remember(tools)
            now = self._key(tools)
            if now != self._listed:
                self._listed = now
                self.notified += 1
                await self._session.send_tool_list_changed()

    def _remember(self, tools: list[dict[str, Any]]) -> None:
        self._names = {t["name"]: (t["card"], t["tool"]) for t in tools}

    async def _list_tools(self, req: Any) -> list[Any]:
        types = self.types
        tools = await self.client.tools()
        self._remember(tools)
        if req is not None:
            # A real tools/list from the client (the SDK also calls this on a
            # cache miss, which the client never sees): what it now knows.
            self._session = self.server.request_context.session
            self._listed = self._key(tools)
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

    def _text(self, data: Any, *, error: bool = False) -> Any:
        types = self.types
        text = data if isinstance(data, str) else json.dumps(data, sort_keys=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    isError=error)

    async def _call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        if name == STATUS_TOOL:
            return await self._status(arguments)
        # The name only says which card and tool are meant (from the latest list,
        # else split at the last "__"); whether the call may happen is the
        # engine's decision, made now: a tool the agent may no longer call
        # still goes to the engine, which refuses it, says why and logs it.
        card, tool = self._names.get(name) or _split(name)
        opened = await self.client.call(card, tool, arguments)
        if opened.get("problem"):
            return self._text(opened.get("message") or opened.get("detail") or "refused",
                              error=True)
        if opened["state"] != "open":
            return self._text(opened["decision"]["message"], error=True)
        return await self._follow(str(opened["id"]))

    async def _follow(self, call_id: str) -> Any:
        import anyio

        ctx = self.server.request_context
        progress = ctx.meta.progressToken if ctx.meta is not None else None
        waited = 0
        try:
            while True:
                tc = await self.client.wait(call_id, PROGRESS_EVERY)
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
                waited += 1
                if progress is not None:
                    await ctx.session.send_progress_notification(
                        progress, float(waited), message=f"waiting for {tc['card']} to answer "
                                                         f"tool call {call_id}")
        except anyio.get_cancelled_exc_class():
            # notifications/cancelled (or the client went away): the tool call
            # is cancelled on the service and logged, whatever happens here.
            with anyio.CancelScope(shield=True):
                await self.client.cancel(call_id)
            raise

    async def _status(self, arguments: dict[str, Any]) -> Any:
        prompt, call_id = arguments.get("prompt"), arguments.get("tool_call")
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

    async def run_stdio(self) -> None:
        """Serve MCP on standard input/output until the client closes it."""
        from mcp.server.lowlevel import NotificationOptions
        from mcp.server.stdio import stdio_server

        options = self.server.create_initialization_options(
            notification_options=NotificationOptions(tools_changed=True))
        async with stdio_server() as (read, write):
            await self.server.run(read, write, options)


def _split(name: str) -> tuple[str, str]:
    card, sep, tool = name.rpartition("__")
    return (card, tool) if sep else (name, "")


def _cmd_mcp(args: argparse.Namespace) -> int:
    import anyio

    from engine.app.common import db_path
    from engine.service.serve import default_socket_path

    db = None
    if not args.service or not args.token_file:
        db = db_path(args, create=False)
    address = args.service or str(default_socket_path(db))  # type: ignore[arg-type]
    token_file = Path(args.token_file) if args.token_file else \
        default_agent_token_file(db, args.agent)  # type: ignore[arg-type]
    try:
        token = token_file.read_text().strip()
    except OSError as exc:
        print(f"arrowgate mcp: cannot read the agent token {token_file}: {exc.strerror}",
              file=sys.stderr)
        return 2
    if not token:
        print(f"arrowgate mcp: the agent token file {token_file} is empty", file=sys.stderr)
        return 2
    try:
        client = ServiceClient(address, token, args.agent)
    except ValueError as exc:  # a token that is not one word, a service address without host
        print(f"arrowgate mcp: {exc}", file=sys.stderr)
        return 2

    async def main() -> None:
        try:
            await AgentMCP(client).run_stdio()
        finally:
            await client.aclose()

    anyio.run(main)
    return 0


def register(sub: Any) -> None:
    """Add the ``mcp`` subcommand to the command line."""
    p = sub.add_parser("mcp", help="an MCP server on stdio giving an agent its cards' tools")
    p.add_argument("--agent", required=True, help="the agent node this server acts as")
    p.add_argument("--service", help="the service's socket path or http://127.0.0.1:PORT "
                                     "(default: the service's own socket beside --db)")
    p.add_argument("--token-file", help="the agent's token (default: <db>.agents/ID.token, "
                                        "as the agent drivers write it)")
    p.add_argument("--db", help="database file, for the defaults")
    p.set_defaults(fn=_cmd_mcp)

