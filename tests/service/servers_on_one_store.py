"""Real ``arrowgate serve`` processes on one database, for the tests of several servers
on one store (not a test)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.shortdirs import short_dir

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]
PKG = {"name": "acme.t", "version": "1.0.0",
       "permissions": {"agents.prompt": {}, "clipboard.write": {}}, "tools": ["ping"]}


@dataclass
class Server:
    proc: subprocess.Popen[str]
    sock: str
    token: str
    clients: list[httpx.Client] = field(default_factory=list)

    def client(self, token: str | None = None, timeout: float = 30) -> httpx.Client:
        c = httpx.Client(transport=httpx.HTTPTransport(uds=self.sock), base_url="http://ag",
                         headers={"Authorization": f"Bearer {token or self.token}"},
                         timeout=timeout)
        self.clients.append(c)
        return c

    def stop(self) -> None:
        for c in self.clients:
            c.close()
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.communicate(timeout=30)


def start(db: Path, token_file: Path | None = None) -> Server:
    sock = short_dir("agsrv") / "s" / "serve.sock"
    args = [*ARROWGATE, "serve", "--db", str(db), "--socket", str(sock)]
    if token_file is not None:
        args += ["--token-file", str(token_file)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.stdout.readline()
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
    token = (token_file or Path(str(db) + ".operator-token")).read_text().strip()
    return Server(proc, str(sock), token)


def ok(r: httpx.Response) -> Any:
    assert r.status_code in (200, 201, 204), (r.status_code, r.text)
    return r.json() if r.content else None


def mint(op: httpx.Client, principal: str) -> str:
    return str(ok(op.post("/v1/tokens", json={"principal": principal}))["token"])


def setup(op: httpx.Client, folder: Path, settings: dict[str, Any] | None = None) -> None:
    """w1: agent a0, dangerous agent y1, card c1 (acme.t); arrows a0→c1 (e1), c1→y1 (e2)."""
    os.makedirs(folder, exist_ok=True)
    ws: dict[str, Any] = {"id": "w1", "folder": str(folder)}
    if settings:
        ws["settings"] = settings
    ok(op.post("/v1/workspaces", json=ws))
    ok(op.post("/v1/packages", json={"manifest": PKG}))
    ok(op.post("/v1/packages/acme.t/install", json={"grant": "required"}))
    for node in ({"id": "a0", "type": "agent"}, {"id": "y1", "type": "agent", "dangerous": True},
                 {"id": "c1", "type": "card", "package": "acme.t"}):
        ok(op.post("/v1/workspaces/w1/nodes", json=node))
    ok(op.post("/v1/workspaces/w1/arrows", json={"id": "e1", "from": "a0", "to": "c1"}))
    ok(op.post("/v1/workspaces/w1/arrows", json={"id": "e2", "from": "c1", "to": "y1"}))


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[Server, Server]]:
    """Servers A and B on one database (B with its own operator token file)."""
    db = tmp_path / "a.db"
    a = start(db)
    try:
        b = start(db, tmp_path / "b.operator-token")
    except BaseException:
        a.stop()
        raise
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()
