"""Soak: the PostgreSQL server restarted, or frozen (SIGSTOP, as a partition), while two
``arrowgate serve`` and an engine of this process share a database and cards keep calling.

Run by hand from the repository's root (PostgreSQL installed; as root the server runs as
the ``postgres`` user)::

    python -m bench.pg_outage_soak --fault restart --rounds 5
    python -m bench.pg_outage_soak --fault freeze --hold 40 --rounds 2

Each round: a new database on a server of the soak's own, the walk's canvas
(`tests.durability.walk`), two servers, eight callers (prompts and clipboard writes of two
cards on each server) for ``--seconds``, the fault now and then. Then every call answered
200 must have exactly its one log row, with its outcome; a call refused (503) whose row
is there anyway is counted apart (its COMMIT's answer was lost, SPEC §10: never told
done); each program's log verifies. It prints the answers by status, the longest any
caller waited and what the callers were told; the exit code is the number of rounds
that broke a rule. Nothing is timed against a bound.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg

from engine.core.errors import StoreFailed
from tests.conftest import open_store
from tests.durability.programs import InProcess, Served, close_all, start_serve
from tests.durability.walk import Walk
from tests.pg.servers import pg_restart
from tests.pgfixtures import with_database
from tests.pgserver import PgServer, temp_folder


def _server_pids(server: PgServer) -> list[int]:
    """The postmaster's process id and its children's."""
    master = int((server.data / "postmaster.pid").read_text().split()[0])
    children = subprocess.run(["pgrep", "-P", str(master)], capture_output=True,
                              text=True, check=False).stdout.split()
    return [master, *map(int, children)]


async def _fault(server: PgServer, fault: str, hold: float) -> None:
    if fault == "restart":
        await asyncio.to_thread(server.stop, remove=False)
        await asyncio.to_thread(pg_restart, server)
        return
    pids = _server_pids(server)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        await asyncio.sleep(hold)
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


async def _verify(program: Any) -> bool:
    """The program's verification; asked again once when its connection was lost to the
    last fault (it fails closed, and the next one reconnects)."""
    try:
        return bool(await program.verify())
    except StoreFailed:
        return bool(await program.verify())


async def soak_round(server: PgServer, n: int, args: argparse.Namespace, folder: Path
                     ) -> list[str]:
    """One round; what broke a rule (nothing: [])."""
    with psycopg.connect(server.dsn, autocommit=True) as admin:
        admin.execute(f"create database soak{n}")
    where = with_database(server.dsn, f"soak{n}")
    engine = InProcess("engine-1", open_store(where))
    programs: list[Any] = [engine]
    answers: list[tuple[str, object, str, float]] = []
    try:
        serves = [start_serve(f"serve-{i + 1}", where, folder) for i in range(2)]
        programs += serves
        await Walk(programs, n).setup(folder)
        for s in serves:
            for card in ("c1", "c2"):
                s.tokens[f"card:{card}"] = await engine.mint(f"card:{card}")
        started = time.monotonic()

        async def caller(s: Served, card: str, kind: str) -> None:
            k = 0
            while time.monotonic() - started < args.seconds:
                k += 1
                text = f"{s.name}.{card}.{kind}.{k}"
                body: dict[str, Any] = {"card": card, "args": {"text": text}}
                body |= ({"call": "agents.prompt", "target": "a1"} if kind == "prompt"
                         else {"call": "clipboard.copyText"})
                asked = time.monotonic()
                try:
                    r = await s.client(s.tokens[f"card:{card}"][1]).post(
                        "/v1/calls", json=body, timeout=300)
                    told = r.json().get("outcome") if r.status_code == 200 else \
                        str(r.json().get("detail", ""))[:70]
                    status: object = r.status_code
                except Exception as exc:  # the soak's finding, told below
                    status, told = type(exc).__name__, str(exc)[:70]
                answers.append((text, status, str(told), time.monotonic() - asked))
                await asyncio.sleep(0.02)

        async def faults() -> None:
            while time.monotonic() - started + args.every < args.seconds:
                await asyncio.sleep(args.every)
                await _fault(server, args.fault, args.hold)

        await asyncio.gather(faults(), *(caller(s, c, k) for s in serves
                                          for c in ("c1", "c2") for k in ("prompt", "clip")))
        with psycopg.connect(where) as conn:
            rows: dict[str, list[str]] = {}
            for payload, outcome in conn.execute("select payload, outcome from log"):
                rows.setdefault(str(payload), []).append(str(outcome))
        broken = [f"{text} answered {told}; its rows {rows.get(text)}"
                  for text, status, told, _ in answers
                  if status == 200 and rows.get(text) != [told]]
        written = sum(1 for text, status, _, _ in answers if status != 200 and text in rows)
        broken += [f"{p.name}: the log does not verify" for p in programs
                   if not await _verify(p)]
        print(f"round {n}: answers {dict(Counter(str(a[1]) for a in answers))}, longest wait "
              f"{max(a[3] for a in answers):.1f} s, refused but written {written}")
        refusals = Counter(re.sub(r"[0-9.]+ s", "N s", a[2])[:66] for a in answers
                           if a[1] != 200)
        for told, count in refusals.most_common(4):
            print(f"    {count:5} x {told}")
        return broken
    finally:
        await close_all(programs)


def main(argv: list[str] | None = None) -> int:
    """Soak each round; the number of rounds that broke a rule (at most 100)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fault", choices=("restart", "freeze"), default="restart")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0, help="callers' time a round")
    parser.add_argument("--every", type=float, default=5.0, help="seconds between faults")
    parser.add_argument("--hold", type=float, default=20.0, help="a freeze's seconds")
    args = parser.parse_args(argv)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="ag-outage-", dir="/tmp") as tmp:
        server = PgServer(temp_folder())  # open to the server's user, as the tests'
        server.start()
        try:
            for n in range(1, args.rounds + 1):
                folder = Path(tmp) / f"r{n}"
                folder.mkdir()
                broken = asyncio.run(soak_round(server, n, args, folder))
                for line in broken[:20]:
                    print("   ", line)
                failed += bool(broken)
        finally:
            server.stop()
    return min(failed, 100)


if __name__ == "__main__":
    sys.exit(main())
