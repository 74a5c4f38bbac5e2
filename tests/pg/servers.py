"""Helpers for the PostgreSQL outage tests: several ``arrowgate serve --store postgresql://…``
on one database, each on its own Unix socket."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.shortdirs import short_dir

ROOT = Path(__file__).resolve().parents[2]
ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


@dataclass
class Server:
    proc: subprocess.Popen[str]
    address: str
    token: str
    clients: list[httpx.Client] = field(default_factory=list)
    stderr: str = ""

    def client(self, token: str | None = None, timeout: float = 30) -> httpx.Client:
        tok = token or self.token
        c = httpx.Client(transport=httpx.HTTPTransport(uds=self.address), base_url="http://ag",
                         headers={"Authorization": f"Bearer {tok}"}, timeout=timeout)
        self.clients.append(c)
        return c

    def stop(self, sig: int = signal.SIGTERM) -> None:
        for c in self.clients:
            c.close()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            _out, self.stderr = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _out, self.stderr = self.proc.communicate(timeout=30)


def start(dsn: str, home: Path, name: str) -> Server:
    folder = short_dir("ag-serve")
    sock = folder / "s" / "serve.sock"
    token_file = home / f"{name}.token"
    env = {**os.environ, "HOME": str(home), "ARROWGATE_DB": str(home / f"{name}.db")}
    proc = subprocess.Popen([*ARROWGATE, "serve", "--store", dsn, "--socket", str(sock),
                             "--token-file", str(token_file)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    address = proc.stdout.readline().strip()
    ready = proc.stdout.readline().strip()
    if ready != "ready":
        proc.kill()
        _out, err = proc.communicate()
        raise AssertionError(f"no ready line: {address!r} {ready!r} {err}")
    return Server(proc, address, token_file.read_text().strip())


MANIFEST = {"name": "acme.p", "version": "1.0.0", "permissions": {"agents.prompt": {}}}


def prompt_canvas(op: httpx.Client, folder: Path, cards: int = 1) -> None:
    """Workspace w1, package acme.p (agents.prompt), agent a1, cards c0.. wired to a1."""
    r = op.post("/v1/workspaces", json={"id": "w1", "folder": str(folder),
                                        "settings": {"denial_log_limit": 1_000_000}})
    assert r.status_code == 201, r.text
    assert op.post("/v1/packages", json={"manifest": MANIFEST}).status_code in (200, 201)
    assert op.post("/v1/packages/acme.p/install", json={}).status_code == 200
    assert op.post("/v1/workspaces/w1/nodes", json={"id": "a1", "type": "agent"}
                   ).status_code == 201
    for i in range(cards):
        assert op.post("/v1/workspaces/w1/nodes", json={
            "id": f"c{i}", "type": "card", "package": "acme.p"}).status_code == 201
        assert op.post("/v1/workspaces/w1/arrows", json={
            "id": f"e{i}", "from": f"c{i}", "to": "a1"}).status_code == 201


def pg_restart(server: "object") -> None:
    """Start again a `tests.pgserver.PgServer` stopped with ``stop(remove=False)``."""
    from tests.pgserver import WAIT_S, _server_user, find_binaries

    binaries = find_binaries()
    assert binaries is not None
    folder = server.folder  # type: ignore[attr-defined]
    options = " ".join(["-c listen_addresses=''", f"-c unix_socket_directories='{folder}'",
                        "-c fsync=off", "-c max_connections=200"])
    server._run([str(binaries.pg_ctl), "start", "-D", str(server.data),  # type: ignore[attr-defined]
                 "-l", str(server.logfile), "-w", "-t", str(WAIT_S), "-o", options],  # type: ignore[attr-defined]
                _server_user(), "pg_ctl start")
