"""Soak: several programs on one store walked at random against one model, for as long
as asked (`tests.durability.walk`; the suite walks a few seeds briefly).

Run by hand from the repository's root, on a SQLite file (a new one per seed) or on a
PostgreSQL server (a new database per seed)::

    python -m bench.several_programs --seeds 1-50 --steps 400
    python -m bench.several_programs --pg postgresql:///postgres?host=/tmp/x --servers 2
    python -m bench.several_programs --cli 1 --steps 150   # scripts' write verbs too

It prints one line per seed (steps, seconds) and, for a seed whose programs answered
what the model does not allow, the mismatch and the steps before it; the exit code is
the number of failed seeds (at most 100). Nothing is timed against a bound.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import traceback
import uuid
from pathlib import Path

from tests.conftest import open_store
from tests.durability.programs import (
    CommandLine,
    InProcess,
    Program,
    close_all,
    start_serve,
)
from tests.durability.walk import Mismatch, walk


def _seeds(text: str) -> list[int]:
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def _fresh_pg(url: str) -> tuple[str, str]:
    """A new database on the server of ``url``: its URL and name."""
    import psycopg

    name = f"arrowgate_soak_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(f'create database "{name}"')
    base, sep, query = url.partition("?")
    return f"{base.rsplit('/', 1)[0]}/{name}{sep}{query}", name


def _drop_pg(url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as con:
        con.execute(f'drop database if exists "{name}" with (force)')


async def soak_one(seed: int, steps: int, args: argparse.Namespace, folder: Path) -> str:
    """One seed's walk; '' when every answer was the model's, else the mismatch."""
    dropped: tuple[str, str] | None = None
    if args.pg:
        where, name = _fresh_pg(args.pg)
        dropped = (args.pg, name)
    else:
        where = str(folder / "a.db")
    programs: list[Program] = []
    try:
        for i in range(args.engines):
            programs.append(InProcess(f"engine-{i + 1}", open_store(where)))
        for i in range(args.servers):
            programs.append(start_serve(f"serve-{i + 1}", where, folder))
        for i in range(args.cli):
            programs.append(CommandLine(f"cli-{i + 1}", where, folder))
        await walk(programs, folder, seed, steps,
                   log=(lambda line: print("   ", line)) if args.verbose else None)
        return ""
    except Mismatch as exc:
        return str(exc)
    except Exception:  # any other failure is the seed's finding too; the soak goes on
        return traceback.format_exc()
    finally:
        await close_all(programs)
        if dropped is not None:
            _drop_pg(*dropped)


def main(argv: list[str] | None = None) -> int:
    """Walk each seed; the number of seeds that failed (at most 100)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1-20", help="a seed or a range, e.g. 1-50")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--engines", type=int, default=2, help="in-process engines (>= 1)")
    parser.add_argument("--servers", type=int, default=1, help="arrowgate serve processes")
    parser.add_argument("--cli", type=int, default=0,
                        help="the command line's write verbs as programs (SQLite only; each "
                             "verb a process: slow)")
    parser.add_argument("--pg", metavar="URL", help="a PostgreSQL server (default: SQLite)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every step")
    args = parser.parse_args(argv)
    if args.engines < 1:
        parser.error("--engines must be at least 1: the canvas is made by one")
    if args.cli and args.pg:
        parser.error("--cli runs the write verbs on the SQLite file (--db): not with --pg")
    failed = 0
    for seed in _seeds(args.seeds):
        with tempfile.TemporaryDirectory(prefix="ag-soak-") as tmp:
            started = time.monotonic()
            problem = asyncio.run(soak_one(seed, args.steps, args, Path(tmp)))
            took = time.monotonic() - started
        print(f"seed {seed}: {args.steps} steps, {took:.1f} s"
              + (f"\n{problem}" if problem else ": as the model says"), flush=True)
        failed += bool(problem)
    return min(failed, 100)


if __name__ == "__main__":
    sys.exit(main())
