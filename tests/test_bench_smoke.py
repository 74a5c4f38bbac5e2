"""The benchmark suite runs in smoke mode (tiny sizes) so it cannot rot; no timing asserted."""

from __future__ import annotations

import json


def test_bench_smoke(tmp_path, capsys) -> None:
    """Every engine answers the same way as the floor on the smoke worlds."""
    from bench.bench import main

    out = tmp_path / "bench.json"
    assert main(["--smoke", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert set(results) == {"50", "200", "flatness", "durable", "replay"}
    assert all(results[size]["mismatch"] == 0 for size in ("50", "200"))
    durable = results["durable"]
    assert durable["refused_rows"] == 100 and results["replay"]["steps"] > 0
    assert {"refused_rows_per_s_1", "refused_rows_per_s_10", "refused_rows_per_s_frozen",
            "accepted_prompts_per_s"} <= set(durable)


def test_tui_log_bench_smoke(tmp_path) -> None:
    """The 1,000,000-row log benchmark runs on a small log (figures are not asserted)."""
    from bench.tui_log import main

    out = tmp_path / "tui.json"
    assert main(["--rows", "3000", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["rows"] == 3000 and figures["card_filter_rows"] > 0
