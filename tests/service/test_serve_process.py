"""``arrowgate serve`` as a process: the ready line, the options, shutdown losing nothing."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import threading

import httpx
import pytest

from tests.shortdirs import short_dir
from tests.stopsignals import DEFAULTS, stopped

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


def _start(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([*DEFAULTS, *ARROWGATE, "serve", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    address = proc.stdout.readline().strip()
    ready = proc.stdout.readline().strip()
    if ready != "ready":
        proc.kill()
        _out, err = proc.communicate()
        raise AssertionError(f"no ready line: {address!r} {ready!r} {err}")
    return proc, address


def _finish(proc: subprocess.Popen[str], sig: int = signal.SIGTERM) -> int:
    """Send ``sig``, wait for the exit, close the pipes; the exit code."""
    proc.send_signal(sig)
    stopped(proc, 120)
    return proc.returncode


def _client(address: str, token: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if address.startswith("http"):
        return httpx.Client(base_url=address, headers=headers, timeout=60)
    return httpx.Client(transport=httpx.HTTPTransport(uds=address), base_url="http://ag",
                        headers=headers, timeout=60)


def test_serve_prints_the_address_then_ready_and_stops_on_sigint(tmp_path) -> None:
    """Default: serve.sock in a 0700 folder beside the database; SIGINT stops it cleanly."""
    db = tmp_path / "a.db"
    proc, address = _start("--db", str(db))
    try:
        assert address == str(tmp_path / "a.db.serve" / "serve.sock")
        assert stat.S_IMODE(os.stat(address).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(tmp_path / "a.db.serve").st_mode) == 0o700
        token_file = tmp_path / "a.db.operator-token"
        assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
        with _client(address) as anon:
            assert anon.get("/v1/health").json()["status"] == "ok"
        token = token_file.read_text().strip()
        with _client(address, token) as op:
            assert op.get("/v1/holds").json() == []
    finally:
        assert _finish(proc, signal.SIGINT) == 0
    assert not os.path.exists(address)
    # a restart keeps the operator token (the file is still valid and private)
    proc, address = _start("--db", str(db))
    try:
        with _client(address, token) as op:
            assert op.get("/v1/holds").status_code == 200
    finally:
        assert _finish(proc) == 0


def test_listen_and_store_options(tmp_path) -> None:
    """--listen serves loopback TCP; --store needs a token file and an address (it has no
    file to put them beside); both sockets: refused."""
    proc, address = _start("--db", str(tmp_path / "a.db"), "--listen", "127.0.0.1:0")
    try:
        assert address.startswith("http://127.0.0.1:")
        with _client(address) as anon:
            assert anon.get("/v1/health").status_code == 200
    finally:
        assert _finish(proc) == 0
    done = subprocess.run([*ARROWGATE, "serve", "--store", "postgresql://x/y"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--token-file" in done.stderr
    done = subprocess.run([*ARROWGATE, "serve", "--db", str(tmp_path / "a.db"), "--listen",
                           "127.0.0.1:0", "--socket", str(tmp_path / "s")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    done = subprocess.run([*ARROWGATE, "serve", "--db", str(tmp_path / "a.db"), "--listen",
                           "nonsense"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "HOST:PORT" in done.stderr


# httpx (httpcore) leaves the socket of a refused Unix-socket connect to the
# garbage collector; the clients here meet exactly that when the server stops.
@pytest.mark.filterwarnings("ignore::ResourceWarning",
                            "ignore::pytest.PytestUnraisableExceptionWarning")
def test_sigterm_mid_burst_loses_no_answered_call(tmp_path) -> None:
    """Every call answered before SIGTERM has its durable row after the server exits."""
    db = tmp_path / "a.db"
    sock = short_dir("ag") / "s" / "serve.sock"
    proc, address = _start("--db", str(db), "--socket", str(sock))
    token = (tmp_path / "a.db.operator-token").read_text().strip()
    cards = [f"c{i}" for i in range(8)]
    with _client(address, token) as op:
        # Refusals are logged row by row: let none be folded into a suppressed row.
        assert op.post("/v1/workspaces", json={"id": "w1", "folder": str(tmp_path),
                                               "settings": {"denial_log_limit": 1_000_000}}
                       ).status_code == 201
        manifest = {"name": "acme.p", "version": "1.0.0", "permissions": {"agents.prompt": {}}}
        op.post("/v1/packages", json={"manifest": manifest})
        op.post("/v1/packages/acme.p/install", json={})
        op.post("/v1/workspaces/w1/nodes", json={"id": "a1", "type": "agent"})
        for card in cards:
            assert op.post("/v1/workspaces/w1/nodes", json={
                "id": card, "type": "card", "package": "acme.p"}).status_code == 201
        card_token = op.post("/v1/tokens", json={"principal": "card:c0"}).json()["token"]
    # An event stream open at shutdown ends with it (it does not hold the server up).
    stream_ended = threading.Event()

    def listen() -> None:
        with _client(address, card_token) as client:
            try:
                with client.stream("GET", "/v1/events") as r:
                    for _line in r.iter_lines():
                        pass
            except httpx.HTTPError:
                pass
        stream_ended.set()

    listener = threading.Thread(target=listen)
    listener.start()
    answered: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def burst(card: str) -> None:
        # Each call is refused (no arrow) and logged with its unique text.
        with _client(address, token) as client:
            n = 0
            while not stop.is_set():
                text = f"{card}-{n}"
                n += 1
                try:
                    r = client.post("/v1/calls", json={
                        "card": card, "call": "agents.prompt", "target": "a1",
                        "args": {"text": text}})
                except httpx.HTTPError:
                    return  # the server went away: this call was never answered
                if r.status_code == 200 and r.json()["code"] == "PERMISSION_DENIED":
                    with lock:
                        answered.append(text)

    threads = [threading.Thread(target=burst, args=(c,)) for c in cards]
    for t in threads:
        t.start()
    while True:  # until a good number of calls were answered, then SIGTERM mid-burst
        with lock:
            if len(answered) >= 200:
                break
        threading.Event().wait(0.01)
    code = _finish(proc)
    stop.set()
    for t in threads:
        t.join(60)
    assert code == 0
    listener.join(60)
    assert stream_ended.is_set()
    con = sqlite3.connect(db)
    logged = {json.loads(p)["text"] if p.startswith("{") else p
              for (p,) in con.execute("select payload from log where call = 'agents.prompt'")}
    con.close()
    missing = [text for text in answered if not any(text in row for row in logged)]
    assert not missing, missing[:5]
    done = subprocess.run([*ARROWGATE, "log", "verify", "--db", str(db)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout
