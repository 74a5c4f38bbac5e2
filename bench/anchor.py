"""The anchor file's cost per commit, alone (issue 19): ``python -m bench.anchor``.

Each commit is the two writes `engine.store.transactions.Transactions.flush`
makes: the pending state before COMMIT, the committed state after. The figure is
the median (and 90th percentile) time of the pair, on a file in a temporary
directory of ``--dir`` (the disk under test).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
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


def main(argv: list[str] | None = None) -> int:
    """Run the measurement and print it (``--json FILE`` also writes it)."""
    parser = argparse.ArgumentParser(prog="python -m bench.anchor")
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--dir", default=None, help="where the file goes (default: the "
                        "system's temporary directory)")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    if args.commits < 1:
        parser.error("--commits must be at least 1")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        figures = measure(Path(tmp), args.commits)
    print(f"anchor: {figures['median_ms']:.3f} ms a commit (median; p90 "
          f"{figures['p90_ms']:.3f} ms) over {args.commits} commits")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
