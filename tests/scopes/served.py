"""A real `arrowgate serve` process (loopback TCP) with a card granted files and network.

Used by the net.fetch tests that need the whole service: everything goes through
``POST /v1/calls`` with the card's token, as a canvas app would.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

MANIFEST = {"name": "acme.fx", "version": "1.0.0",
            "permissions": {"fs.write": {}, "network.local": {},
                            "network": {"hosts": ["api.example.com"]}}}


@dataclass
class Served:
    proc: subprocess.Popen[bytes]
    address: str
    op: httpx.Client
    card: httpx.Client
    ws: Path
    clients: list[httpx.Client] = field(default_factory=list)

    def call(self, call: str, args: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
        r = self.card.post("/v1/calls", json={"card": "c1", "call": call, "args": args},
                           timeout=timeout)
        assert r.status_code == 200, r.text
        return r.json()

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        c = httpx.Client(base_url=self.address, headers=headers, timeout=30)
        self.clients.append(c)
        return c

    def stop(self) -> None:
        for c in [self.op, self.card, *self.clients]:
            c.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def start(tmp: Path, settings: dict[str, Any] | None = None) -> Served:
    data = tmp / "data"
    data.mkdir()
    ws = tmp / "ws"
    ws.mkdir()
    db = data / "a.db"
    token_file = data / "op-token"
    env = {**os.environ, "HOME": str(tmp / "home")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine.app.cli", "serve", "--db", str(db), "--listen",
         "127.0.0.1:0", "--token-file", str(token_file)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        cwd=str(Path(__file__).resolve().parents[2]))
    assert proc.stdout is not None
    address = proc.stdout.readline().decode().strip()
    assert proc.stdout.readline().decode().strip() == "ready", address
    op_token = token_file.read_text().strip()
    op = httpx.Client(base_url=address, headers={"Authorization": f"Bearer {op_token}"},
                      timeout=30)
    body: dict[str, Any] = {"id": "w1", "folder": str(ws)}
    if settings:
        body["settings"] = settings
    for method, path, payload in (
            ("post", "/v1/workspaces", body),
            ("post", "/v1/packages", {"manifest": MANIFEST,
                                      "files": {"manifest.json": json.dumps(MANIFEST)}}),
            ("post", "/v1/packages/acme.fx/install", {"grant": "all"}),
            ("post", "/v1/workspaces/w1/nodes",
             {"id": "c1", "type": "card", "package": "acme.fx"})):
        r = getattr(op, method)(path, json=payload)
        assert r.status_code in (200, 201), (path, r.text)
    r = op.post("/v1/tokens", json={"principal": "card:c1"})
    assert r.status_code == 201, r.text
    card = httpx.Client(base_url=address,
                        headers={"Authorization": f"Bearer {r.json()['token']}"}, timeout=30)
    return Served(proc, address, op, card, ws)


def health_ms(served: Served) -> float:
    t0 = time.monotonic()
    r = httpx.get(served.address + "/v1/health", timeout=30)
    assert r.status_code == 200
    return (time.monotonic() - t0) * 1000


def serve_canned(ls: socket.socket, answer: bytes) -> None:
    """Answer every request that comes to the listening socket ``ls`` with ``answer`` (a
    whole HTTP response), in a thread, until ``ls`` is closed."""
    ls.listen(8)

    def loop() -> None:
        while True:
            try:
                conn, _ = ls.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                buf = b""
                while b"\r\n\r\n" not in buf:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    buf += chunk
                conn.sendall(answer)

    threading.Thread(target=loop, daemon=True).start()
