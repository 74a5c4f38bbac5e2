"""An import draws nothing before the person has seen its review and said yes.

SPEC §4.5: drawing an arrow is consent, given by a person; an import draws arrows. The
engine's `preview_import` checks a file as `import_canvas` would and returns its review
(every arrow it would draw, by its ends) without writing anything; `import_canvas`
takes the SHA-256 of the review the person saw and refuses another as ``stale``.
`arrowgate import` shows the review, asks, and imports only on a yes (or with
``--review-sha256`` naming the review seen, as ``--dry-run`` prints it).

(Found in round 23: `arrowgate import` imported first and printed the review after, so
the arrows a file held were drawn before anyone saw them, and a "no" was impossible.)
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from engine import ApprovalRefused, Engine
from engine.app.cli import main
from engine.effects import operator


def _doc(*edges: tuple[str, str, str]) -> dict[str, Any]:
    box = {"x": 0, "y": 0, "width": 10, "height": 10}
    return {"nodes": [{"id": "a1", "type": "text", "text": "a", **box},
                      {"id": "a2", "type": "text", "text": "b", **box},
                      {"id": "n1", "type": "text", "text": "note", **box}],
            "edges": [{"id": i, "fromNode": f, "toNode": t} for i, f, t in edges],
            "arrowgate": {"version": 1, "nodes": {"a1": {"type": "agent"},
                                                  "a2": {"type": "agent"},
                                                  "n1": {"type": "note"}}}}


@pytest.mark.postgres
async def test_a_preview_draws_nothing_and_lists_every_arrow(open_engine: Any,
                                                             tmp_path: Path) -> None:
    engine: Engine = open_engine()
    review = await engine.preview_import("w", tmp_path, _doc(("e1", "a1", "n1")))
    assert any("e1" in line and "a1" in line and "n1" in line for line in review.lines)
    for one in (engine, open_engine()):
        assert "w" not in one.state.workspaces and one.state.canvas.arrow("e1") is None
        assert not [h for h in one.history.entries() if h["action"] == "canvas.import"]


@pytest.mark.postgres
async def test_an_import_naming_another_review_is_stale(open_engine: Any,
                                                        tmp_path: Path) -> None:
    engine: Engine = open_engine()
    seen = await engine.preview_import("w", tmp_path, _doc(("e1", "a1", "n1")))
    wider = _doc(("e1", "a1", "n1"), ("e2", "a1", "a2"))
    with pytest.raises(ApprovalRefused) as refused:
        await engine.import_canvas("w", tmp_path, wider, review_sha256=seen.sha256)
    assert refused.value.reason == "stale"
    for one in (engine, open_engine()):
        assert "w" not in one.state.workspaces and one.state.canvas.arrow("e1") is None
    await engine.import_canvas("w", tmp_path, _doc(("e1", "a1", "n1")),
                               review_sha256=seen.sha256)
    assert engine.state.canvas.arrow("e1") is not None


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
         argv: list[str], stdin: str) -> tuple[int, str, str]:
    monkeypatch.setattr(operator, "operator_check", lambda: operator.OperatorCheck(True))
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _arrows(db: Path) -> int:
    engine = Engine.open(db)
    try:
        return len(engine.state.canvas.arrows())
    finally:
        engine.close()


def test_the_command_shows_the_review_and_a_no_draws_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "board.canvas"
    path.write_text(json.dumps(_doc(("e1", "a1", "n1"))))
    db = tmp_path / "a.db"
    code, out, err = _run(monkeypatch, capsys, ["import", str(path), "--db", str(db)], "n\n")
    assert code == 1 and "e1" in out and "[y/N]" in out, (out, err)
    assert out.index("e1") < out.index("[y/N]")  # the review comes before the question
    assert _arrows(db) == 0
    code, out, err = _run(monkeypatch, capsys, ["import", str(path), "--db", str(db)], "y\n")
    assert code == 0, err
    assert out.index("e1") < out.index("[y/N]") and _arrows(db) == 1


def test_a_dry_run_prints_the_review_and_its_digest_which_imports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "board.canvas"
    path.write_text(json.dumps(_doc(("e1", "a1", "n1"))))
    db = tmp_path / "a.db"
    code, out, err = _run(monkeypatch, capsys, ["import", str(path), "--db", str(db),
                                                "--dry-run", "--json"], "")
    assert code == 0, err
    digest = json.loads(out)["review_sha256"]
    assert _arrows(db) == 0
    code, out, err = _run(monkeypatch, capsys, ["import", str(path), "--db", str(db),
                                                "--review-sha256", "0" * 64], "")
    assert code == 1 and "stale" in err and _arrows(db) == 0
    code, out, err = _run(monkeypatch, capsys, ["import", str(path), "--db", str(db),
                                                "--review-sha256", digest], "")
    assert code == 0 and _arrows(db) == 1, err


def test_a_dry_run_never_imports_even_with_a_review_digest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--dry-run`` beside ``--review-sha256`` is refused (exit 2), nothing imported: a
    person asking for a dry run never gets an import. (Found in round 23, attacking the
    fix: the digest skipped the dry run and imported.)"""
    path = tmp_path / "board.canvas"
    path.write_text(json.dumps(_doc(("e1", "a1", "n1"))))
    db = tmp_path / "a.db"
    code, out, err = _run(monkeypatch, capsys, ["import", str(path), "--db", str(db),
                                                "--dry-run", "--json"], "")
    digest = json.loads(out)["review_sha256"]
    code, out, err = _run(monkeypatch, capsys, ["import", str(path), "--db", str(db),
                                                "--dry-run", "--review-sha256", digest], "y\n")
    assert code == 2 and "not allowed with" in err and _arrows(db) == 0
