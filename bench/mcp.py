"""An MCP tool call through arrowgate against a plain MCP server (issue 17):
``python -m bench.mcp``.

In one run, one tool (``echo``: the answer is the arguments) is called over
MCP on stdio by the SDK's own client, sequentially:

- **plain**: a minimal MCP server (the SDK's low-level ``Server``) that answers
  the tool itself;
- **arrowgate**: ``arrowgate mcp --agent a1`` → ``arrowgate serve`` (a process
  of its own, Unix socket, every tool call and answer durable in the arrow log)
  → the card, which gets the ``tool.call`` event on its SSE stream and answers
  with ``POST /v1/tool-calls/{id}/result`` → back to the agent. The card is a
  canvas app's code, so it is written lean here: httpcore, not httpx, its
  answers on a kept connection as `arrowgate mcp`'s own requests (see `_card`).

The overhead arrowgate adds is the difference of the medians (and of the
99th percentiles). Calls are measured in alternating rounds, so the machine's
mood weighs on both alike (with ``--against``, the two trees also swap places
from round to round). Target: at most 2 ms median.

Each arrowgate call is also cut into its hops by timestamps (one monotonic
clock for all processes): ``to_card`` (the agent sends → the card has the
``tool.call`` event: MCP server, ``POST /v1/tool-calls``, its durable commit,
the SSE stream), ``card`` (the card reads the event and sends its answer) and
``back`` (the card sends ``POST .../result`` → the agent has the result: the
answer's durable commit, the wait route waking, the MCP server); and
``answer_post``, the card's own wait for its POST (which may end after the
agent has its result). The CPU time each process spent per call is read from
``/proc`` (``cpu_bench`` is this process: the agent, and the card).

``--dir /dev/shm`` puts the database where fsync costs nothing, to see the
rest; ``--against TREE`` runs a second arrowgate from another checkout (say
the base commit) in the same alternation, for before/after side by side — with
that checkout's own ``.venv`` when it has one, so that its pinned
dependencies are the ones measured. ``--profile DIR`` runs this tree's
``serve`` and ``mcp`` under cProfile (``DIR/serve.prof``, ``DIR/mcp.prof``).

``--instructions`` counts instead of timing: ``serve``, ``mcp`` and the plain
server run under valgrind's callgrind (``setarch -R``, a fixed
``PYTHONHASHSEED``), their counters are zeroed after a warm-up and dumped
after ``--calls`` tool calls (``callgrind_control``), and the machine
instructions per call are printed for each process and tree. Repeatable to
a fraction of a percent whatever the load, so trees are compared by it
first; the timed run then says what the instructions are worth.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpcore
import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from engine.app.kept import KeptConnections, UnixConnections
from engine.app.onewrite import OneWriteBackend

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
MANIFEST = {"name": "bench.mcp", "version": "1.0.0", "permissions": {},
            "tools": [{"name": "echo", "description": "Echo the arguments", "input": SCHEMA}]}
PLAIN = f"""
import anyio, json
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

server = Server("plain")

@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return [types.Tool(name="c1__echo", description="Echo the arguments",
                       inputSchema=json.loads({json.dumps(SCHEMA)!r}))]

@server.call_tool(validate_input=False)
async def call_tool(name, arguments):
    return types.CallToolResult(content=[types.TextContent(type="text",
                                                           text=json.dumps(arguments))])

async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _cpu(pid: int) -> float:
    """CPU seconds (user and system) process ``pid`` has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@asynccontextmanager
async def _session(command: str, args: list[str], cwd: Path,
                   env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=command, args=args, cwd=str(cwd), env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        yield session


class _Path:
    """One way to the tool: a plain server, or arrowgate from a source tree."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.times: list[float] = []
        #: Per call: (to the card, in the card, back to the agent), seconds.
        self.hops: list[tuple[float, float, float]] = []
        #: The card's POST of each answer, seconds.
        self.posts: list[float] = []
        #: text → {"event": t, "posted": t, "answered": t}, filled by the card.
        self.stamps: dict[str, dict[str, float]] = {}
        self.pids: dict[str, int] = {}  #: process → pid, for the CPU figures
        self.cpu: dict[str, float] = {}  #: process → CPU seconds over the measured calls
        self.session: ClientSession | None = None

    async def calls(self, n: int, *, measure: bool = True) -> None:
        assert self.session is not None
        before = {k: _cpu(pid) for k, pid in self.pids.items()}
        # This process: the agent (the SDK's client), and for arrowgate the card.
        before["bench"] = time.process_time()
        for i in range(n):
            text = f"{self.name} {len(self.times)} {i}"
            t = time.perf_counter()
            result = await self.session.call_tool("c1__echo", {"text": text})
            end = time.perf_counter()
            assert not result.isError, result.content
            if not measure:
                continue
            self.times.append(end - t)
            stamp = self.stamps.get(text)
            if stamp is not None:
                self.hops.append((stamp["event"] - t, stamp["posted"] - stamp["event"],
                                  end - stamp["posted"]))
        if measure and self.name != "plain":
            await asyncio.sleep(0.05)  # the card's last POST returns
            self.posts += [s["answered"] - s["posted"] for s in self.stamps.values()
                           if "answered" in s]
        self.stamps.clear()
        if measure:
            for k, pid in self.pids.items():
                self.cpu[k] = self.cpu.get(k, 0.0) + _cpu(pid) - before[k]
            self.cpu["bench"] = self.cpu.get("bench", 0.0) + time.process_time() - before["bench"]


async def _card(address: str, token: str, ready: asyncio.Event,
                stamps: dict[str, dict[str, float]], lean: bool = False) -> None:
    """The card: answer every tool call with its arguments, as soon as it arrives.

    A card is the canvas app's own code, in any language; this one is a lean
    client, httpcore sending each request in one write, its answers on a kept
    connection (`engine.app.kept`, as `arrowgate mcp`'s own client): httpx's
    request and response models would cost the card about 1 ms of CPU an
    answer, on the round trip's critical path (BENCHMARKS.md, issue 17), and
    httpcore's pool about 0.1 ms (round 8). With ``lean`` (``--lean-card``) its
    answers go on `engine.app.kept.UnixConnections` instead, as `arrowgate mcp`'s
    do since round 10: how much of the overhead is the card's own HTTP client
    (not the default, so that figures compare with earlier rounds').
    """
    base = "http://arrowgate"
    auth = (b"Authorization", f"Bearer {token}".encode())
    post_headers = [auth, (b"Content-Type", b"application/json")]
    answers: KeptConnections | UnixConnections = \
        UnixConnections(address, b"arrowgate", keepalive=60.0) if lean else \
        KeptConnections(httpcore.Origin(b"http", b"arrowgate", 80), OneWriteBackend(),
                        uds=address, keepalive=60.0)
    try:
        async with httpcore.AsyncConnectionPool(uds=address,
                                                network_backend=OneWriteBackend()) as pool, \
                pool.stream("GET", base + "/v1/events", headers=[auth]) as r:
            assert r.status == 200, r.status
            ready.set()
            pending = b""
            async for chunk in r.aiter_stream():
                # SSE: one "data: {...}" line per event (the service writes one).
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    if not line.startswith(b"data: "):
                        continue
                    event = json.loads(line[6:])
                    if event["type"] != "tool.call":
                        continue
                    call = event["data"]
                    stamp = stamps[str(call["args"].get("text"))] = {"event": time.perf_counter()}
                    body = json.dumps({"result": call["args"]}).encode()
                    stamp["posted"] = time.perf_counter()
                    status, answer = await answers.request(
                        b"POST", f"/v1/tool-calls/{call['id']}/result".encode(), post_headers, body,
                        60.0, 1 << 20)
                    assert status == 200, answer
                    stamp["answered"] = time.perf_counter()
    finally:
        await answers.aclose()


def _build(sock: Path, token: str, tmp: Path) -> tuple[str, Path]:
    """The canvas: card c1 offering echo, agent a1, an arrow; the card's and agent's tokens."""
    (tmp / "ws").mkdir()
    with httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://ag",
                      headers={"Authorization": f"Bearer {token}"}, timeout=60) as op:
        for path, body in (("/v1/workspaces", {"id": "w1", "folder": str(tmp / "ws"),
                                               "settings": {"denial_log_limit": 1_000_000,
                                                            "tool_call_limit": 1_000_000}}),
                           ("/v1/packages", {"manifest": MANIFEST}),
                           ("/v1/packages/bench.mcp/install", {"grant": "required"}),
                           ("/v1/workspaces/w1/nodes", {"id": "c1", "type": "card",
                                                        "package": "bench.mcp"}),
                           ("/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"}),
                           ("/v1/workspaces/w1/arrows", {"id": "e1", "from": "a1",
                                                         "to": "c1"})):
            r = op.post(path, json=body)
            assert r.status_code in (200, 201), r.text
        card = op.post("/v1/tokens", json={"principal": "card:c1"}).json()["token"]
        agent = op.post("/v1/tokens", json={"principal": "agent:a1"}).json()["token"]
    token_file = tmp / "a1.token"
    token_file.write_text(agent)
    token_file.chmod(0o600)
    return card, token_file


def _mcp_pid(session_args: list[str]) -> int:
    """The pid of the ``arrowgate mcp`` process started with these arguments."""
    needle = "\0".join(session_args).encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "cmdline").read_bytes():
                    return int(entry.name)
            except OSError:
                continue
    raise RuntimeError("the arrowgate mcp process was not found")


def _python(tree: Path) -> str:
    """The interpreter for ``tree``: its own ``.venv`` when it has one (its pinned
    dependencies, as installed from that checkout), else this one."""
    own = tree / ".venv" / "bin" / "python"
    return str(own) if tree != ROOT and own.is_file() else sys.executable


@asynccontextmanager
async def _arrowgate(path: _Path, tree: Path, tmp: Path,
                     profile: Path | None = None, counted: Path | None = None,
                     lean_card: bool = False) -> AsyncIterator[None]:
    """``arrowgate serve`` and ``arrowgate mcp`` from source tree ``tree``, and the card.

    With ``profile``, both run under cProfile, writing ``serve.prof`` and
    ``mcp.prof`` there when they end (the CPU figures then include its cost).
    With ``counted``, both run under callgrind (`_callgrind`), writing there.
    """
    tmp.mkdir()
    sock = tmp / "s" / "serve.sock"
    python = _python(tree)

    def profiled(name: str) -> list[str]:
        return [] if profile is None else ["-m", "cProfile", "-o", str(profile / f"{name}.prof")]

    def wrapped(name: str) -> list[str]:
        return [python] if counted is None else [*_callgrind(counted / name), python]

    proc = subprocess.Popen([*wrapped("serve"), *profiled("serve"), "-m", "engine.app.cli",
                             "serve", "--db", str(tmp / "svc.db"), "--socket", str(sock)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            cwd=tree, env=_counted_env() if counted is not None else None)
    card_task: asyncio.Task[None] | None = None
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        assert proc.stdout.readline().strip() == "ready"
        card_token, token_file = _build(sock, (tmp / "svc.db.operator-token").read_text()
                                        .strip(), tmp)
        ready = asyncio.Event()
        card_task = asyncio.create_task(_card(str(sock), card_token, ready, path.stamps,
                                              lean_card))
        await asyncio.wait_for(ready.wait(), 60)
        # As a module from the tree (not the installed script), so that the tree's
        # own code answers.
        args = ["-m", "engine.app.cli", "mcp", "--agent", "a1", "--service", str(sock),
                "--token-file", str(token_file)]
        if counted is not None:
            # Nothing on a timer while counting: no tool-list poll (POLL), and a
            # first wait long enough for valgrind's pace (one request a call, as
            # measured untimed). Both are module constants, set before it runs.
            args[:2] = ["-c", _COUNTED_MCP]
        command, *rest = [*wrapped("mcp"), *profiled("mcp"), *args]
        async with _session(command, rest, tree,
                            _counted_env() if counted is not None else None) as session:
            path.session = session
            path.pids = {"serve": proc.pid, "mcp": _mcp_pid(args[2:])}
            yield
    finally:
        if card_task is not None:
            card_task.cancel()
        proc.terminate()
        proc.communicate(timeout=120)


#: ``arrowgate mcp`` as counted: its cli with nothing on a timer (see `_arrowgate`).
_COUNTED_MCP = ("import sys; import engine.app.mcp as m; m.POLL = 3600.0; m.FIRST_WAIT = 60.0; "
                "from engine.app.cli import main; sys.exit(main(sys.argv[1:]))")


def _callgrind(out: Path) -> list[str]:
    """The command prefix that runs a process under callgrind, writing ``out``."""
    return ["setarch", "-R", "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]


def _counted_env() -> dict[str, str]:
    """The environment of a counted process: this one's, with a fixed hash seed."""
    return {**os.environ, "PYTHONHASHSEED": "0"}


def _callgrind_control(pid: int, command: str) -> None:
    done = subprocess.run(["callgrind_control", command, str(pid)], capture_output=True,
                          text=True, timeout=120)
    if done.returncode != 0 or "OK." not in done.stdout:
        raise SystemExit(f"bench.mcp: callgrind_control {command} {pid} failed: "
                         f"{done.stdout}{done.stderr}")


def _summary(out: Path) -> int:
    """The instructions in callgrind's first dump of ``out`` (``out.1``)."""
    for line in Path(f"{out}.1").read_text().splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise SystemExit(f"bench.mcp: no summary in {out}.1")


async def instructions(tmp: Path, calls: int, against: Path | None = None,
                       keep: Path | None = None) -> dict[str, Any]:
    """Machine instructions per tool call of each process (see the module docstring);
    callgrind's files are copied to ``keep`` when given (``callgrind_annotate`` reads them)."""
    import shutil

    for tool in ("valgrind", "callgrind_control", "setarch"):
        if shutil.which(tool) is None:
            raise SystemExit(f"bench.mcp: --instructions needs {tool}")
    plain_script = tmp / "plain.py"
    plain_script.write_text(PLAIN)
    figures: dict[str, Any] = {"calls": calls}
    trees = [("arrowgate", ROOT)] + ([("against", against)] if against is not None else [])
    for name, tree in trees:
        counted = tmp / f"cg-{name}"
        counted.mkdir()
        path = _Path(name)
        async with _arrowgate(path, tree, tmp / name, counted=counted):
            await path.calls(10, measure=False)  # warm-up (and the client's own list)
            for pid in path.pids.values():
                _callgrind_control(pid, "-z")
            await path.calls(calls, measure=False)
            for pid in path.pids.values():
                _callgrind_control(pid, "-d")
        for proc in path.pids:
            figures[f"{name}_{proc}_instructions"] = _summary(counted / proc) / calls
    counted = tmp / "cg-plain"
    counted.mkdir()
    plain = _Path("plain")
    async with _session("setarch", [*_callgrind(counted / "plain")[1:], sys.executable,
                                    str(plain_script)], ROOT, _counted_env()) as p:
        plain.session = p
        pid = _mcp_pid([str(plain_script)])
        await plain.calls(10, measure=False)
        _callgrind_control(pid, "-z")
        await plain.calls(calls, measure=False)
        _callgrind_control(pid, "-d")
    figures["plain_instructions"] = _summary(counted / "plain") / calls
    if keep is not None:
        for name in ("arrowgate", "against", "plain"):
            if (tmp / f"cg-{name}").is_dir():
                shutil.copytree(tmp / f"cg-{name}", keep / name, dirs_exist_ok=True)
    figures["load"] = os.getloadavg()[0]
    return figures


async def run(tmp: Path, smoke: bool, against: Path | None = None,
              profile: Path | None = None, lean_card: bool = False) -> dict[str, Any]:
    """Every path, in alternating rounds; returns the figures."""
    rounds, per_round = (2, 5) if smoke else (10, 100)
    plain_script = tmp / "plain.py"
    plain_script.write_text(PLAIN)
    plain, through = _Path("plain"), _Path("arrowgate")
    paths = [plain, through]
    other = _Path("against") if against is not None else None
    async with _session(sys.executable, [str(plain_script)], ROOT) as p, \
            _arrowgate(through, ROOT, tmp / "arrowgate", profile, lean_card=lean_card), \
            AsyncExitStack() as stack:
        plain.session = p
        plain.pids = {"plain": _mcp_pid([str(plain_script)])}
        if other is not None and against is not None:
            await stack.enter_async_context(_arrowgate(other, against, tmp / "against",
                                                       lean_card=lean_card))
            paths.append(other)
        for path in paths:
            await path.calls(10, measure=False)  # warm-up
        for r in range(rounds):
            # The two trees take turns in the slot after the plain server: that
            # slot was seen to be favoured by up to ~0.5 ms (BENCHMARKS.md, round 6).
            for path in paths if r % 2 == 0 else [paths[0], *reversed(paths[1:])]:
                await path.calls(per_round)

    def ms(values: list[float], q: float | None = None) -> float:
        return (statistics.median(values) if q is None else _pct(values, q)) * 1000

    figures: dict[str, Any] = {
        "smoke": smoke, "calls": len(plain.times),
        "plain_ms": ms(plain.times), "plain_p99_ms": ms(plain.times, 0.99),
        "arrowgate_ms": ms(through.times), "arrowgate_p99_ms": ms(through.times, 0.99),
        "overhead_ms": ms(through.times) - ms(plain.times),
        "overhead_p99_ms": ms(through.times, 0.99) - ms(plain.times, 0.99)}
    for path in paths:
        if path.hops:
            for i, hop in enumerate(("to_card", "card", "back")):
                figures[f"{path.name}_{hop}_ms"] = ms([h[i] for h in path.hops])
        if path.posts:
            figures[f"{path.name}_answer_post_ms"] = ms(path.posts)
        for proc, seconds in path.cpu.items():
            figures[f"{path.name}_cpu_{proc}_ms"] = seconds * 1000 / len(path.times)
    if other is not None:
        figures.update({
            "against_ms": ms(other.times), "against_p99_ms": ms(other.times, 0.99),
            "against_overhead_ms": ms(other.times) - ms(plain.times),
            "against_overhead_p99_ms": ms(other.times, 0.99) - ms(plain.times, 0.99)})
    figures["load"] = os.getloadavg()[0]
    return figures


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures (``--json FILE`` also writes them)."""
    parser = argparse.ArgumentParser(prog="python -m bench.mcp")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (for the tests)")
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--dir", default="/tmp",
                        help="where the databases live (/dev/shm: fsync costs nothing)")
    parser.add_argument("--against", type=Path,
                        help="another source tree of arrowgate, measured in the same rounds")
    parser.add_argument("--instructions", action="store_true",
                        help="count machine instructions per tool call under callgrind "
                             "(serve, mcp, the plain server) instead of timing")
    parser.add_argument("--calls", type=int, default=200,
                        help="tool calls counted (with --instructions)")
    parser.add_argument("--keep", type=Path,
                        help="a folder: keep callgrind's files there (with --instructions)")
    parser.add_argument("--profile", type=Path,
                        help="a folder: run this tree's serve and mcp under cProfile, writing "
                             "serve.prof and mcp.prof there")
    parser.add_argument("--lean-card", action="store_true",
                        help="the card answers on UnixConnections (arrowgate mcp's own "
                             "client) instead of httpcore's: the card's share of the overhead")
    args = parser.parse_args(argv)
    if args.against is not None and not (args.against / "engine" / "app" / "cli.py").is_file():
        parser.error(f"--against {args.against}: not an arrowgate source tree")
    if args.lean_card and args.instructions:
        parser.error("--lean-card times the card's client; --instructions counts the "
                     "server processes only")
    with tempfile.TemporaryDirectory(prefix="agm", dir=args.dir) as tmp:
        if args.instructions:
            figures = asyncio.run(instructions(Path(tmp), 5 if args.smoke else args.calls,
                                               args.against, args.keep))
        else:
            figures = asyncio.run(run(Path(tmp), args.smoke, args.against, args.profile,
                                      args.lean_card))
    for key, value in figures.items():
        print(f"{key:>30}: {value:.3f}" if isinstance(value, float) else f"{key:>30}: {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
