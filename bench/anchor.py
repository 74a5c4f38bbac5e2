"""The anchor file's cost per commit, alone (issue 19): ``python -m bench.anchor``.

Each commit is the two writes `engine.store.transactions.Transactions.flush`
makes: the pending state before COMMIT, the committed state after (at the
loop's next idle turn since round 9; alone here). The figure is the median (and
90th percentile) time of the pair, on a file in a temporary directory of
``--dir`` (the disk under test).

``--instructions`` counts instead (callgrind, no timing): machine instructions
per `AnchorFile.write`, over ``--commits`` pairs inside `itertools.starmap`
(callgrind collects only there), after five uncounted pairs that create the
file. ``--callgrind-out FILE`` keeps callgrind's profile (for
``callgrind_annotate``: per C function; the Python functions show as the
interpreter's).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import starmap
from pathlib import Path

from engine.store.anchor import Anchor, AnchorFile, AnchorState


def measure(folder: Path, commits: int) -> dict[str, float]:
    """Time ``commits`` pending + committed write pairs; milliseconds."""
    anchor = AnchorFile(folder / "bench.db.anchor")
    prev: Anchor | None = None
    times: list[float] = []
    try:
        for seq in range(1, commits + 6):
            row = Anchor(seq, f"{seq:064x}")
            t = time.perf_counter()
            anchor.write(AnchorState(prev, row))
            anchor.write(AnchorState(row))
            times.append(time.perf_counter() - t)
            prev = row
    finally:
        # The AnchorFile from before issue 19 held nothing open and had no
        # close: this benchmark also measures that one, for before/after.
        close = getattr(anchor, "close", None)
        if close is not None:
            close()
    times = sorted(times[5:])  # the first creates the file
    return {"commits": commits, "median_ms": statistics.median(times) * 1000,
            "p90_ms": times[int(len(times) * 0.9)] * 1000}


def counted_steps(folder: Path, commits: int) -> None:
    """What `instructions` runs under callgrind: five pairs that make the file, then
    ``commits`` pairs inside `itertools.starmap` (all states made beforehand)."""
    anchor = AnchorFile(folder / "bench.db.anchor")
    prev: Anchor | None = None
    for seq in range(1, 6):
        row = Anchor(seq, f"{seq:064x}")
        anchor.write(AnchorState(prev, row))
        anchor.write(AnchorState(row))
        prev = row
    states: list[tuple[AnchorState]] = []
    for seq in range(6, 6 + commits):
        row = Anchor(seq, f"{seq:064x}")
        states += [(AnchorState(prev, row),), (AnchorState(row),)]
        prev = row
    list(starmap(anchor.write, states))
    anchor.close()


def instructions(folder: Path, commits: int, keep: str | None = None) -> float:
    """Machine instructions per `AnchorFile.write` (callgrind, in a child process)."""
    if shutil.which("valgrind") is None:
        raise SystemExit("bench.anchor: --instructions needs valgrind")
    with tempfile.TemporaryDirectory() as tmp:
        out = keep or f"{tmp}/out"
        command = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--dump-instr=no",
                   "--toggle-collect=starmap_next", f"--callgrind-out-file={out}",
                   sys.executable, "-m", "bench.anchor", "--counted-steps", str(folder),
                   "--commits", str(commits)]
        # No address-space randomisation and a fixed hash seed: counts that repeat.
        if shutil.which("setarch"):
            command = ["setarch", "-R", *command]
        env = {**os.environ, "PYTHONHASHSEED": "0",
               "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False,
                              cwd=Path(__file__).resolve().parents[1])
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"bench.anchor: callgrind failed:\n{done.stderr[-2000:]}")
    return int(found.group(1)) / (2 * commits)


def main(argv: list[str] | None = None) -> int:
    """Run the measurement and print it (``--json FILE`` also writes it)."""
    parser = argparse.ArgumentParser(prog="python -m bench.anchor")
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--dir", default=None, help="where the file goes (default: the "
                        "system's temporary directory)")
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions per write (callgrind) instead of timing")
    parser.add_argument("--callgrind-out", help="with --instructions: keep callgrind's profile")
    parser.add_argument("--counted-steps", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.commits < 1:
        parser.error("--commits must be at least 1")
    if args.counted_steps:  # what --instructions runs under callgrind
        counted_steps(Path(args.counted_steps), args.commits)
        return 0
    if args.instructions:
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            per_write = instructions(Path(tmp), args.commits, args.callgrind_out)
        print(f"anchor: {per_write:,.0f} instructions a write (callgrind; pending and "
              f"committed alternately, {args.commits} commits)")
        if args.json:
            Path(args.json).write_text(json.dumps({"commits": args.commits,
                                                   "instructions_per_write": per_write}) + "\n")
        return 0
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        figures = measure(Path(tmp), args.commits)
    print(f"anchor: {figures['median_ms']:.3f} ms a commit (median; p90 "
          f"{figures['p90_ms']:.3f} ms) over {args.commits} commits")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
