"""A corpus of bad paths, each with its exact refusal (SPEC §8.3)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine import Engine, World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

R, W = "fs.readText", "fs.writeText"
ESC, SEC, PROT, ABS, BAD = "path-escape", "secret-path", "protected-path", "absolute-path", "bad-path"
S, NF = "SCOPE_REFUSED", "NOT_FOUND"

CORPUS: list[tuple[str, str, str, str]] = [
    # Traversal forms.
    (R, "..", S, ESC), (R, "../x", S, ESC), (R, "../../etc/passwd", S, ESC),
    (R, "a/../../b", S, ESC), (R, "src/..", S, ESC), (R, "./../x", S, ESC),
    (R, "src/./../..", S, ESC), (R, "a/b/../../../c", S, ESC), (R, "src/../README.md", S, ESC),
    (R, "..//x", S, ESC), (R, "./././..", S, ESC), (W, "../evil.sh", S, ESC),
    # Dots and spaces alone: '..' where trailing dots and spaces are dropped (SMB, FAT).
    (R, "...", S, ESC), (R, ".. /x", S, ESC), (W, "src/. ./evil.sh", S, ESC),
    # Encoded and Unicode look-alikes are names, not traversal: not found.
    (R, "%2e%2e/etc/passwd", NF, "missing"), (R, "%2E%2E%2Fx", NF, "missing"),
    (R, "\u2025/x", NF, "missing"), (R, "\uff0e\uff0e/x", NF, "missing"),
    (R, "..\u2215x", NF, "missing"), (R, ".\u2024/x", NF, "missing"),
    (R, "src/\u2024\u2024/x", NF, "missing"),
    # Absolute, drive and UNC paths.
    (R, "/etc/passwd", S, ABS), (R, "/", S, ABS), (R, "//server/share", S, ABS),
    (R, "C:/Windows/win.ini", S, ABS), (R, "c:", S, ABS), (R, "C:\\Windows", S, ABS),
    (R, "\\\\server\\share", S, ABS), (W, "/tmp/x", S, ABS), (R, "z:relative", S, ABS),
    # Backslashes, NUL bytes, over-long names.
    (R, "src\\app.py", S, BAD), (R, "..\\..\\x", S, BAD), (R, "a\0b", S, BAD), (R, "\0", S, BAD),
    (R, ".env\0.txt", S, BAD), (R, "src/app.py\0", S, BAD), (R, "x" * 256, S, BAD),
    (R, "a/" + "y" * 300, S, BAD), (R, "d/" * 2100, S, BAD),
    # Secret names in every position and case.
    (R, ".env", S, SEC), (R, ".ENV", S, SEC), (R, ".env.local", S, SEC),
    (R, ".Env.Production", S, SEC), (R, "sub/.env", S, SEC), (R, "sub/deep/.env.x", S, SEC),
    (R, "credentials", S, SEC), (R, "Credentials.json", S, SEC), (R, "sub/credentials.txt", S, SEC),
    (R, "aws-credentials", S, SEC), (R, "AWS-CREDENTIALS", S, SEC), (R, "server.pem", S, SEC),
    (R, "keys/SERVER.PEM", S, SEC), (R, "tls.key", S, SEC), (R, "cert.PFX", S, SEC),
    (R, "id_rsa", S, SEC), (R, "id_rsa.pub", S, SEC), (R, "ID_ED25519", S, SEC),
    (R, "id_ecdsa_sk", S, SEC), (R, "id_dsa", S, SEC), (R, ".ssh", S, SEC),
    (R, ".ssh/config", S, SEC), (R, ".SSH/known_hosts", S, SEC), (R, "home/.ssh/x", S, SEC),
    (R, ".env/inner", S, SEC), (W, ".env", S, SEC), ("fs.stat", "keys/server.pem", S, SEC),
    ("fs.list", ".ssh", S, SEC), (R, "to-secret", S, SEC), (R, "to-ssh/config", S, SEC),
    # Protected paths refuse writes.
    (W, ".git/config", S, PROT), (W, ".git", S, PROT), (W, "sub/.git/HEAD", S, PROT),
    (W, ".GIT/config", S, PROT), (W, ".claude/settings.json", S, PROT), (W, ".mcp.json", S, PROT),
    (W, "CLAUDE.md", S, PROT), (W, "claude.md", S, PROT), (W, "AGENTS.md", S, PROT),
    (W, "GEMINI.md", S, PROT), (W, ".cursor/rules", S, PROT), (W, ".codex/config", S, PROT),
    (W, ".vscode/settings.json", S, PROT), (W, ".idea/x.xml", S, PROT),
    (W, ".github/workflows/ci.yml", S, PROT), (W, ".GitHub/Workflows/x.yml", S, PROT),
    (W, ".gitlab-ci.yml", S, PROT), (W, ".circleci/config.yml", S, PROT),
    (W, "to-git/config", S, PROT), ("fs.mkdir", ".git/hooks2", S, PROT),
    ("fs.trash", ".git/config", S, PROT), ("fs.writeBytes", "CLAUDE.md", S, PROT),
    # Link tricks.
    (R, "outside", S, ESC), (R, "outside/etc/passwd", S, ESC), (R, "abs", S, ESC),
    (R, "abs/passwd", S, ESC), (R, "loop1", S, ESC), (R, "self-loop", S, ESC),
    (R, "chain1", S, ESC), (R, "src/up2", S, ESC), (W, "outside/new.txt", S, ESC),
    (R, "dangling", NF, "missing"), (R, "dangling/x", NF, "missing"),
    (R, "README.md/x", NF, "missing"), (R, "missing/file", NF, "missing"),
]


@pytest.fixture
async def engine(make_engine, tmp_path: Path) -> Engine:
    ws = tmp_path / "ws"
    for rel, text in {"README.md": "hello", "src/app.py": "print(1)", ".env": "TOKEN=x",
                      "keys/server.pem": "---", ".git/config": "[core]", "CLAUDE.md": "rules",
                      ".ssh/config": "Host *"}.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (tmp_path / "secret.txt").write_text("OUTSIDE")
    links = {"outside": "../..", "abs": "/etc", "loop1": "loop2", "loop2": "loop1",
             "self-loop": "self-loop", "chain1": "chain2", "chain2": "src/../..",
             "src/up2": "../../secret.txt", "to-secret": ".env", "to-ssh": ".ssh",
             "to-git": ".git", "dangling": "nothing-here", "inside": "src/app.py"}
    for rel, target in links.items():
        os.symlink(target, ws / rel)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data",
                                                                trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


def test_corpus_is_large_enough() -> None:
    """At least 80 bad paths."""
    assert len(CORPUS) >= 80


@pytest.mark.parametrize("call, path, code, reason", CORPUS,
                         ids=[f"{i}-{c}-{p[:20]!r}" for i, (c, p, _, _) in enumerate(CORPUS)])
async def test_bad_path(engine: Engine, call: str, path: str, code: str, reason: str) -> None:
    """The exact refusal; nothing outside the folder is ever read or written."""
    args: dict = {"path": path}
    if call == "fs.writeText":
        args["text"] = "evil"
    elif call == "fs.writeBytes":
        args["base64"] = "ZXZpbA=="
    d = await engine.call("c1", call, None, args)
    assert (d.code, d.reason) == (code, reason), d.message
    assert d.value is None


async def test_inside_link_and_denylist_off(engine: Engine) -> None:
    """A link inside works; an operator may turn the denylist off for the workspace."""
    assert (await engine.call("c1", R, None, {"path": "inside"})).value == "print(1)"
    from engine import ApprovalRefused

    with pytest.raises(ApprovalRefused):
        await engine.set_settings("w1", {"secret_denylist": False}, by="card:c1")
    await engine.set_settings("w1", {"secret_denylist": False})
    assert (await engine.call("c1", R, None, {"path": ".env"})).value == "TOKEN=x"
    assert ".env" in (await engine.call("c1", "fs.list", None, {"path": "."})).value
