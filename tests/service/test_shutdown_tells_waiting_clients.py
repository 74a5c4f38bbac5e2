"""SIGTERM while clients wait: each is told, each answered call is durable, exit 0.

`engine.service.serve`: on SIGTERM the server stops accepting, ends event streams,
cuts waits short (each answered with what holds then, as its timeout would answer it,
not left to run out its minute) and lets the requests in flight finish, every answered
call durable. Here an event stream, a prompt's wait, a tool call's wait and bursts of
``calls:batch`` are all open when the signal comes.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.shortdirs import short_dir
from tests.stopsignals import stopped

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]
PKG = {"name": "acme.t", "version": "1.0.0", "permissions": {"agents.prompt": {}},
       "tools": ["ping"]}
#: Longer than the whole test may take: a wait still open at exit was never cut short.
WAIT = 120


def _client(address: str, token: str) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(uds=address), base_url="http://ag",
                        headers={"Authorization": f"Bearer {token}"}, timeout=WAIT + 30)


def _ok(r: httpx.Response) -> Any:
    assert r.status_code in (200, 201), r.text
    return r.json()


# A client whose connection the stopping server closes is collected with its socket.
@pytest.mark.filterwarnings("ignore::ResourceWarning",
                            "ignore::pytest.PytestUnraisableExceptionWarning")
def test_sigterm_tells_every_waiting_client() -> None:
    db = short_dir("ag") / "a.db"
    proc = subprocess.Popen([*ARROWGATE, "serve", "--db", str(db)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    address = proc.stdout.readline().strip()
    assert proc.stdout.readline().strip() == "ready"
    token = Path(f"{db}.operator-token").read_text().strip()
    with _client(address, token) as op:
        _ok(op.post("/v1/workspaces", json={"id": "w1", "folder": str(db.parent),
                                             "settings": {"denial_log_limit": 1_000_000}}))
        _ok(op.post("/v1/packages", json={"manifest": PKG}))
        _ok(op.post("/v1/packages/acme.t/install", json={"grant": "required"}))
        for node in ({"id": "a0", "type": "agent"}, {"id": "y0", "type": "agent",
                                                      "dangerous": True},
                     {"id": "c0", "type": "card", "package": "acme.t"},
                     {"id": "c1", "type": "card", "package": "acme.t"}):
            _ok(op.post("/v1/workspaces/w1/nodes", json=node))
        _ok(op.post("/v1/workspaces/w1/arrows", json={"id": "e1", "from": "a0", "to": "c0"}))
        _ok(op.post("/v1/workspaces/w1/arrows", json={"id": "e2", "from": "c0", "to": "y0"}))
        held = _ok(op.post("/v1/calls", json={"card": "c0", "call": "agents.prompt",
                                               "target": "y0", "args": {"text": "hi"}}))
        assert held["outcome"] == "held", held
        agent = _ok(op.post("/v1/tokens", json={"principal": "agent:a0"}))["token"]
        card = _ok(op.post("/v1/tokens", json={"principal": "card:c0"}))["token"]
    with _client(address, agent) as a:
        call = _ok(a.post("/v1/tool-calls", json={"agent": "a0", "card": "c0", "tool": "ping"}))
    told: dict[str, Any] = {}

    def ask(name: str, who: str, path: str) -> None:
        try:
            with _client(address, who) as client:
                if name == "stream":
                    with client.stream("GET", path) as r:
                        for _line in r.iter_lines():
                            pass
                    told[name] = "ended"
                else:
                    r = client.get(path)
                    told[name] = (r.status_code, r.json())
        except httpx.HTTPError as exc:
            told[name] = exc

    waiters = [threading.Thread(target=ask, args=args) for args in (
        ("stream", card, "/v1/events"),
        ("prompt", token, f"/v1/prompts/{held['prompt']}/wait?timeout={WAIT}"),
        ("tool", agent, f"/v1/tool-calls/{call['id']}/wait?timeout={WAIT}"))]
    for t in waiters:
        t.start()

    answered: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def batches(k: int) -> None:
        # Refused calls (c1 has no arrow), each logged with its own text.
        with _client(address, token) as client:
            n = 0
            while not stop.is_set():
                texts = [f"b{k}-{n}-{i}" for i in range(20)]
                n += 1
                try:
                    r = client.post("/v1/calls:batch", json={"calls": [
                        {"card": "c1", "call": "agents.prompt", "target": "a0",
                         "args": {"text": text}} for text in texts]})
                except httpx.HTTPError:
                    return  # the server went away: this batch was never answered
                if r.status_code == 200:
                    with lock:
                        answered.extend(texts)

    bursts = [threading.Thread(target=batches, args=(k,)) for k in range(3)]
    for t in bursts:
        t.start()
    while True:
        with lock:
            if len(answered) >= 200:
                break
        time.sleep(0.01)
    time.sleep(0.2)  # the waits are surely waiting
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _out, err = stopped(proc, 60)
    stop.set()
    for t in [*waiters, *bursts]:
        t.join(30)
    assert proc.returncode == 0, err
    assert time.monotonic() - started < 30, "the waits held the server up"
    assert not os.path.lexists(address)
    assert not os.path.lexists(Path(address).parent)
    assert told["stream"] == "ended"
    # Each wait answered with what holds at the shutdown, as its timeout would answer.
    assert told["prompt"][0] == 200 and told["prompt"][1]["outcome"] == "held", told["prompt"]
    assert told["tool"][0] == 200 and told["tool"][1]["state"] == "open", told["tool"]
    con = sqlite3.connect(db)
    logged = {json.loads(p)["text"] if p.startswith("{") else p
              for (p,) in con.execute("select payload from log where call = 'agents.prompt'")}
    con.close()
    assert len(answered) >= 200
    missing = [text for text in answered if text not in logged]
    assert not missing, missing[:5]
