"""Issue 15, file items: FIFOs and caps (2), trash by descriptor (6), watches (7),
the protected and secret lists (8) and special filesystems (16)."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import unicodedata
from pathlib import Path

import pytest

import engine.effects.files as files_module
from engine import Engine, World
from engine.effects.files import WATCH_LIMIT, ConfinedFiles
from engine.effects.folders import special_filesystem
from tests.conftest import polls

from ..conftest import manifest, offer_install


async def _engine(make_engine, tmp_path: Path, perms: dict, *, ws: Path | None = None,
                  events: list | None = None) -> Engine:
    folder = ws or tmp_path / "ws"
    if ws is None:
        folder.mkdir(exist_ok=True)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data",
                                                                trash=tmp_path / "trash")),
                         sink=(events.append if events is not None else None))
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.fs", perms))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


# -- item 2: only regular files, never a blocking open, off the loop, capped -------------

async def test_a_fifo_is_refused_without_waiting_on_it(make_engine, tmp_path) -> None:
    """fs.readText on a FIFO is not-regular at once; nothing ever opens it for a blocking read."""
    # GIVEN a FIFO in the workspace, and a safety valve: should anything open
    # it for a blocking read, a writer comes along later and the read returns
    # "leak" (so a regression fails instead of hanging the suite).
    engine = await _engine(make_engine, tmp_path, {"fs.write": {}})
    fifo = tmp_path / "ws" / "pipe"
    os.mkfifo(fifo)

    stop = threading.Event()

    def valve() -> None:
        for _ in range(30):  # a minute at most
            if stop.wait(2.0):
                return
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue  # nobody is reading it: nothing to release
            os.write(fd, b"leak")
            os.close(fd)

    timer = threading.Thread(target=valve, daemon=True)
    timer.start()
    try:
        # WHEN a card reads, reads bytes, writes or stats it
        read = await engine.call("c1", "fs.readText", None, {"path": "pipe"})
        raw = await engine.call("c1", "fs.readBytes", None, {"path": "pipe"})
        write = await engine.call("c1", "fs.writeText", None, {"path": "pipe", "text": "x"})
        info = await engine.call("c1", "fs.stat", None, {"path": "pipe"})
    finally:
        stop.set()
    # THEN every read and write is refused as not-regular, and stat says "other"
    for d in (read, raw, write):
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "not-regular"), d.message
    assert info.value["type"] == "other"
    assert os.path.exists(fifo) and not os.path.isfile(fifo)


async def test_a_socket_is_refused(make_engine, tmp_path) -> None:
    """A Unix socket in the workspace is not-regular too."""
    engine = await _engine(make_engine, tmp_path, {"fs.read": {}})
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(tmp_path / "ws" / "sock"))
        d = await engine.call("c1", "fs.readText", None, {"path": "sock"})
    finally:
        sock.close()
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "not-regular")


async def test_only_a_folder_is_listed_or_watched(make_engine, tmp_path) -> None:
    """fs.list and fs.watch of a FIFO or socket are not-regular and of a file a wrong
    argument; neither says NOT_FOUND of what exists, and nothing waits on the FIFO.

    (Found in round 15: both answered NOT_FOUND "missing" for a FIFO and for a file.)
    """
    engine = await _engine(make_engine, tmp_path, {"fs.read": {}})
    os.mkfifo(tmp_path / "ws" / "pipe")
    (tmp_path / "ws" / "notes.txt").write_text("x")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(tmp_path / "ws" / "sock"))
        for call in ("fs.list", "fs.watch"):
            for path in ("pipe", "sock"):
                d = await asyncio.wait_for(engine.call("c1", call, None, {"path": path}), 10)
                assert (d.code, d.reason) == ("SCOPE_REFUSED", "not-regular"), (call, path)
            d = await engine.call("c1", call, None, {"path": "notes.txt"})
            assert (d.code, d.reason) == ("INVALID_ARGUMENT", "not-a-directory"), call
            d = await engine.call("c1", call, None, {"path": "gone"})
            assert (d.code, d.reason) == ("NOT_FOUND", "missing"), call
            d = await engine.call("c1", call, None, {"path": "notes.txt/inner"})
            assert (d.code, d.reason) == ("NOT_FOUND", "missing"), call
    finally:
        sock.close()


async def test_file_work_does_not_stall_other_calls(make_engine, tmp_path, monkeypatch) -> None:
    """While one read is stuck in the file system, other calls are still answered."""
    engine = await _engine(make_engine, tmp_path, {"fs.read": {}})
    (tmp_path / "ws" / "slow.txt").write_text("slow")
    (tmp_path / "ws" / "fast.txt").write_text("fast")
    gate, entered = threading.Event(), threading.Event()
    real = files_module._read_regular

    def stuck(root_fd, full, max_bytes):
        if full == ("slow.txt",):
            entered.set()
            gate.wait(30)  # released below; the bound only keeps a failure finite
        return real(root_fd, full, max_bytes)

    monkeypatch.setattr(files_module, "_read_regular", stuck)
    slow = asyncio.ensure_future(engine.call("c1", "fs.readText", None, {"path": "slow.txt"}))
    try:
        while not entered.is_set():
            await asyncio.sleep(0.01)
        # WHEN the slow read is stuck in its thread, another card call completes
        fast = await engine.call("c1", "fs.readText", None, {"path": "fast.txt"})
        listing = await engine.call("c1", "fs.list", None, {"path": "."})
        assert fast.value == "fast" and "slow.txt" in listing.value
        assert not slow.done()
    finally:
        gate.set()
    assert (await slow).value == "slow"


async def test_fs_max_bytes_caps_reads_and_writes(make_engine, tmp_path) -> None:
    """A file over fs_max_bytes is too-large to read or write; one at the cap is fine."""
    engine = await _engine(make_engine, tmp_path, {"fs.write": {}})
    await engine.set_settings("w1", {"fs_max_bytes": 10})
    (tmp_path / "ws" / "ten.txt").write_text("x" * 10)
    (tmp_path / "ws" / "eleven.txt").write_text("x" * 11)
    assert (await engine.call("c1", "fs.readText", None, {"path": "ten.txt"})).value == "x" * 10
    for call, args in (("fs.readText", {"path": "eleven.txt"}),
                       ("fs.readBytes", {"path": "eleven.txt"}),
                       ("fs.writeText", {"path": "new.txt", "text": "y" * 11}),
                       ("fs.writeBytes", {"path": "new.txt", "base64": "eHh4eHh4eHh4eHg="})):
        d = await engine.call("c1", call, None, args)
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "too-large"), (call, d.message)
    assert not (tmp_path / "ws" / "new.txt").exists()
    assert (await engine.call("c1", "fs.writeText", None,
                              {"path": "new.txt", "text": "y" * 10})).outcome == "ok"


# -- item 6: trash relative to the opened parent --------------------------------------

async def test_trash_swap_for_a_link_touches_nothing_outside(make_engine, tmp_path,
                                                             monkeypatch) -> None:
    """A folder swapped for a link between the check and the move: refused, outside intact."""
    # GIVEN a folder in the workspace and a folder outside it with a file
    engine = await _engine(make_engine, tmp_path, {"fs.write": {}})
    ws = tmp_path / "ws"
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_text("obj")
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("KEEP")
    real_scan = files_module.scan_tree

    def scan_then_swap(fd, prefix, guarded):
        real_scan(fd, prefix, guarded)
        # The race, made deterministic: after the check, before the move.
        os.rename(ws / "build", ws / "build.old")
        os.symlink(str(outside), ws / "build")

    monkeypatch.setattr(files_module, "scan_tree", scan_then_swap)
    # WHEN the card trashes the folder
    d = await engine.call("c1", "fs.trash", None, {"path": "build"})
    # THEN it is refused, the outside folder is untouched, the link is back
    # where it was and nothing stays in the trash
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "path-escape"), d.message
    assert (outside / "keep.txt").read_text() == "KEEP"
    assert (ws / "build").is_symlink()
    assert not os.listdir(tmp_path / "trash" / "files")
    assert not os.listdir(tmp_path / "trash" / "info")


async def test_trash_refuses_folders_holding_protected_or_secret_paths(make_engine,
                                                                       tmp_path) -> None:
    """A folder with a .git, a CLAUDE.md or a .env anywhere inside cannot be trashed."""
    engine = await _engine(make_engine, tmp_path, {"fs.write": {}})
    ws = tmp_path / "ws"
    for folder, inner in (("proj", ".git/config"), ("docs", "deep/er/CLAUDE.md"),
                          ("conf", "x/.env.local")):
        (ws / folder / inner).parent.mkdir(parents=True)
        (ws / folder / inner).write_text("x")
        d = await engine.call("c1", "fs.trash", None, {"path": folder})
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), d.message
        assert (ws / folder / inner).exists()
    # A plain folder goes, whole and recoverable, with its trashinfo.
    (ws / "plain" / "sub").mkdir(parents=True)
    (ws / "plain" / "sub" / "a.txt").write_text("a")
    assert (await engine.call("c1", "fs.trash", None, {"path": "plain"})).outcome == "ok"
    assert (tmp_path / "trash" / "files" / "plain" / "sub" / "a.txt").read_text() == "a"
    assert (tmp_path / "trash" / "info" / "plain.trashinfo").exists()
    assert not (ws / "plain").exists()


async def test_trash_of_a_link_to_outside_moves_the_link_only(make_engine, tmp_path) -> None:
    """A link to an outside folder is trashed as a link; the folder is never touched
    (round 21: trashing a name trashes that entry, `test_fs_trash_moves_the_link_itself`)."""
    engine = await _engine(make_engine, tmp_path, {"fs.write": {}})
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "f").write_text("OUT")
    os.symlink(str(tmp_path / "out"), tmp_path / "ws" / "link")
    d = await engine.call("c1", "fs.trash", None, {"path": "link"})
    assert d.outcome == "ok", d.message
    assert not os.path.lexists(tmp_path / "ws" / "link")
    assert (tmp_path / "out" / "f").read_text() == "OUT"


# -- item 7: watches ------------------------------------------------------------------

async def _changes(events: list, want: str) -> list[str]:
    changed: list[str] = []
    for _ in polls():
        changed = [e.data["path"] for e in events if e.type == "fs.changed"]
        if want in changed:
            break
        await asyncio.sleep(0.05)
    return changed


async def test_watch_never_follows_links_out(make_engine, tmp_path) -> None:
    """fs.watch "." reports a change inside, never one behind an absolute link to outside."""
    events: list = []
    (tmp_path / "ws").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(str(outside), tmp_path / "ws" / "abs-link")
    os.symlink("../outside", tmp_path / "ws" / "rel-link")
    engine = await _engine(make_engine, tmp_path, {"fs.read": {}}, events=events)
    d = await engine.call("c1", "fs.watch", None, {"path": "."})
    assert d.outcome == "ok", d.message
    # (no pause: fs.watch answers only once its folder is watched, treewatch.arm)
    (outside / "leak.txt").write_text("outside")
    await asyncio.sleep(0.3)
    (tmp_path / "ws" / "inside.txt").write_text("inside")
    changed = await _changes(events, "inside.txt")
    assert "inside.txt" in changed
    assert not [p for p in changed if "leak" in p or "link" in p], changed
    engine.close()


async def test_at_most_eight_watches_per_card(make_engine, tmp_path) -> None:
    """The ninth watch of a card is CARD_LIMIT; ids are never reused; close ends them all."""
    engine = await _engine(make_engine, tmp_path, {"fs.read": {}})
    ids = []
    for _ in range(WATCH_LIMIT):
        d = await engine.call("c1", "fs.watch", None, {"path": "."})
        assert d.outcome == "ok", d.message
        ids.append(d.value["watch"])
    d = await engine.call("c1", "fs.watch", None, {"path": "."})
    assert (d.code, d.reason) == ("CARD_LIMIT", "watch-limit")
    assert len(set(ids)) == WATCH_LIMIT
    fs = engine.world.fs
    assert isinstance(fs, ConfinedFiles) and len(fs.watches) == WATCH_LIMIT
    tasks = list(fs.watches.values())
    engine.close()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert not fs.watches


async def test_a_watch_that_fails_ends_quietly(make_engine, tmp_path, monkeypatch) -> None:
    """A watcher that raises ends its watch with an event; no task exception is left over."""
    events: list = []
    engine = await _engine(make_engine, tmp_path, {"fs.read": {}}, events=events)

    async def broken(*args, **kwargs):
        raise OSError(24, "inotify instance limit reached")
        yield  # pragma: no cover - makes this an async generator

    monkeypatch.setattr(files_module, "watch_tree", broken)
    d = await engine.call("c1", "fs.watch", None, {"path": "."})
    fs = engine.world.fs
    assert isinstance(fs, ConfinedFiles)
    for _ in polls():
        if not fs.watches:
            break
        await asyncio.sleep(0.02)
    ended = [e for e in events if e.type == "fs.watch.ended"]
    assert ended and ended[0].data == {"watch": d.value["watch"], "workspace": "w1",
                                       "package": "acme.fs", "reason": "OSError"}
    engine.close()


# -- item 8: the protected and secret lists -------------------------------------------

PROTECTED = ["CLAUDE.local.md", ".clinerules", ".clinerules/rules.md", ".windsurf/rules.md",
             ".github/copilot-instructions.md", ".github/instructions/x.md",
             ".github/prompts/p.md", ".github/actions/a/action.yml", ".envrc",
             ".devcontainer/devcontainer.json", ".husky/pre-commit", ".pre-commit-config.yaml",
             ".git-hooks/pre-push", ".buildkite/pipeline.yml", "Jenkinsfile", ".travis.yml",
             "azure-pipelines.yml", "AGENT.md", ".gemini/settings.json", ".roo/rules.md",
             ".kiro/steering.md", ".goosehints", ".aider.conf.yml", ".aiderignore",
             ".continue/config.json", "sub/.git/HEAD", "pkg/CLAUDE.md", "ClAuDe.Md",
             "JENKINSFILE", ".Github/workflows/ci.yml", unicodedata.normalize("NFD", "Agents.md")]
SECRETS = [".netrc", ".git-credentials", ".npmrc", ".pypirc", "key.ppk", "cert.p12",
           ".docker/config.json", ".kube/config", "infra/terraform.tfstate",
           "terraform.tfstate.backup", ".aws/credentials", ".aws/config", ".gnupg/pubring.kbx",
           ".NETRC", ".\u212aube/config", "deploy/.Npmrc"]


@pytest.mark.parametrize("path", PROTECTED)
async def test_protected_paths_are_refused_to_writes(make_engine, tmp_path, path) -> None:
    """Every SPEC §8.3 protected name, in any case and normal form, is protected-path."""
    engine = await _engine(make_engine, tmp_path, {"fs.write": {}})
    d = await engine.call("c1", "fs.writeText", None, {"path": path, "text": "x"})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), d.message
    assert not os.listdir(tmp_path / "ws")


@pytest.mark.parametrize("path", SECRETS)
async def test_secret_names_are_refused_and_unlisted(make_engine, tmp_path, path) -> None:
    """Every SPEC §8.3 secret name is secret-path to read and left out of listings."""
    engine = await _engine(make_engine, tmp_path, {"fs.read": {}})
    target = tmp_path / "ws" / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("TOKEN")
    d = await engine.call("c1", "fs.readText", None, {"path": path})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "secret-path"), d.message
    folder = str(Path(path).parent)
    listing = await engine.call("c1", "fs.list", None, {"path": folder})
    assert target.name not in (listing.value or []), listing.message


# -- item 16: special filesystems -----------------------------------------------------

@pytest.mark.parametrize("folder", ["/proc", "/proc/self", "/sys", "/sys/kernel", "/dev",
                                    "/dev/shm"])
async def test_special_filesystems_are_workspace_unsafe(make_engine, tmp_path, folder) -> None:
    """A workspace in /proc, /sys or /dev refuses every file call (no self/environ)."""
    if not os.path.isdir(folder):
        pytest.skip(f"{folder} does not exist here")
    engine = await _engine(make_engine, tmp_path, {"fs.read": {}}, ws=Path(folder))
    for path in (".", "self/environ", "environ"):
        d = await engine.call("c1", "fs.readText", None, {"path": path})
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "workspace-unsafe"), d.message


def test_special_filesystem_is_told_by_the_descriptor(tmp_path) -> None:
    """fstatfs and mountinfo name proc and sysfs; an ordinary folder is none of them."""
    for folder, kind in (("/proc", "proc"), ("/sys", "sysfs"), (str(tmp_path), None)):
        if not os.path.isdir(folder):
            continue
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            assert special_filesystem(fd) == kind
        finally:
            os.close(fd)
