"""The benchmark suite runs in smoke mode (tiny sizes) so it cannot rot; no timing asserted."""

from __future__ import annotations

import json
import shutil

import pytest


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


def test_tui_canvas_bench_smoke(tmp_path) -> None:
    """The 100,000-node canvas benchmark runs on a small canvas (figures are not asserted)."""
    from bench.tui_canvas import main

    out = tmp_path / "canvas.json"
    assert main(["--nodes", "300", "--rest", "0.01", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())["300"]
    assert {"first_paint_s", "key_ms_held_mean", "key_ms_rested_worst", "search_key_ms_worst",
            "reach_of_a_card_ready_s", "map_open_ms"} <= set(figures)


def test_service_bench_smoke(tmp_path) -> None:
    """The HTTP service benchmark runs end to end on tiny sizes (figures are not asserted)."""
    from bench.service import main

    out = tmp_path / "service.json"
    assert main(["--smoke", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert {"api_call_ms", "http_call_ms", "health_ms", "calls_per_s", "health_per_s",
            "calls_p99_ms", "batch_decisions_per_s", "sse_ms_median"} <= set(figures)
    assert figures["sse_events"] == 10 and figures["calls_per_s"] > 0


@pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("callgrind_control") is None,
                    reason="needs valgrind")
def test_service_bench_instructions_smoke(tmp_path) -> None:
    """``bench.service --instructions`` counts the server's and the API's instructions."""
    from bench.service import main

    out = tmp_path / "instructions.json"
    assert main(["--instructions", "5", "--dir", str(tmp_path), "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    # A call does the engine's work besides a health check's HTTP: more instructions.
    assert figures["instructions_call"] > figures["instructions_health"] > 0
    assert figures["instructions_call"] > figures["instructions_api_call"] > 0


def test_mcp_bench_smoke(tmp_path) -> None:
    """The MCP benchmark (plain server against arrowgate mcp → serve → card) runs end to
    end on tiny sizes (figures are not asserted)."""
    from bench.mcp import main

    out = tmp_path / "mcp.json"
    assert main(["--smoke", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["calls"] == 10
    assert {"plain_ms", "plain_p99_ms", "arrowgate_ms", "arrowgate_p99_ms", "overhead_ms",
            "overhead_p99_ms"} <= set(figures)


def test_pg_bench_smoke(tmp_path, pg_server: str) -> None:
    """bench.pg runs both stores with 1 and 2 engine processes (figures are not asserted)."""
    from bench.pg import main

    out = tmp_path / "pg.json"
    assert main(["--smoke", "--server", pg_server, "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert [(r["processes"], r["store"]) for r in figures["rows"]] == [
        (1, "sqlite"), (1, "postgresql"), (2, "sqlite"), (2, "postgresql")]
    assert all(r["decisions_per_s"] > 0 and r["accepted_per_s"] > 0 for r in figures["rows"])
    assert len(figures["load_before"]) == 3 and figures["postgres_version"] != "?"


def test_anchor_bench_smoke(tmp_path) -> None:
    """bench.anchor times the anchor's writes per commit (figures are not asserted)."""
    from bench.anchor import main

    out = tmp_path / "anchor.json"
    assert main(["--commits", "5", "--dir", str(tmp_path), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["commits"] == 5

def test_opening_bench_smoke(tmp_path) -> None:
    """The open-time benchmark builds a world and opens it with a tree's own code."""
    from pathlib import Path

    from bench.opening import main

    tree = Path(__file__).resolve().parents[1]
    out = tmp_path / "opening.json"
    assert main([str(tmp_path / "w.db"), "--build", "300", "--runs", "1", "--trees", str(tree),
                 "--json", str(out)]) == 0
    figures = json.loads(out.read_text())[str(tree)]
    assert figures["nodes"] == 300 and figures["memory_mb"] > 0
    assert figures["engine"] == str(tree / "engine" / "__init__.py")


def test_direct_build_gives_the_same_tables(tmp_path) -> None:
    """A world built with its package rows written directly holds the same state."""
    import sqlite3

    from bench.bench import WorldSpec, build_store

    w = WorldSpec.build(400)
    build_store(w, tmp_path / "a" / "bench.db")
    build_store(w, tmp_path / "b" / "bench.db", direct=True)
    a, b = (sqlite3.connect(tmp_path / x / "bench.db") for x in ("a", "b"))
    for sql in ("select * from packages order by name",
                "select package, permission, by from grants order by package, permission",
                "select id, workspace, type, data from nodes order by id",
                "select * from arrows order by id", "select id, settings from workspaces"):
        assert a.execute(sql).fetchall() == b.execute(sql).fetchall(), sql
    a.close()
    b.close()

def test_verify_bench_smoke(tmp_path) -> None:
    """The 1,000,000-row verification benchmark runs on a small log (figures are not
    asserted); one process and several agree, and the log verifies."""
    from bench.verify import main

    out = tmp_path / "verify.json"
    assert main(["--rows", "3000", "--repeat", "1", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["rows"] == 3000 and figures["ok"] is True
    assert {"one_process_s", "parallel_s", "log_verify_s", "load"} <= set(figures)


def test_cold_bench_smoke(tmp_path, capsys) -> None:
    """bench.cold checks every answer against the floor, cold, then warm side by side."""
    from bench.cold import main

    worlds = tmp_path / "worlds"
    assert main(["--sizes", "50", "--queries", "300", "--rounds", "1",
                 "--worlds", str(worlds)]) == 0
    assert main(["--flat", "--steps", "--sizes", "50", "200", "--queries", "300",
                 "--rounds", "2", "--worlds", str(worlds)]) == 0
    out = capsys.readouterr().out
    assert "| 50 |" in out and "| 200 |" in out and "64 distinct queries" in out
    assert "| nodes | warm µs, alone | / alone at 50 (flatness) |" in out
    assert "| nodes | call | hash | lookup | get | warm |" in out
    assert (worlds / "bench-50" / "bench.db").exists()  # kept: the second run reused it


def test_mcp_floor_bench_smoke(tmp_path) -> None:
    """The MCP floor's parts (hand-off, syncs, the engine alone) run on tiny sizes."""
    from bench.mcp_floor import main

    out = tmp_path / "floor.json"
    assert main(["--smoke", "--dir", str(tmp_path), "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert {"handoff_us", "fsync_ms", "fdatasync_p90_ms", "engine_ms", "engine_cpu_ms"} <= \
        set(figures)
    assert figures["engine_ms"] > 0


def test_cold_bench_makes_the_decisions_callgrind_counts(tmp_path) -> None:
    """bench.cold --decisions (what --instructions runs under callgrind) makes each kind."""
    from bench.cold import KINDS, main

    worlds = tmp_path / "worlds"
    for kind in KINDS:
        assert main(["--decisions", kind, "50", "--sizes", "50", "--queries", "1100",
                     "--worlds", str(worlds)]) == 0
    with pytest.raises(SystemExit, match="unknown kind"):
        main(["--decisions", "lukewarm", "50", "--sizes", "50", "--queries", "1100",
              "--worlds", str(worlds)])
    with pytest.raises(SystemExit, match="at most 100 decisions"):
        main(["--decisions", "cold", "101", "--sizes", "50", "--queries", "1100",
              "--worlds", str(worlds)])


def test_tui_grants_history_bench_smoke(tmp_path) -> None:
    """The grants screen's long-history benchmark runs on a short history, in this
    process (figures are not asserted)."""
    from bench.tui_grants_history import main

    out = tmp_path / "grants.json"
    assert main(["--entries", "300", "--here", "--json", str(out)]) == 0
    (figures,) = json.loads(out.read_text())
    assert figures["entries"] == 300 and figures["rows_shown"] == 200
    assert {"open_to_history_shown_s", "screen_read_s", "screen_read_peak_mb"} <= set(figures)


def test_event_streams_bench_smoke(tmp_path) -> None:
    """The many-event-streams benchmark runs on a few streams (figures are not asserted)."""
    from bench.event_streams import main

    out = tmp_path / "streams.json"
    assert main(["--streams", "40", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["streams"] == 40 and figures["call_status"] == 200
