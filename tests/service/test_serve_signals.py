"""``arrowgate serve`` and the signals a Unix process meets (`engine.service.serve.STOP_SIGNALS`).

A POSIX shell starts a background job (``arrowgate serve &`` in a script) with SIGINT
ignored, so that the terminal's Ctrl-C reaches only the foreground command; ``nohup``
starts it with SIGHUP ignored. Such a server keeps the signal ignored, and SIGTERM still
stops it cleanly. Not ignored, SIGHUP (its terminal gone) stops it as SIGTERM does,
pending commits flushed, rather than killing it outright. SIGPIPE never kills it: a
client gone mid-answer costs only its own connection. A stopped server leaves no socket
and no socket folder it made.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from engine import Engine
from tests.shortdirs import short_dir
from tests.stopsignals import started, stopped

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]

def _start(db: Path, *, ignoring: str | None = None) -> tuple[subprocess.Popen[str], str]:
    shim = started(ignoring)
    proc = subprocess.Popen([*shim, *ARROWGATE, "serve", "--db", str(db), "--heartbeat", "0.05"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    address = proc.stdout.readline().strip()
    if proc.stdout.readline().strip() != "ready":
        proc.kill()
        raise AssertionError(f"no ready line: {proc.communicate()}")
    return proc, address


def _client(address: str, token: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(transport=httpx.HTTPTransport(uds=address), base_url="http://ag",
                        headers=headers, timeout=30)


def _dispositions(pid: int, sig: int) -> tuple[bool, bool]:
    """Whether process ``pid`` ignores ``sig``, and whether it catches it (Linux /proc)."""
    fields = dict(line.split(":\t", 1) for line in
                  Path(f"/proc/{pid}/status").read_text().splitlines() if ":\t" in line)
    bit = 1 << (sig - 1)
    return bool(int(fields["SigIgn"], 16) & bit), bool(int(fields["SigCgt"], 16) & bit)


def _stopped_cleanly(proc: subprocess.Popen[str], address: str, sig: int) -> None:
    """``sig`` stops the server: exit 0, its socket and the socket folder it made gone."""
    proc.send_signal(sig)
    _out, err = stopped(proc, 60)
    assert proc.returncode == 0, err
    assert not os.path.lexists(address)
    assert not os.path.lexists(Path(address).parent)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
@pytest.mark.parametrize("sig", ["SIGINT", "SIGHUP"])
def test_a_signal_ignored_at_start_stays_ignored(sig: str) -> None:
    number = getattr(signal, sig)
    db = short_dir("ag") / "a.db"
    proc, address = _start(db, ignoring=sig)
    try:
        assert _dispositions(proc.pid, number) == (True, False)
        proc.send_signal(number)
        time.sleep(0.5)  # uvicorn looks at its exit flag every 0.1 s
        assert proc.poll() is None
        with _client(address) as anon:
            assert anon.get("/v1/health").json()["status"] == "ok"
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    _stopped_cleanly(proc, address, signal.SIGTERM)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_stop_signal_not_ignored_is_caught(sig: str) -> None:
    """Each stop signal is handled (caught), never left to its default, which kills."""
    db = short_dir("ag") / "a.db"
    proc, address = _start(db)
    try:
        assert _dispositions(proc.pid, getattr(signal, sig)) == (False, True)
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    _stopped_cleanly(proc, address, signal.SIGTERM)


def test_sighup_stops_the_server_with_its_writes_kept() -> None:
    """Its terminal gone, the server stops as on SIGTERM: what it answered is kept."""
    db = short_dir("ag") / "a.db"
    proc, address = _start(db)
    try:
        token = Path(f"{db}.operator-token").read_text().strip()
        with _client(address, token) as op:
            assert op.post("/v1/workspaces", json={"id": "w1", "folder": str(db.parent)}
                           ).status_code == 201
            assert op.post("/v1/workspaces/w1/nodes", json={"id": "n1", "type": "note"}
                           ).status_code == 201
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    _stopped_cleanly(proc, address, signal.SIGHUP)
    engine = Engine.open(db)
    try:
        assert engine.state.canvas.node("n1") is not None
    finally:
        engine.close()


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_client_gone_mid_answer_never_stops_the_server() -> None:
    """SIGPIPE is ignored (the child starts with it at its default, subprocess's
    ``restore_signals``): an event stream whose client went away, written to every
    0.05 s, and an answer its client did not wait for, cost only their connections."""
    db = short_dir("ag") / "a.db"
    proc, address = _start(db)
    try:
        assert _dispositions(proc.pid, signal.SIGPIPE)[0]
        token = Path(f"{db}.operator-token").read_text().strip()
        for path in ("/v1/events", "/v1/log?limit=1000"):
            raw = socket.socket(socket.AF_UNIX)
            raw.connect(address)
            raw.sendall(f"GET {path} HTTP/1.1\r\nHost: ag\r\n"
                        f"Authorization: Bearer {token}\r\n\r\n".encode())
            raw.recv(16)  # the answer has begun
            # Closed with its answer unread: the server's next writes meet a reset.
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            raw.close()
        time.sleep(0.5)  # heartbeats written to the gone stream
        assert proc.poll() is None
        with _client(address) as anon:
            assert anon.get("/v1/health").json()["status"] == "ok"
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    _stopped_cleanly(proc, address, signal.SIGTERM)
