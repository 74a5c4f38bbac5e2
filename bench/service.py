"""The HTTP service against the Python API (issue 16): ``python -m bench.service``.

Everything in one run, on this machine, every call durable before it is
answered (SQLite WAL, ``synchronous=FULL``, group commit):

- **Overhead**: the same call made one at a time through the Python API (in
  this process, on a database of its own) and through ``POST /v1/calls`` on
  one keep-alive connection, next to ``GET /v1/health`` on that connection.
  Target: HTTP adds at most 1.5× a health round trip to the API's cost.
- **Concurrency**: 32 keep-alive connections sending ``POST /v1/calls`` as
  fast as answers come, then ``GET /v1/health`` the same way. Targets: calls
  reach half the health rate, at least 5,000 decisions/s, p99 under 10 ms.
- **Batch**: ``POST /v1/calls:batch`` with 1,000 calls a request. Target:
  50,000 decisions/s.
- **Events**: a card's SSE stream; the time from sending a grant (whose
  commit makes a ``permissions.changed`` event) until the event arrives —
  an upper bound on commit-to-client. Target: under 50 ms.

``--instructions`` counts instead (callgrind, no timing): the server's machine
instructions per ``POST /v1/calls`` and per ``GET /v1/health`` on one
connection, and the same call's through the Python API, in another process
(`instructions`): what the server's own code costs, whatever the machine's load.
``--batch TURNS`` times ``calls:batch`` alone (the engine's `call_many`, then
HTTP), and ``--batch-instructions K`` counts instructions per refused call in
K batches of 1,000 through `Engine.call_many` (`batch_instructions`).

The server is a real ``arrowgate serve`` in a process of its own (on its Unix
socket); the client is a minimal HTTP/1.1 client on asyncio streams, so the
figures measure the server, not an HTTP client library.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from itertools import starmap
from pathlib import Path
from typing import Any

from engine import Engine, World, file_digests

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = {"name": "bench.svc", "version": "1.0.0",
            "permissions": {"agents.prompt": {}, "clipboard.write": {"optional": True}}}
SETTINGS = {"denial_log_limit": 1_000_000, "budget": [1_000_000, 1.0]}


class Conn:
    """One keep-alive HTTP/1.1 connection on a Unix socket."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 token: str) -> None:
        self.reader, self.writer, self.token = reader, writer, token

    @classmethod
    async def open(cls, path: str, token: str) -> Conn:
        """Connect."""
        reader, writer = await asyncio.open_unix_connection(path, limit=2**24)
        return cls(reader, writer, token)

    async def request(self, method: str, target: str, body: Any = None) -> tuple[int, bytes]:
        """Send one request and read its whole answer: (status, body).

        ``body`` bytes are sent as they are (JSON encoded once, for a body sent
        again and again: the client's encoding is not the server's time).
        """
        data = b"" if body is None else body if isinstance(body, bytes) else \
            json.dumps(body).encode()
        head = (f"{method} {target} HTTP/1.1\r\nHost: ag\r\nAuthorization: Bearer {self.token}"
                f"\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n")
        self.writer.write(head.encode() + data)
        status_line = await self.reader.readline()
        status = int(status_line.split()[1])
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        """Close the connection."""
        self.writer.close()


def _call(card: str, n: int) -> dict[str, Any]:
    # Refused (no arrow to "lonely"): decided, then a durable log row each.
    return {"card": card, "call": "agents.prompt", "target": "lonely",
            "args": {"text": f"bench {n}"}}


async def _build_api(engine: Engine, folder: Path, cards: int,
                     settings: dict[str, Any] | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)  # a workspace's folder must exist
    await engine.create_workspace("w1", str(folder),
                                  settings=SETTINGS if settings is None else settings)
    await engine.offer("bench.svc", MANIFEST,
                       file_digests({"manifest.json": json.dumps(MANIFEST, sort_keys=True)}))
    await engine.install("bench.svc")
    await engine.add_node({"id": "lonely", "type": "agent"}, workspace="w1")
    for i in range(cards):
        await engine.add_node({"id": f"c{i}", "type": "card", "package": "bench.svc"},
                              workspace="w1")


async def _build_http(conn: Conn, folder: Path, cards: int) -> None:
    steps: list[tuple[str, str, Any]] = [
        ("POST", "/v1/workspaces", {"id": "w1", "folder": str(folder), "settings": SETTINGS}),
        ("POST", "/v1/packages", {"manifest": MANIFEST}),
        ("POST", "/v1/packages/bench.svc/install", {}),
        ("POST", "/v1/workspaces/w1/nodes", {"id": "lonely", "type": "agent"}),
    ] + [("POST", "/v1/workspaces/w1/nodes", {"id": f"c{i}", "type": "card",
                                              "package": "bench.svc"}) for i in range(cards)]
    for method, target, body in steps:
        status, answer = await conn.request(method, target, body)
        assert status in (200, 201), answer


def _serve(tmp: Path, prefix: list[str] | None = None, env: dict[str, str] | None = None
           ) -> tuple[subprocess.Popen[str], Path]:
    """``arrowgate serve`` on ``tmp``/svc.db in a process of its own (run under
    ``prefix``, e.g. callgrind, when given), and the Unix socket it listens on."""
    sock = tmp / "s" / "serve.sock"
    proc = subprocess.Popen([*(prefix or []), sys.executable, "-m", "engine.app.cli", "serve",
                             "--db", str(tmp / "svc.db"), "--socket", str(sock)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            cwd=ROOT, env=env)
    return proc, sock


def _operator_token(proc: subprocess.Popen[str], tmp: Path) -> str:
    """Wait for `_serve`'s ``ready`` line; the operator token it wrote."""
    assert proc.stdout is not None
    proc.stdout.readline()
    assert proc.stdout.readline().strip() == "ready"
    return (tmp / "svc.db.operator-token").read_text().strip()


def _cpu(pid: int) -> float:
    """CPU seconds (user and system) the process has used so far; 0 where /proc is not."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _sequential(conn: Conn, n: int, method: str, target: str,
                      body: Any = None) -> list[float]:
    times = []
    for i in range(n):
        t = time.perf_counter()
        status, answer = await conn.request(method, target,
                                            _call("c0", i) if body == "call" else body)
        times.append(time.perf_counter() - t)
        assert status == 200, answer
    return times


async def _concurrent(conns: list[Conn], seconds: float, method: str, target: str,
                      call: bool) -> tuple[float, list[float]]:
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def worker(k: int, conn: Conn) -> int:
        done = 0
        while time.perf_counter() < deadline:
            t = time.perf_counter()
            status, answer = await conn.request(method, target,
                                                _call(f"c{k}", done) if call else None)
            latencies.append(time.perf_counter() - t)
            assert status == 200, answer
            done += 1
        return done

    t0 = time.perf_counter()
    counts = await asyncio.gather(*(worker(k, c) for k, c in enumerate(conns)))
    return sum(counts) / (time.perf_counter() - t0), latencies


async def _sse_latency(path: str, token: str, op: Conn, events: int) -> list[float]:
    """Grant/revoke toggles for the package; time until c0's stream shows each."""
    # A card token for c0, then its event stream on a connection of its own.
    status, answer = await op.request("POST", "/v1/tokens", {"principal": "card:c0"})
    assert status == 201, answer
    card_token = json.loads(answer)["token"]
    reader, writer = await asyncio.open_unix_connection(path)
    writer.write(f"GET /v1/events HTTP/1.1\r\nHost: ag\r\nAuthorization: Bearer {card_token}"
                 f"\r\nAccept: text/event-stream\r\n\r\n".encode())
    while (await reader.readline()) not in (b"\r\n", b""):
        pass  # response headers (the body is chunked: sizes and frames by line)

    async def next_event() -> None:
        while True:
            line = await reader.readline()
            if line.startswith(b"event: permissions.changed"):
                return

    out = []
    for i in range(events):
        verb = "grant" if i % 2 == 0 else "revoke"
        waiting = asyncio.ensure_future(next_event())
        t = time.perf_counter()
        status, answer = await op.request("POST", f"/v1/packages/bench.svc/{verb}",
                                          {"permission": "clipboard.write"})
        assert status == 200, answer
        await waiting
        out.append(time.perf_counter() - t)
    writer.close()
    return out


async def run(tmp: Path, smoke: bool) -> dict[str, Any]:
    """Every measurement, in one run; returns the figures."""
    n_seq = 60 if smoke else 1_000
    seconds = 0.5 if smoke else 5.0
    batches, batch_size = (2, 200) if smoke else (20, 1_000)
    conns_n = 4 if smoke else 32
    cards = max(conns_n, 4)
    figures: dict[str, Any] = {"smoke": smoke}

    # The Python API in this process, on a database of its own; the service in
    # a process of its own. Measured in turns, so the machine's mood (and the
    # disk's: every call waits for its fsync) weighs on both alike.
    engine = Engine.open(tmp / "api.db", world=World(net=None, fs=None))
    proc, sock = _serve(tmp)
    try:
        await _build_api(engine, tmp / "ws", cards)

        async def api_calls(n: int, idle: float = 0.0) -> list[float]:
            out = []
            for i in range(n):
                if idle:
                    time.sleep(idle)  # the process sleeps, as the server does between requests
                t = time.perf_counter()
                d = await engine.call("c0", "agents.prompt", "lonely", {"text": f"bench {i}"})
                out.append(time.perf_counter() - t)
                assert d.code == "PERMISSION_DENIED", d.message
            return out

        token = _operator_token(proc, tmp)
        op = await Conn.open(str(sock), token)
        await _build_http(op, tmp / "ws", cards)
        await api_calls(20)  # warm-up
        await _sequential(op, 20, "POST", "/v1/calls", "call")
        await _sequential(op, 20, "GET", "/v1/health")
        api: list[float] = []
        api_idle: list[float] = []
        http: list[float] = []
        health: list[float] = []
        cpu_http = cpu_health = 0.0  # the server's CPU seconds in each
        # A server sleeps between one connection's requests (for at least the client's
        # part of a round trip) and wakes with colder caches than a caller making
        # calls back to back: the same API call after the process slept as long as a
        # health round trip, for reference (not the target's measure).
        idle = statistics.median(await _sequential(op, 20, "GET", "/v1/health"))
        for _ in range(10):
            api += await api_calls(n_seq // 10)
            api_idle += await api_calls(n_seq // 20, idle)
            cpu0 = _cpu(proc.pid)
            http += await _sequential(op, n_seq // 10, "POST", "/v1/calls", "call")
            cpu1 = _cpu(proc.pid)
            health += await _sequential(op, n_seq // 10, "GET", "/v1/health")
            cpu_http += cpu1 - cpu0
            cpu_health += _cpu(proc.pid) - cpu1
        # The engine alone, for reference: the same concurrency and the same batches.
        stop_at = time.perf_counter() + seconds

        async def api_worker(k: int) -> int:
            done = 0
            while time.perf_counter() < stop_at:
                await engine.call(f"c{k}", "agents.prompt", "lonely", {"text": f"c {done}"})
                done += 1
            return done

        t = time.perf_counter()
        api_concurrent = sum(await asyncio.gather(*(api_worker(k) for k in range(conns_n))))
        api_concurrent_rate = api_concurrent / (time.perf_counter() - t)
        t = time.perf_counter()
        for _ in range(batches):
            # What ``calls:batch`` itself calls: one after another, one group commit.
            await engine.call_many([(f"c{i % cards}", "agents.prompt", "lonely",
                                     {"text": f"bench {i}"}, None) for i in range(batch_size)])
        api_batch_rate = batches * batch_size / (time.perf_counter() - t)
        engine.close()
        conns = [await Conn.open(str(sock), token) for _ in range(conns_n)]
        cpu0 = _cpu(proc.pid)
        calls_rate, calls_lat = await _concurrent(conns, seconds, "POST", "/v1/calls", True)
        cpu_calls = (_cpu(proc.pid) - cpu0) / len(calls_lat)
        health_rate, health_lat = await _concurrent(conns, seconds, "GET", "/v1/health", False)
        for c in conns:
            c.close()
        op.close()  # idle meanwhile: a fresh connection for the rest
        op = await Conn.open(str(sock), token)
        batch_body = json.dumps({"calls": [_call(f"c{i % cards}", i)
                                           for i in range(batch_size)]}).encode()
        t = time.perf_counter()
        for _ in range(batches):
            status, answer = await op.request("POST", "/v1/calls:batch", batch_body)
            assert status == 200, answer[:200]
        batch_rate = batches * batch_size / (time.perf_counter() - t)
        sse = await _sse_latency(str(sock), token, op, 10 if smoke else 100)
        op.close()
    finally:
        engine.close()
        proc.terminate()
        proc.communicate(timeout=120)

    def ms(values: list[float], q: float | None = None) -> float:
        return (statistics.median(values) if q is None else _pct(values, q)) * 1000

    figures.update({
        "api_call_ms": ms(api), "http_call_ms": ms(http), "health_ms": ms(health),
        "http_overhead_ms": ms(http) - ms(api), "api_call_after_idle_ms": ms(api_idle),
        "overhead_over_idle_api_in_health_round_trips": (ms(http) - ms(api_idle)) / ms(health),
        "server_cpu_call_ms": cpu_http / len(http) * 1000,
        "server_cpu_health_ms": cpu_health / len(health) * 1000,
        "server_cpu_concurrent_call_ms": cpu_calls * 1000,
        "overhead_in_health_round_trips": (ms(http) - ms(api)) / ms(health),
        "connections": conns_n,
        "calls_per_s": calls_rate, "calls_p50_ms": ms(calls_lat),
        "calls_p99_ms": ms(calls_lat, 0.99),
        "health_per_s": health_rate, "health_p99_ms": ms(health_lat, 0.99),
        "calls_to_health": calls_rate / health_rate,
        "api_concurrent_per_s": api_concurrent_rate, "api_batch_decisions_per_s": api_batch_rate,
        "batch_size": batch_size, "batch_decisions_per_s": batch_rate,
        "sse_events": len(sse), "sse_ms_median": ms(sse), "sse_ms_p99": ms(sse, 0.99),
        "sse_ms_max": max(sse) * 1000,
    })
    return figures


async def run_batch(tmp: Path, rounds: int) -> dict[str, Any]:
    """``calls:batch`` alone (``--batch``): ``rounds`` turns, each 20 batches of 1,000
    refused calls through the engine in this process (`Engine.call_many`), then the
    same over HTTP to a server process; medians, and the server's CPU a decision."""
    batches, batch_size, cards = 20, 1_000, 32
    engine = Engine.open(tmp / "api.db", world=World(net=None, fs=None))
    proc, sock = _serve(tmp)
    api: list[float] = []
    http: list[float] = []
    cpu: list[float] = []
    try:
        await _build_api(engine, tmp / "ws", cards)
        token = _operator_token(proc, tmp)
        op = await Conn.open(str(sock), token)
        await _build_http(op, tmp / "ws", cards)
        body = json.dumps({"calls": [_call(f"c{i % cards}", i)
                                     for i in range(batch_size)]}).encode()
        for turn in range(rounds + 1):  # the first turn warms up
            t = time.perf_counter()
            for _ in range(batches):
                await engine.call_many([(f"c{i % cards}", "agents.prompt", "lonely",
                                         {"text": f"bench {i}"}, None)
                                        for i in range(batch_size)])
            api_rate = batches * batch_size / (time.perf_counter() - t)
            cpu0, t = _cpu(proc.pid), time.perf_counter()
            for _ in range(batches):
                status, answer = await op.request("POST", "/v1/calls:batch", body)
                assert status == 200, answer[:200]
            http_rate = batches * batch_size / (time.perf_counter() - t)
            if turn:
                api.append(api_rate)
                http.append(http_rate)
                cpu.append((_cpu(proc.pid) - cpu0) / (batches * batch_size) * 1e6)
        op.close()
    finally:
        engine.close()
        proc.terminate()
        proc.communicate(timeout=120)
    return {"batch_rounds": rounds, "batch_decisions_per_s": statistics.median(http),
            "batch_decisions_per_s_all": http, "api_batch_decisions_per_s": statistics.median(api),
            "api_batch_decisions_per_s_all": api,
            "server_cpu_us_a_decision": statistics.median(cpu)}


def batch_steps(folder: Path, kind: str, k: int) -> None:
    """What `batch_instructions` runs under callgrind: a world of 32 cards, one warm-up
    batch, then (``kind`` "batch") ``k`` batches of 1,000 refused calls through
    `Engine.call_many`, each run to its commit inside `itertools.starmap` (a C function
    nothing else here calls, so callgrind counts only those steps); "none": no step.
    ``kind`` "suppressed" (and "suppressed-none", its baseline) does the same in a
    workspace whose ``denial_log_limit`` is 1: beyond the warm-up every refusal is
    counted toward its card's pending `suppressed` summary, with no row of its own."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    engine = Engine.open(folder / "api.db", world=World(net=None, fs=None))
    loop = asyncio.new_event_loop()
    try:
        settings = ({**SETTINGS, "denial_log_limit": 1} if kind.startswith("suppressed")
                    else SETTINGS)
        loop.run_until_complete(_build_api(engine, folder / "ws", 32, settings))

        def calls(start: int) -> list[Any]:
            return [(f"c{i % 32}", "agents.prompt", "lonely", {"text": f"bench {start + i}"},
                     None) for i in range(1_000)]

        loop.run_until_complete(engine.call_many(calls(0)))  # warm-up
        batches = [(calls(1_000 * (j + 1)),)
                   for j in range(k if kind in ("batch", "suppressed") else 0)]
        gc.collect()
        gc.freeze()  # the world out of the collector's way, as `arrowgate serve` leaves it

        def one(batch: list[Any]) -> None:
            loop.run_until_complete(engine.call_many(batch))

        deque(starmap(one, batches), maxlen=0)
    finally:
        engine.close()
        loop.close()


def batch_instructions(k: int, folder: Path, *, suppressed: bool = False) -> float:
    """Machine instructions per refused call in a 1,000-call `Engine.call_many` (its
    commit included), counted by callgrind: (I(k batches) − I(none)) / (k × 1,000).

    ``suppressed``: refusals beyond ``denial_log_limit`` instead, counted toward
    their card's pending summary rather than logged row by row (`batch_steps`)."""
    if shutil.which("valgrind") is None:
        raise SystemExit("bench.service: --batch-instructions needs valgrind")
    counts = []
    for kind in (("suppressed-none", "suppressed") if suppressed else ("none", "batch")):
        with tempfile.TemporaryDirectory() as tmp:
            command = ["valgrind", "--tool=callgrind", "--collect-atstart=no",
                       "--toggle-collect=starmap_next", f"--callgrind-out-file={tmp}/out",
                       sys.executable, "-m", "bench.service", "--batch-steps", kind, str(k),
                       "--dir", str(folder)]
            # No address-space randomisation and a fixed hash seed: counts that repeat.
            if shutil.which("setarch"):
                command = ["setarch", "-R", *command]
            env = {**os.environ, "PYTHONHASHSEED": "0",
                   "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
            done = subprocess.run(command, capture_output=True, text=True, env=env,
                                  check=False, cwd=ROOT)
        found = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode != 0 or found is None:
            raise SystemExit(f"bench.service: callgrind failed:\n{done.stderr[-2000:]}")
        counts.append(int(found.group(1)))
    return (counts[1] - counts[0]) / (k * 1_000)


def batch_lines(f: dict[str, Any]) -> list[str]:
    """The ``--batch`` figures as report lines."""
    return [
        f"POST /v1/calls:batch, 1,000 refused calls a request, median of {f['batch_rounds']} "
        f"turns of 20: {f['batch_decisions_per_s']:,.0f} decisions/s (target ≥ 50,000; "
        f"turns: {', '.join(f'{x:,.0f}' for x in f['batch_decisions_per_s_all'])}); the "
        f"server's CPU {f['server_cpu_us_a_decision']:.1f} µs a decision",
        f"the engine alone, the same batches (Engine.call_many): "
        f"{f['api_batch_decisions_per_s']:,.0f}/s (turns: "
        f"{', '.join(f'{x:,.0f}' for x in f['api_batch_decisions_per_s_all'])})",
    ]


def _callgrind(out: Path, start: str = "--instr-atstart=no") -> list[str]:
    """valgrind's callgrind, collecting nothing until told (``start``), without
    address-space randomisation (with a fixed hash seed, set by the caller: counts
    that repeat)."""
    command = ["valgrind", "--tool=callgrind", start, f"--callgrind-out-file={out}"]
    return ["setarch", "-R", *command] if shutil.which("setarch") else command


def _totals(path: Path) -> int:
    """The instructions a callgrind dump counted."""
    found = re.search(r"^(?:summary|totals): (\d+)", path.read_text(errors="replace"), re.M)
    if found is None:
        raise SystemExit(f"bench.service: no totals in {path}")
    return int(found.group(1))


async def _server_instructions(tmp: Path, n: int) -> tuple[float, float]:
    """The server's instructions per ``POST /v1/calls`` and per ``GET /v1/health``: an
    ``arrowgate serve`` under callgrind, counting only while one connection sends ``n``
    calls (dumped), then ``n`` health checks (dumped)."""
    proc, sock = _serve(tmp, _callgrind(tmp / "cg.%p"), {**os.environ, "PYTHONHASHSEED": "0"})

    def control(*args: str) -> None:
        subprocess.run(["callgrind_control", *args, str(proc.pid)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    try:
        conn = await Conn.open(str(sock), _operator_token(proc, tmp))
        (tmp / "ws").mkdir()
        await _build_http(conn, tmp / "ws", 4)
        await _sequential(conn, 30, "POST", "/v1/calls", "call")  # warm-up
        await _sequential(conn, 30, "GET", "/v1/health")
        control("-i", "on")
        control("-z")
        await _sequential(conn, n, "POST", "/v1/calls", "call")
        control("-d", "calls")
        await _sequential(conn, n, "GET", "/v1/health")
        control("-d", "health")
        control("-i", "off")
        conn.close()
    finally:
        proc.terminate()
        proc.communicate(timeout=300)
    calls, health = (_totals(next(tmp.glob(f"cg.{proc.pid}.{k}"))) for k in (1, 2))
    return calls / n, health / n


def _api_run(folder: Path, n: int) -> None:
    """``n`` API calls counted under callgrind (`instructions`): the measured loop runs
    inside ``itertools.starmap``, the only place callgrind collects (``--toggle-collect``)."""
    async def build() -> Engine:
        engine = Engine.open(folder / "api.db", world=World(net=None, fs=None))
        await _build_api(engine, folder / "ws", 4)
        return engine

    loop = asyncio.new_event_loop()
    engine = loop.run_until_complete(build())

    async def calls(first: int, k: int) -> None:
        for i in range(first, first + k):
            d = await engine.call("c0", "agents.prompt", "lonely", {"text": f"bench {i}"})
            assert d.code == "PERMISSION_DENIED", d.message

    loop.run_until_complete(calls(0, 30))  # warm-up, not counted
    list(itertools.starmap(loop.run_until_complete, [(calls(1000, n),)]))
    engine.close()
    loop.close()


def instructions(tmp: Path, n: int) -> dict[str, float]:
    """Machine instructions per call and per health check in the server, and per API
    call, counted by callgrind; HTTP's addition in health checks, by instructions."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("bench.service: --instructions needs valgrind (apt-get install "
                         "valgrind)")
    call, health = asyncio.run(_server_instructions(tmp, n))
    (tmp / "api").mkdir()
    out = tmp / "api" / "cg.out"
    command = [*_callgrind(out, "--collect-atstart=no"), "--toggle-collect=starmap_next", sys.executable, "-m",
               "bench.service", "--api-run", str(n), "--dir", str(tmp / "api")]
    subprocess.run(command, check=True, cwd=ROOT, stderr=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONHASHSEED": "0"})
    api = _totals(out) / n
    return {"instructions_call": call, "instructions_health": health,
            "instructions_api_call": api, "instructions_addition_in_health": (call - api) / health}


def lines(f: dict[str, Any]) -> list[str]:
    """The figures as report lines."""
    return [
        f"one keep-alive connection, median: Python API {f['api_call_ms']:.2f} ms a call; "
        f"POST /v1/calls {f['http_call_ms']:.2f} ms; GET /v1/health {f['health_ms']:.2f} ms; "
        f"HTTP adds {f['http_overhead_ms']:.2f} ms = "
        f"{f['overhead_in_health_round_trips']:.2f}× a health round trip (target ≤ 1.5×); "
        f"server CPU a call {f['server_cpu_call_ms']:.2f} ms, a health "
        f"{f['server_cpu_health_ms']:.2f} ms; the API call after sleeping a health round "
        f"trip {f['api_call_after_idle_ms']:.2f} ms (HTTP adds "
        f"{f['overhead_over_idle_api_in_health_round_trips']:.2f}× health to that)",
        f"{f['connections']} connections: POST /v1/calls {f['calls_per_s']:,.0f}/s "
        f"(p50 {f['calls_p50_ms']:.1f} ms, p99 {f['calls_p99_ms']:.1f} ms); GET /v1/health "
        f"{f['health_per_s']:,.0f}/s (p99 {f['health_p99_ms']:.1f} ms); calls/health "
        f"{f['calls_to_health']:.2f} (targets ≥ 0.5, ≥ 5,000/s, p99 < 10 ms); the engine "
        f"alone, {f['connections']} concurrent callers: {f['api_concurrent_per_s']:,.0f}/s; "
        f"server CPU a call {f['server_cpu_concurrent_call_ms']:.2f} ms",
        f"POST /v1/calls:batch, {f['batch_size']:,} calls a request: "
        f"{f['batch_decisions_per_s']:,.0f} decisions/s (target ≥ 50,000); the engine alone, "
        f"the same batches (Engine.call_many): {f['api_batch_decisions_per_s']:,.0f}/s",
        f"SSE, request sent → event received ({f['sse_events']} events): median "
        f"{f['sse_ms_median']:.1f} ms, p99 {f['sse_ms_p99']:.1f} ms, max {f['sse_ms_max']:.1f} "
        f"ms (target < 50 ms)",
    ]


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.service [--smoke] [--json FILE]``."""
    parser = argparse.ArgumentParser(prog="bench.service")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (the test suite)")
    parser.add_argument("--json", help="write the raw figures here")
    parser.add_argument("--dir", default="/tmp",
                        help="where the databases go (/dev/shm: no disk, the CPU cost alone)")
    parser.add_argument("--batch", type=int, metavar="TURNS",
                        help="only calls:batch, TURNS turns (engine alone, then HTTP)")
    parser.add_argument("--batch-instructions", type=int, metavar="K",
                        help="instructions per refused call in K batches of 1,000 "
                        "(Engine.call_many, callgrind; a world in --dir)")
    parser.add_argument("--suppressed", action="store_true",
                        help="with --batch-instructions: refusals beyond denial_log_limit "
                             "(no row each, counted toward a suppressed row)")
    parser.add_argument("--batch-steps", nargs=2, metavar=("KIND", "K"),
                        help="what --batch-instructions runs under callgrind")
    parser.add_argument("--instructions", type=int, metavar="N", default=0,
                        help="count instructions (callgrind) over N calls and N health "
                             "checks on one connection instead of timing")
    parser.add_argument("--api-run", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.api_run:  # the API's side of --instructions, under callgrind
        _api_run(Path(args.dir), args.api_run)
        return 0
    if args.batch_steps:
        batch_steps(Path(args.dir) / "agb-callgrind", args.batch_steps[0],
                    int(args.batch_steps[1]))
        return 0
    if args.batch_instructions:
        per = batch_instructions(args.batch_instructions, Path(args.dir),
                                 suppressed=args.suppressed)
        what = "a suppressed refusal" if args.suppressed else "a refused call"
        print(f"- {what} in a 1,000-call Engine.call_many, its commit included: "
              f"{per / 1000:.1f} k instructions (callgrind)")
        return 0
    figures: dict[str, Any]
    with tempfile.TemporaryDirectory(prefix="agb", dir=args.dir) as tmp:
        if args.instructions:
            figures = instructions(Path(tmp), args.instructions)
            print(f"- instructions: POST /v1/calls {figures['instructions_call']:,.0f} in the "
                  f"server, GET /v1/health {figures['instructions_health']:,.0f}, the API call "
                  f"{figures['instructions_api_call']:,.0f}: HTTP adds "
                  f"{figures['instructions_addition_in_health']:.2f}× a health check's")
        elif args.batch:
            figures = asyncio.run(run_batch(Path(tmp), args.batch))
            for line in batch_lines(figures):
                print("- " + line)
        else:
            figures = asyncio.run(run(Path(tmp), args.smoke))
            for line in lines(figures):
                print("- " + line)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
