"""Helpers of the tool-schema tests: a real `arrowgate serve` as a process (so that a
validation that holds the GIL cannot stall the test itself), a canvas with one card
c1 of a given manifest connected to agent a1, and clients."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


class Served:
    def __init__(self, proc: subprocess.Popen[str], address: str, token: str) -> None:
        self.proc, self.address, self.token = proc, address, token

    def client(self, token: str | None = "operator", timeout: float = 30) -> httpx.Client:
        headers = {}
        if token is not None:
            headers["Authorization"] = f"Bearer {self.token if token == 'operator' else token}"
        return httpx.Client(transport=httpx.HTTPTransport(uds=self.address),
                            base_url="http://arrowgate", headers=headers, timeout=timeout)

    def mint(self, principal: str) -> str:
        with self.client() as op:
            r = op.post("/v1/tokens", json={"principal": principal})
            assert r.status_code in (200, 201), r.text
            return str(r.json()["token"])

    def health_within(self, seconds: float) -> bool:
        """True when GET /v1/health answers within ``seconds``."""
        try:
            with self.client(None, timeout=seconds) as anon:
                return anon.get("/v1/health").status_code == 200
        except httpx.TimeoutException:
            return False


@contextmanager
def serve(tmp: Path) -> Iterator[Served]:
    db = tmp / "a.db"
    proc = subprocess.Popen([*ARROWGATE, "serve", "--db", str(db)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        address = proc.stdout.readline().strip()
        assert proc.stdout.readline().strip() == "ready"
        token = (tmp / "a.db.operator-token").read_text().strip()
        yield Served(proc, address, token)
    finally:
        proc.kill()
        proc.communicate(timeout=30)


def canvas(served: Served, folder: Path, manifest: dict[str, Any],
           extra: tuple[tuple[str, dict[str, Any]], ...] = ()) -> None:
    """Workspace w1, the package installed, card c1, agent a1, arrow e1 a1→c1."""
    os.makedirs(folder, exist_ok=True)
    with served.client() as op:
        for path, body in (("/v1/workspaces", {"id": "w1", "folder": str(folder)}),
                           ("/v1/packages", {"manifest": manifest}),
                           (f"/v1/packages/{manifest['name']}/install", {"grant": "required"}),
                           ("/v1/workspaces/w1/nodes", {"id": "c1", "type": "card",
                                                        "package": manifest["name"]}),
                           ("/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"}),
                           ("/v1/workspaces/w1/arrows", {"id": "e1", "from": "a1", "to": "c1"}),
                           *extra):
            r = op.post(path, json=body)
            assert r.status_code in (200, 201), (path, r.text)
