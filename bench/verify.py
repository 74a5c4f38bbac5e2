"""Benchmark: `arrowgate log verify` of a 1,000,000-row arrow log (issue 19).

Run by hand (not a timed test; these machines are shared and noisy)::

    .venv/bin/python -m bench.verify                    # 1,000,000 rows, built once
    .venv/bin/python -m bench.verify --rows 3000        # what the smoke test runs
    .venv/bin/python -m bench.verify --db /tmp/big.db   # keep the log between runs

It builds a database whose log is a valid hash chain (`bench.tui_log.build`;
kept when ``--db`` names a file that exists), then times, ``--repeat`` times
each and alternating: the verification in one process (``processes=1``) and
in spans on several (`engine.store.log.verify_file_in_parallel`, what
``log verify`` does from `PARALLEL_ROWS` rows on). Both must say the same.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from engine.store.log import Verification, verify_file_in_parallel
from engine.store.logindex import verify_path


def _span(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        row = conn.execute("select min(rowid), max(rowid) from log").fetchone()
    finally:
        conn.close()
    return (int(row[0]), int(row[1])) if row and row[0] is not None else (1, 0)


def measure(path: Path, repeat: int) -> dict[str, object]:
    """Seconds of each way of verifying, best and all, and what each found."""
    lo, hi = _span(path)
    one: list[float] = []
    many: list[float] = []
    cli: list[float] = []
    found: dict[str, Verification] = {}
    for _ in range(repeat):
        t = time.perf_counter()
        found["one"] = verify_file_in_parallel(str(path), lo, hi, processes=1)
        one.append(time.perf_counter() - t)
        t = time.perf_counter()
        found["many"] = verify_file_in_parallel(str(path), lo, hi)
        many.append(time.perf_counter() - t)
        t = time.perf_counter()
        found["cli"] = verify_path(path)  # `log verify --db`: chain, anchor, consent history
        cli.append(time.perf_counter() - t)
    if len({(v.ok, v.rows, v.first_bad, v.problem) for v in found.values()}) != 1:
        raise SystemExit(f"the ways of verifying disagree: {found}")
    return {"rows": hi - lo + 1, "ok": found["one"].ok, "processes": os.cpu_count(),
            "one_process_s": min(one), "parallel_s": min(many), "log_verify_s": min(cli),
            "one_process_all_s": one, "parallel_all_s": many, "log_verify_all_s": cli,
            "load": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    """Build (or reuse) the log, time its verification, print (and write) the figures."""
    parser = argparse.ArgumentParser(prog="bench.verify", description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--db", type=Path, help="the database to build once and keep")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    from bench.tui_log import build

    with tempfile.TemporaryDirectory(prefix="arrowgate-verify-") as tmp:
        path = args.db or Path(tmp) / "log.db"
        if not path.exists():
            t = time.perf_counter()
            build(path, args.rows)
            print(f"built {args.rows:,} rows in {time.perf_counter() - t:.1f} s",
                  file=sys.stderr)
        figures = measure(path, max(1, args.repeat))
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text)
    return 0 if figures["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
