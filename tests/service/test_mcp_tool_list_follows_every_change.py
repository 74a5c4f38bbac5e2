"""``arrowgate mcp`` tells its client ``notifications/tools/list_changed`` for every change
of its agent's tool set, made through another engine on the store, and for nothing else,
on both stores (SPEC §10.2; §10 "Storage": every rule holds across engines on one
database).

A real ``arrowgate serve`` process (``--db`` a SQLite file, or ``--store`` a PostgreSQL
database) and ``arrowgate mcp`` started by the MCP SDK's stdio client; every change is
made by a second engine, in this test's process, on the same store. (Round 26 left
the following of the tool list tested on SQLite only, through the service itself.)

About 5 s a store: two processes to start, and seven changes each told through both,
with a short look for a second notice after each; one test rather than seven, which
would start them seven times.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from engine import Engine, World, file_digests
from tests.shortdirs import short_dir

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ARROWGATE = Path(sys.executable).with_name("arrowgate")
STATUS = "arrowgate__prompt_status"
SEARCH = {"name": "acme.search", "version": "1.0.0", "permissions": {"agents.prompt": {}},
          "tools": [{"name": "search", "description": "Search the notes",
                     "input": {"type": "object", "properties": {"query": {"type": "string"}}}},
                    "relay"]}
PING = {"name": "acme.ping", "version": "1.0.0", "permissions": {},
        "tools": ["ping"], "ports": {"inputs": ["in"], "outputs": []}}
LATE = {"name": "acme.late", "version": "1.0.0", "permissions": {}, "tools": ["late"]}


@dataclass
class Store:
    """An ``arrowgate serve`` process on a store, and how to open another engine there."""

    proc: subprocess.Popen[str]
    sock: str
    operator: str
    open: Callable[[], Engine]

    def http(self, token: str) -> httpx.Client:
        return httpx.Client(transport=httpx.HTTPTransport(uds=self.sock),
                            base_url="http://arrowgate", timeout=30,
                            headers={"Authorization": f"Bearer {token}"})


def _serve(args: list[str], token_file: Path) -> tuple[subprocess.Popen[str], str, str]:
    sock = short_dir("agl") / "s" / "serve.sock"
    proc = subprocess.Popen([str(ARROWGATE), "serve", *args, "--socket", str(sock),
                             "--token-file", str(token_file)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=os.environ)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == "ready":
            return proc, str(sock), token_file.read_text().strip()
    raise AssertionError("arrowgate serve did not start")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """``arrowgate serve`` on a SQLite file, then on a PostgreSQL database."""
    world = World(net=None, fs=None)
    if request.param == "sqlite":
        db = tmp_path / "a.db"
        args = ["--db", str(db)]

        def other() -> Engine:
            return Engine.open(db, world=world)
    else:
        dsn = request.getfixturevalue("pg_dsn")
        args = ["--store", dsn]

        def other() -> Engine:
            return Engine.open(store=dsn, world=world)
    proc, sock, operator = _serve(args, tmp_path / "operator.token")
    try:
        yield Store(proc, sock, operator, other)
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


@asynccontextmanager
async def bridge(store: Store, agent: str, token_file: Path,
                 seen: list[str]) -> AsyncIterator[ClientSession]:
    """``arrowgate mcp --agent AGENT`` with an initialised SDK client; ``seen`` collects the
    methods of the notifications it sends."""
    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            seen.append(message.root.method)

    params = StdioServerParameters(
        command=str(ARROWGATE), args=["mcp", "--agent", agent, "--service", store.sock,
                                      "--token-file", str(token_file)], env=dict(os.environ))
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, message_handler=on_message) as session:
        await session.initialize()
        yield session


def _build(store: Store, tmp_path: Path) -> Path:
    """w1: card c1 (acme.search) wired a1 → c1 (e1); cards c2, c3 (acme.ping), agents a1, a2,
    note n1; acme.late offered, not installed. Returns a1's token file."""
    (tmp_path / "ws").mkdir()
    with store.http(store.operator) as op:
        for path, body in (
                ("/v1/workspaces", {"id": "w1", "folder": str(tmp_path / "ws")}),
                ("/v1/packages", {"manifest": SEARCH}),
                ("/v1/packages/acme.search/install", {"grant": "required"}),
                ("/v1/packages", {"manifest": PING}),
                ("/v1/packages/acme.ping/install", {"grant": "required"}),
                ("/v1/packages", {"manifest": LATE}),
                ("/v1/workspaces/w1/nodes", {"id": "c1", "type": "card",
                                             "package": "acme.search"}),
                ("/v1/workspaces/w1/nodes", {"id": "c2", "type": "card", "package": "acme.ping"}),
                ("/v1/workspaces/w1/nodes", {"id": "c3", "type": "card", "package": "acme.ping"}),
                ("/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"}),
                ("/v1/workspaces/w1/nodes", {"id": "a2", "type": "agent"}),
                ("/v1/workspaces/w1/nodes", {"id": "n1", "type": "note"}),
                ("/v1/workspaces/w1/arrows", {"id": "e1", "from": "a1", "to": "c1"})):
            r = op.post(path, json=body)
            assert r.status_code in (200, 201), (path, r.text)
        r = op.post("/v1/tokens", json={"principal": "agent:a1"})
        assert r.status_code == 201, r.text
    token_file = tmp_path / "a1.token"
    token_file.write_text(r.json()["token"])
    token_file.chmod(0o600)
    return token_file


async def _names(session: ClientSession) -> list[str]:
    return [t.name for t in (await session.list_tools()).tools]


async def test_every_change_of_the_tool_set_elsewhere_is_told_once_and_nothing_else(
        store: Store, tmp_path: Path) -> None:
    """Arrow drawn (either way), package installed, updated (pending, then approved with
    another tool list), arrow removed, card removed, the agent removed — each made by
    another engine on the store — is one list_changed; an unrelated arrow, a port arrow, an arrow to a note, a
    card of a package not installed, a revoke and a grant are none."""
    # GIVEN a1's bridge, its client having listed a1's tools
    token_file = _build(store, tmp_path)
    other = store.open()
    seen: list[str] = []
    told = "notifications/tools/list_changed"
    try:
        async with bridge(store, "a1", token_file, seen) as session:
            assert await _names(session) == ["c1__relay", "c1__search", STATUS]

            async def expect_told(change: Callable[[], Awaitable[Any]],
                                  names: list[str]) -> None:
                before = seen.count(told)
                await change()
                for _ in range(300):
                    if seen.count(told) > before:
                        break
                    await asyncio.sleep(0.05)
                await asyncio.sleep(0.2)  # a second notice for the same change would be here
                assert seen.count(told) == before + 1, (change, seen)
                assert await _names(session) == names

            # WHEN another engine makes changes that leave a1's tool set as it is
            quiet = seen.count(told)
            await other.add_arrow({"id": "u1", "from": "c3", "to": "a2"})
            await other.add_arrow({"id": "u2", "from": "a1", "to": "n1"})
            await other.add_arrow({"id": "u3", "from": "a1", "to": "c3",
                                   "from_port": "reply", "to_port": "in"})
            await other.add_node({"id": "c4", "type": "card", "package": "acme.late"},
                                 workspace="w1")
            await other.add_arrow({"id": "u4", "from": "a1", "to": "c4"})
            await other.revoke("acme.search", "agents.prompt")
            await other.grant("acme.search", "agents.prompt")
            await asyncio.sleep(0.6)  # the service looks every 0.1 s
            # THEN the bridge tells nothing, and lists what it listed
            assert seen.count(told) == quiet, seen
            assert await _names(session) == ["c1__relay", "c1__search", STATUS]

            # WHEN the tool set changes, through the other engine, THEN one notice each
            await expect_told(lambda: other.add_arrow({"id": "e2", "from": "c2", "to": "a1"}),
                              ["c1__relay", "c1__search", "c2__ping", STATUS])
            await expect_told(lambda: other.install("acme.late"),
                              ["c1__relay", "c1__search", "c2__ping", "c4__late", STATUS])
            v2 = {**SEARCH, "version": "1.1.0",
                  "tools": [SEARCH["tools"][0],  # type: ignore[index]
                            {"name": "summarize", "description": "Sum it up"}]}
            pending: list[Any] = []

            async def update() -> None:
                pending.append(await other.update(
                    "acme.search", manifest=v2,
                    digests=file_digests({"manifest.json": json.dumps(v2)})))

            await expect_told(update, ["c2__ping", "c4__late", STATUS])
            await expect_told(
                lambda: other.approve("acme.search", review_hash=pending[0].pending_hash),
                ["c1__search", "c1__summarize", "c2__ping", "c4__late", STATUS])
            listed = {t.name: t for t in (await session.list_tools()).tools}
            assert listed["c1__summarize"].description == "Sum it up"
            assert listed["c1__search"].inputSchema["properties"] == {
                "query": {"type": "string"}}

            # WHEN the arrow goes elsewhere THEN a call the client makes at once, on the
            # list it still has, is refused by the engine, before any notice is needed
            before = seen.count(told)
            await other.remove_arrow("e1")
            refused = await session.call_tool("c1__search", {"query": "x"})
            assert refused.isError
            block = refused.content[0]
            assert isinstance(block, types.TextContent) and "not-connected" in block.text
            for _ in range(300):
                if seen.count(told) > before:
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.2)
            assert seen.count(told) == before + 1, seen
            assert await _names(session) == ["c2__ping", "c4__late", STATUS]

            await expect_told(lambda: other.remove_node("c2"), ["c4__late", STATUS])
            # WHEN the agent itself is removed (its token with it) THEN it has no card's
            # tools: told once, and listed without them
            await expect_told(lambda: other.remove_node("a1"), [STATUS])
    finally:
        await other.aclose()
