"""The demo's canvas, packages and replies are files in demos/demo/ (issue 14)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import engine
from engine.app import demo
from engine.app.cli import main
from engine.app.common import CliError
from engine.core.manifest import parse_manifest

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_folder_is_found_beside_the_engine_package() -> None:
    """A clone and an editable install both have demos/ next to engine/."""
    assert demo.DEMO_FOLDER == Path(engine.__file__).resolve().parents[1] / "demos" / "demo"
    assert demo.DEMO_FOLDER == ROOT / "demos" / "demo"


def test_the_demo_files_hold_the_demo_canvas() -> None:
    """The nodes, arrows, packages and replies the narrative relies on."""
    files = demo.load_demo()
    assert [n["id"] for n in files.nodes] == ["standup", "reader", "claude", "codex", "yolo",
                                              "shell", "notes"]
    assert [a["id"] for a in files.arrows] == ["standup-claude", "standup-shell", "standup-yolo",
                                               "standup-notes", "reader-shell",
                                               "shell-exit-reader"]
    port = files.arrows[-1]
    assert (port["from"], port["from_port"], port["to"], port["to_port"]) == \
        ("shell", "exit", "reader", "code")
    assert next(n for n in files.nodes if n["id"] == "yolo")["dangerous"] is True
    assert list(files.packages) == ["demo.standup", "demo.reader"]
    for name, (raw, digests) in files.packages.items():
        assert parse_manifest(raw).name == name
        assert set(digests) == {"manifest.json", "index.js"}
    assert parse_manifest(files.packages["demo.standup"][0]).tool("summarize_standup")
    assert files.replies["claude"]["Summarise yesterday's commits."].startswith("Yesterday:")


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "demo"
    shutil.copytree(demo.DEMO_FOLDER, folder)
    return folder


@pytest.mark.parametrize("breakage, named", [
    (lambda f: (f / "canvas.json").unlink(), "canvas.json: missing"),
    (lambda f: (f / "canvas.json").write_text("{"), "canvas.json"),
    (lambda f: (f / "canvas.json").write_text('{"nodes": [{"id": "x"}]}'),
     "not a JSON Canvas 1.0 document"),
    (lambda f: shutil.rmtree(f / "packages" / "demo.reader"),
     "demo.reader/manifest.json: $: cannot read manifest.json"),
    (lambda f: (f / "packages" / "demo.reader" / "manifest.json").write_text(
        json.dumps({"name": "demo.reader", "version": "1.0.0", "permissions": {"x.y": {}}})),
     "demo.reader/manifest.json: $.permissions"),
    (lambda f: (f / "packages" / "demo.reader" / "manifest.json").write_text(
        json.dumps({"name": "demo.other", "version": "1.0.0", "permissions": {}})),
     "names 'demo.other', not 'demo.reader'"),
    (lambda f: (f / "replies.json").write_text('{"claude": ["hi"]}'),
     "replies.json: an object"),
], ids=["no-canvas", "bad-json", "not-json-canvas", "no-package", "bad-manifest", "wrong-name",
        "bad-replies"])
def test_broken_demo_files_are_named(tmp_path: Path, breakage, named: str) -> None:
    """Each broken file is named, with what is wrong with it."""
    folder = _copy(tmp_path)
    breakage(folder)
    with pytest.raises(CliError) as err:
        demo.load_demo(folder)
    assert named in err.value.message and "the demo's files are not usable" in err.value.message


def test_a_missing_demos_folder_fails_before_any_database_is_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`arrowgate demo` without demos/ says so, exits 2 and creates nothing."""
    monkeypatch.setattr(demo, "DEMO_FOLDER", tmp_path / "nowhere")
    db, folder = tmp_path / "app.db", tmp_path / "proj"
    assert main(["demo", "--no-tui", "--db", str(db), "--folder", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'nowhere' / 'canvas.json'}: missing" in err
    assert "pip install -e ." in err
    assert not db.exists() and not folder.exists()


def test_the_demos_readme_names_every_demo() -> None:
    """demos/README.md has a section for each folder in demos/."""
    readme = (ROOT / "demos" / "README.md").read_text()
    for folder in sorted(p.name for p in (ROOT / "demos").iterdir() if p.is_dir()):
        assert f"## `{folder}/`" in readme, folder
