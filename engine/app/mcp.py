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
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

__all__ = ["STATUS_TOOL", "AgentMCP", "default_agent_token_file", "register"]

#: The tool that reports a held prompt's (or a tool call's) state later.
STATUS_TOOL = "arrowgate__prompt_status"
#: Seconds between polls of the agent's tool list (for list_changed).
POLL = 0.5
#: Seconds one wait on the service lasts before a progress notification.
PROGRESS_EVERY = 2.0


def default_agent_token_file(db: Path, agent: str) -> Path:
    """Where a driver writes agent ``agent``'s token: ``<db>.agents/<agent>.token``."""
    return db.with_name(db.name + ".agents") / f"{agent}.token"


class ServiceClient:
    """The service as agent ``agent`` sees it (httpx over a Unix socket or loopback TCP)."""

    def __init__(self, address: str, token: str, agent: str) -> None:
        import httpx

        headers = {"Authorization": f"Bearer {token}"}
        if address.startswith(("http://", "https://")):
            self.http = httpx.AsyncClient(base_url=address, headers=headers, timeout=60)
        else:
            self.http = httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=address),
                                          base_url="http://arrowgate", headers=headers,
                                          timeout=60)
        self.agent = agent

    async def tools(self) -> list[dict[str, Any]]:
        """The tools the agent may call now."""
        r = await self.http.get(f"/v1/agents/{self.agent}/tools")
        r.raise_for_status()
        return list(r.json())

    async def call(self, card: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Open a tool call: ``{"id", "state", "decision"}``."""
        r = await self.http.post("/v1/tool-calls", json={"agent": self.agent, "card": card,
                                                         "tool": tool, "args": args})
        return _json_or_problem(r)

    async def wait(self, call_id: str, timeout: float) -> dict[str, Any]:
        """The tool call after waiting up to ``timeout`` seconds."""
        r = await self.http.get(f"/v1/tool-calls/{call_id}/wait", params={"timeout": timeout})
        return _json_or_problem(r)

    async def get(self, path: str) -> dict[str, Any]:
        """A GET as the agent."""
        return _json_or_problem(await self.http.get(path))

    async def cancel(self, call_id: str) -> dict[str, Any]:
        """Give up on a tool call (the engine logs it ``cancelled``)."""
        return _json_or_problem(await self.http.post(f"/v1/tool-calls/{call_id}/cancel"))

    async def aclose(self) -> None:
        """Close the connection."""
        await self.http.aclose()


def _json_or_problem(r: Any) -> dict[str, Any]:
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
            out = await self.client.get(f"/v1/prompts/{prompt}")
            if out.get("problem"):
                return self._text(out.get("message") or f"no prompt {prompt}", error=True)
            return self._text({k: out.get(k) for k in ("id", "agent", "state", "code",
                                                       "reason", "message")})
        if isinstance(call_id, str) and call_id and prompt is None:
            out = await self.client.get(f"/v1/tool-calls/{call_id}")
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
    client = ServiceClient(address, token, args.agent)

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

