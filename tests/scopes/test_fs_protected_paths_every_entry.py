"""Every protected path of SPEC §8.3's long list is refused to each writing call, at the
top and nested, and a folder holding one cannot be trashed; reading it stays allowed.

Rule (SPEC §8.3): "``fs.write`` also refuses protected paths (``protected-path``)"; "a
folder that contains a protected or secret path cannot be trashed
(``protected-path``)"; the list: ``.git/`` anywhere; ``.claude/``, ``CLAUDE.md``,
``CLAUDE.local.md``, ``.mcp.json``, ``AGENTS.md``, ``AGENT.md``, ``GEMINI.md``,
``.gemini/``, ``.cursor/``, ``.cursorrules``, ``.codex/``, ``.clinerules``,
``.windsurf/``, ``.windsurfrules``, ``.roo/``, ``.kiro/``, ``.goosehints``,
``.aider*``, ``.continue/``, ``.github/copilot-instructions.md``,
``.github/instructions/``, ``.github/prompts/``; ``.vscode/``, ``.idea/``; ``.envrc``,
``.devcontainer/``, ``.husky/``, ``.pre-commit-config.yaml``, ``.git-hooks/``,
``.github/`` (workflows and actions), ``.gitlab-ci.yml``, ``.circleci/``,
``.buildkite/``, ``Jenkinsfile``, ``.travis.yml``, ``azure-pipelines.yml``; and the
app's own data.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

# (entry, is a folder): each as the spec lists it.
ENTRIES = [
    (".git", True), (".claude", True), ("CLAUDE.md", False), ("CLAUDE.local.md", False),
    (".mcp.json", False), ("AGENTS.md", False), ("AGENT.md", False), ("GEMINI.md", False),
    (".gemini", True), (".cursor", True), (".cursorrules", False), (".codex", True),
    (".clinerules", False), (".windsurf", True), (".windsurfrules", False), (".roo", True),
    (".kiro", True), (".goosehints", False), (".aider", False), (".aider.conf.yml", False),
    (".aiderignore", False), (".aider.chat.history.md", False), (".continue", True),
    (".github/copilot-instructions.md", False), (".github/instructions", True),
    (".github/prompts", True), (".vscode", True), (".idea", True), (".envrc", False),
    (".devcontainer", True), (".husky", True), (".pre-commit-config.yaml", False),
    (".git-hooks", True), (".github/workflows", True), (".github/actions", True),
    (".github", True), (".gitlab-ci.yml", False), (".circleci", True), (".buildkite", True),
    ("Jenkinsfile", False), (".travis.yml", False), ("azure-pipelines.yml", False),
    (".git", False),  # a worktree's or submodule's .git file
]
WRITES: list[tuple[str, dict[str, str]]] = [
    ("fs.writeText", {"text": "evil"}), ("fs.writeBytes", {"base64": "ZXZpbA=="}),
    ("fs.mkdir", {}), ("fs.trash", {}),
]


def _shouted(entry: str) -> str:
    """The entry in another case (names compare case-insensitively)."""
    return entry.upper() if entry.islower() else entry.swapcase()


async def _engine(make_engine: Any, ws: Path, data: Path) -> Engine:
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=data, trash=ws.parent / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


@pytest.mark.parametrize("entry, folder", ENTRIES, ids=[f"{e}{'/' if f else ''}"
                                                        for e, f in ENTRIES])
async def test_a_protected_entry_is_refused_to_every_write(make_engine: Any, tmp_path: Path,
                                                           entry: str, folder: bool) -> None:
    """Writing, writing bytes, making and trashing it — at the top, nested, in another
    case, a new name inside it — are protected-path; a folder holding it is not trashed."""
    # GIVEN the entry in the workspace, at the top and nested, with a file in it if a folder
    ws = tmp_path / "ws"
    places = [entry, f"pkg/deeper/{entry}"]
    for place in places:
        inner = ws / place / "x.txt" if folder else ws / place
        inner.parent.mkdir(parents=True, exist_ok=True)
        inner.write_text("person's")
    engine = await _engine(make_engine, ws, tmp_path / "data")
    made = sorted(str(p.relative_to(ws)) for p in ws.rglob("*"))
    targets = [*places, _shouted(entry), f"new/{entry}"]
    if folder:
        targets += [f"{p}/x.txt" for p in places] + [f"{entry}/new.txt", f"{entry}/sub/n"]
    # WHEN the card makes each writing call on each
    for call, extra in WRITES:
        for path in targets:
            d = await engine.call("c1", call, None, {"path": path, **extra})
            # THEN each is refused as protected
            assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), (call, path,
                                                                                d.message)
    # AND a folder holding it cannot be trashed, at any depth
    for holder in ("pkg", "pkg/deeper"):
        d = await engine.call("c1", "fs.trash", None, {"path": holder})
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), (holder, d.message)
    # AND nothing changed; reading it is still allowed
    assert sorted(str(p.relative_to(ws)) for p in ws.rglob("*")) == made
    read = f"{entry}/x.txt" if folder else entry
    d = await engine.call("c1", "fs.readBytes", None, {"path": read})
    assert d.value == base64.b64encode(b"person's").decode(), d.message


async def test_the_apps_own_data_is_protected(make_engine: Any, tmp_path: Path) -> None:
    """A workspace inside the app's data folder: nothing there is written, made or trashed;
    the data folder's own name (.arrowgate) is refused to writes anywhere."""
    data = tmp_path / "data"
    ws = data / "inside"
    ws.mkdir(parents=True)
    (ws / "f.txt").write_text("data")
    engine = await _engine(make_engine, ws, data)
    for call, extra in WRITES:
        for path in ("f.txt", "new.txt"):
            d = await engine.call("c1", call, None, {"path": path, **extra})
            assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), (call, path)
    assert os.listdir(ws) == ["f.txt"]
    other = tmp_path / "ws"
    other.mkdir()
    await engine.create_workspace("w2", other)
    await engine.add_node({"id": "c2", "type": "card", "package": "acme.fs"}, workspace="w2")
    d = await engine.call("c2", "fs.writeText", None, {"path": ".arrowgate/x", "text": "x"})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), d.message
