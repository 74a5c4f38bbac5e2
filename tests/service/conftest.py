"""A real `arrowgate serve` in a thread of the test process, reached over real HTTP.

The server runs `engine.service.serve.serve` on its own event loop, on a
Unix socket (in a short temporary folder: socket paths are limited to about
100 bytes) or on loopback TCP; tests talk to it with httpx like any client.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine import Engine, World
from tests.service.servers_on_one_store import two  # noqa: F401 -- fixture: two servers, one db


@dataclass
class Running:
    """A server started by a test."""

    address: str  #: the socket path, or http://127.0.0.1:PORT
    db: Path
    token: str  #: the operator token
    stop: Callable[[], None]
    thread: threading.Thread
    clients: list[httpx.Client] = field(default_factory=list)

    @property
    def unix(self) -> bool:
        """Served on a Unix socket."""
        return not self.address.startswith("http")

    def client(self, token: str | None = "operator", **kwargs: Any) -> httpx.Client:
        """An httpx client; ``token`` ``"operator"``: the operator token, None: none."""
        headers = {}
        if token is not None:
            headers["Authorization"] = f"Bearer {self.token if token == 'operator' else token}"
        if self.unix:
            client = httpx.Client(transport=httpx.HTTPTransport(uds=self.address),
                                  base_url="http://arrowgate", headers=headers, timeout=30,
                                  **kwargs)
        else:
            client = httpx.Client(base_url=self.address, headers=headers, timeout=30, **kwargs)
        self.clients.append(client)
        return client

    def shutdown(self) -> None:
        """Stop the server and wait until it has closed the engine."""
        for client in self.clients:
            client.close()
        self.stop()
        self.thread.join(timeout=60)
        assert not self.thread.is_alive(), "the server did not stop"


def start_server(db: Path, *, tcp: bool = False, heartbeat: float = 15.0,
                 max_body: int | None = None,
                 clock: Callable[[], float] | None = None,
                 log_location: str | None = None) -> Running:
    """Start a server on ``db`` in a thread (on ``clock``, when given; its log verified
    by a process of its own at ``log_location``, when given); returns once it serves."""
    from engine.service.auth import TokenStore
    from engine.service.idleloop import IdleLoop
    from engine.service.listen import (
        address_of,
        bind_tcp,
        bind_unix,
        default_token_file,
        operator_token,
    )
    from engine.service.serve import serve

    box: dict[str, Any] = {}
    ready = threading.Event()
    sock_dir = Path(tempfile.mkdtemp(prefix="ag", dir="/tmp"))

    def on_ready(stop: Callable[[], None]) -> None:
        box["stop"] = stop
        ready.set()

    def run() -> None:
        async def main() -> None:
            engine = Engine.open(db, world=World(net=None, fs=None),
                                 **({"clock": clock} if clock is not None else {}))
            tokens = TokenStore(db)
            box["token"] = operator_token(tokens, default_token_file(db))
            sock = bind_tcp("127.0.0.1:0") if tcp else bind_unix(sock_dir / "d" / "serve.sock")
            box["address"] = address_of(sock)
            await serve(engine, sock, tokens, heartbeat=heartbeat, max_body=max_body,
                        announce=False, signals=False, on_ready=on_ready,
                        log_location=log_location)

        try:
            # The loop ``arrowgate serve`` runs on (`engine.service.idleloop`).
            with asyncio.Runner(loop_factory=IdleLoop) as runner:
                runner.run(main())
        except BaseException as exc:  # reported to the test below
            box["error"] = exc
            ready.set()
        finally:
            shutil.rmtree(sock_dir, ignore_errors=True)

    thread = threading.Thread(target=run, name="arrowgate-serve", daemon=True)
    thread.start()
    assert ready.wait(60), "the server did not start"
    if "error" in box:
        raise box["error"]
    return Running(box["address"], db, box["token"], box["stop"], thread)


@pytest.fixture
def serve_at(tmp_path: Path) -> Iterator[Callable[..., Running]]:
    """Start servers (stopped at the end of the test)."""
    started: list[Running] = []

    def start(**kwargs: Any) -> Running:
        running = start_server(kwargs.pop("db", tmp_path / "arrowgate.db"), **kwargs)
        started.append(running)
        return running

    yield start
    for running in started:
        if running.thread.is_alive():
            running.shutdown()


@pytest.fixture(params=["unix", "tcp"])
def server(request: pytest.FixtureRequest, serve_at: Callable[..., Running]) -> Running:
    """A server on a Unix socket, and again on loopback TCP."""
    return serve_at(tcp=request.param == "tcp")


@pytest.fixture
def unix_server(serve_at: Callable[..., Running]) -> Running:
    """A server on a Unix socket."""
    return serve_at()


MANIFEST = {"name": "acme.standup", "version": "1.0.0",
            "permissions": {"agents.prompt": {}, "clipboard.write": {"optional": True}},
            "ports": {"inputs": ["in"], "outputs": ["out"]}}


def build_canvas(client: httpx.Client, folder: Path) -> None:
    """Workspace w1: cards c1 and c2 of acme.standup, agents a1 and the dangerous y1,
    terminal t1, note n1; arrows c1—a1 (e1) and c1—y1 (e2)."""
    folder.mkdir(exist_ok=True)
    ok = [client.post("/v1/workspaces", json={"id": "w1", "folder": str(folder)}),
          client.post("/v1/packages", json={"manifest": MANIFEST}),
          client.post("/v1/packages/acme.standup/install", json={"grant": "required"})]
    for node in ({"id": "c1", "type": "card", "package": "acme.standup"},
                 {"id": "c2", "type": "card", "package": "acme.standup"},
                 {"id": "a1", "type": "agent", "name": "Builder"},
                 {"id": "y1", "type": "agent", "name": "Yolo", "dangerous": True},
                 {"id": "t1", "type": "terminal", "name": "shell"},
                 {"id": "n1", "type": "note", "text": "hello"}):
        ok.append(client.post("/v1/workspaces/w1/nodes", json=node))
    ok.append(client.post("/v1/workspaces/w1/arrows", json={"id": "e1", "from": "c1", "to": "a1"}))
    ok.append(client.post("/v1/workspaces/w1/arrows", json={"id": "e2", "from": "c1", "to": "y1"}))
    for r in ok:
        assert r.status_code in (200, 201), r.text


def mint(client: httpx.Client, principal: str) -> str:
    """A token for ``principal``, minted by the operator."""
    r = client.post("/v1/tokens", json={"principal": principal})
    assert r.status_code == 201, r.text
    return str(r.json()["token"])


def snapshot(db: Path) -> dict[str, list[Any]]:
    """Every row of every table, read through a connection of our own."""
    con = sqlite3.connect(db)
    try:
        tables = [r[0] for r in con.execute(
            "select name from sqlite_master where type = 'table' order by name")]
        return {t: con.execute(f"select * from [{t}]").fetchall() for t in tables}
    finally:
        con.close()


def log_rows(db: Path) -> int:
    """How many rows the log holds, read through a connection of our own."""
    con = sqlite3.connect(db)
    try:
        return int(con.execute("select count(*) from log").fetchone()[0])
    finally:
        con.close()


@dataclass
class TwoApps:
    """One engine served two ways: the service's app with the fast lane in front
    (``lane``) and FastAPI's routes alone (``fastapi``), the documented contract the
    lane's answers are held to."""

    engine: Engine
    tokens: Any  #: the `engine.service.auth.TokenStore`
    operator: str  #: the operator token
    lane: Any
    fastapi: Any

    def close(self) -> None:
        """Close the token store and the engine."""
        self.tokens.close()
        self.engine.close()


async def two_apps(folder: Path, manifests: list[dict[str, Any]],
                   nodes: list[dict[str, Any]], arrows: tuple[dict[str, Any], ...] = (),
                   *, max_body: int = 1 << 16,
                   clock: Callable[[], float] | None = None) -> TwoApps:
    """`TwoApps` on a database in ``folder``: workspace w1 there, each manifest offered
    and installed, ``nodes`` added to w1 and ``arrows`` drawn (the engine on ``clock``
    when given)."""
    from engine import file_digests
    from engine.service.app import Service, asgi_app, create_app
    from engine.service.auth import TokenStore
    from engine.service.listen import operator_token
    from engine.service.problems import BodyLimit

    engine = Engine.open(folder / "a.db", world=World(net=None, fs=None),
                         **({} if clock is None else {"clock": clock}))
    tokens = TokenStore(folder / "a.db")
    await engine.create_workspace("w1", str(folder))
    for manifest in manifests:
        await engine.offer(manifest["name"], manifest,
                           file_digests({"manifest.json": json.dumps(manifest)}))
        await engine.install(manifest["name"])
    for node in nodes:
        await engine.add_node(node, workspace="w1")
    for arrow in arrows:
        await engine.add_arrow(arrow)
    service = Service(engine, tokens, max_body=max_body)
    return TwoApps(engine, tokens, operator_token(tokens, folder / "tok"), asgi_app(service),
                   BodyLimit(create_app(service), limit=max_body))


def read_until_closed(sock: socket.socket, bound: float) -> tuple[bytes, bool]:
    """Everything the server sends on ``sock`` until it ends the connection (EOF or a
    reset) or ``bound`` seconds pass; and whether it ended it."""
    sock.settimeout(0.2)
    received, started = b"", time.monotonic()
    while time.monotonic() - started < bound:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return received, True
        if not chunk:
            return received, True
        received += chunk
    return received, False
