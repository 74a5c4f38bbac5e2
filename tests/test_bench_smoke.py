"""The benchmark suite runs in smoke mode (tiny sizes) so it cannot rot; no timing asserted."""

from __future__ import annotations

import json


def test_bench_smoke(tmp_path, capsys) -> None:
    """Every engine answers the same way as the floor on the smoke worlds."""
    from bench.bench import main

    out = tmp_path / "bench.json"
    assert main(["--smoke", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert set(results) == {"50", "200"}
    assert all(row["mismatch"] == 0 for row in results.values())
