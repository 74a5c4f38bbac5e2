"""Benchmark: many live event streams of one card at once (round 32, bounds32).

Run by hand (not a timed test; these machines are shared and noisy)::

    .venv/bin/python -m bench.event_streams                 # 1,008 streams
    .venv/bin/python -m bench.event_streams --streams 40    # what the smoke test runs

It starts ``arrowgate serve`` on a fresh database with the tests' canvas, opens
``--streams`` event streams of card c1 over the Unix socket (`MAX_STREAMS` a token,
so as many tokens as that takes, each a live token of the card: at most
`MAX_LIVE_TOKENS`), and prints what they cost the server: its resident memory and
descriptors before and after, per stream, the time to open them, and how long one
call whose event reaches every stream takes, with the CPU the server spent on it.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from engine.service.events import MAX_STREAMS
from engine.service.minting import MAX_LIVE_TOKENS


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1])
    return 0


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def _fds(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


def _stream(address: str, token: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(address)
    sock.sendall(f"GET /v1/events HTTP/1.1\r\nHost: x\r\n"
                 f"Authorization: Bearer {token}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"stream refused: {head[:200]!r}")
    return sock


def measure(streams: int) -> dict[str, Any]:
    """Open ``streams`` streams of card c1 on a fresh server; what they cost it."""
    from tests.service.conftest import build_canvas

    if streams > MAX_STREAMS * MAX_LIVE_TOKENS:
        raise SystemExit(f"at most {MAX_STREAMS * MAX_LIVE_TOKENS:,} streams of one card")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        db = tmp / "a.db"
        proc = subprocess.Popen([sys.executable, "-m", "engine.app.cli", "serve", "--db",
                                 str(db)], stdout=subprocess.PIPE, text=True)
        socks: list[socket.socket] = []
        try:
            assert proc.stdout is not None
            address = proc.stdout.readline().strip()
            assert proc.stdout.readline().strip() == "ready"
            operator = (tmp / "a.db.operator-token").read_text().strip()
            op = httpx.Client(transport=httpx.HTTPTransport(uds=address),
                              base_url="http://arrowgate", timeout=60,
                              headers={"Authorization": f"Bearer {operator}"})
            build_canvas(op, tmp / "proj")
            tokens = [op.post("/v1/tokens", json={"principal": "card:c1"}).json()["token"]
                      for _ in range(-(-streams // MAX_STREAMS))]
            before = {"rss_kib": _rss_kib(proc.pid), "fds": _fds(proc.pid)}
            started = time.monotonic()
            for i in range(streams):
                socks.append(_stream(address, tokens[i // MAX_STREAMS]))
            opened = time.monotonic() - started
            after = {"rss_kib": _rss_kib(proc.pid), "fds": _fds(proc.pid)}
            cpu = _cpu_ticks(proc.pid)
            started = time.monotonic()
            answer = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt",
                                                "target": "a1", "args": {"text": "hi"}})
            call_s = time.monotonic() - started
            op.close()
            return {"streams": streams, "before": before, "after": after,
                    "rss_kib_per_stream": round((after["rss_kib"] - before["rss_kib"])
                                                / max(streams, 1), 1),
                    "open_s": round(opened, 3), "call_status": answer.status_code,
                    "call_s": round(call_s, 3),
                    "call_cpu_ticks": _cpu_ticks(proc.pid) - cpu}
        finally:
            for sock in socks:
                sock.close()
            proc.kill()
            proc.communicate(timeout=30)


def main(argv: list[str] | None = None) -> int:
    """Measure, print the figures (and write them to ``--json``)."""
    parser = argparse.ArgumentParser(prog="bench.event_streams")
    parser.add_argument("--streams", type=int, default=63 * MAX_STREAMS)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    figures = measure(args.streams)
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
