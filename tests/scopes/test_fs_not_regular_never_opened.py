"""A FIFO, socket or device is ``not-regular`` to every call that would read or write it,
and is never opened for reading: a FIFO with no writer never makes a call wait
(SPEC §8.3).

Rule: "Only regular files and folders are read or written: a FIFO, socket or device
gives ``SCOPE_REFUSED``, reason ``not-regular``, without ever being opened for reading
(so nothing can make the engine wait on it)." Held before for a FIFO's reads, a
write and a stat (test_fs_hardening.py); here every call, on a FIFO (watched all the
while for a reader), a socket, and a character and a block device (made with
``mknod`` where this process may).
"""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

# (call, args, refusal): a stat answers "other"; mkdir finds the name taken.
CALLS: list[tuple[str, dict[str, str], tuple[str, str] | None]] = [
    ("fs.stat", {}, None), ("fs.list", {}, ("SCOPE_REFUSED", "not-regular")),
    ("fs.readText", {}, ("SCOPE_REFUSED", "not-regular")),
    ("fs.readBytes", {}, ("SCOPE_REFUSED", "not-regular")),
    ("fs.watch", {}, ("SCOPE_REFUSED", "not-regular")),
    ("fs.writeText", {"text": "x"}, ("SCOPE_REFUSED", "not-regular")),
    ("fs.writeBytes", {"base64": "eA=="}, ("SCOPE_REFUSED", "not-regular")),
    ("fs.mkdir", {}, ("INVALID_ARGUMENT", "exists")),
    ("fs.trash", {}, ("SCOPE_REFUSED", "not-regular")),
]


def _make(kind: str, path: Path) -> socket.socket | None:
    """Make the special file ``kind`` at ``path`` (a socket is returned, to close)."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(path))
        return sock
    else:
        # /dev/zero (never ends) and a loop device: reading either must never begin
        mode, dev = ((stat.S_IFCHR, os.makedev(1, 5)) if kind == "char"
                     else (stat.S_IFBLK, os.makedev(7, 0)))
        try:
            os.mknod(path, 0o666 | mode, dev)
        except PermissionError:
            pytest.skip("this process may not make device files")
    return None


@pytest.mark.parametrize("kind", ["fifo", "socket", "char", "block"])
async def test_a_special_file_is_refused_by_every_call_never_opened(
        make_engine: Any, tmp_path: Path, kind: str) -> None:
    """Each call answers at once (stat: type other), and nothing is changed."""
    # GIVEN the special file in the workspace
    ws = tmp_path / "ws"
    ws.mkdir()
    special = ws / "special"
    sock = _make(kind, special)
    # and, for the FIFO, a watcher that notes any moment a reader holds it open (a
    # writer's non-blocking open succeeds only then), and so lets that reader go
    opened, stop = threading.Event(), threading.Event()

    def watch_for_readers() -> None:
        while not stop.wait(0.005):
            try:
                fd = os.open(special, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue  # ENXIO: no reader
            opened.set()
            os.write(fd, b"x")
            os.close(fd)

    watcher = threading.Thread(target=watch_for_readers, daemon=True)
    if kind == "fifo":
        watcher.start()
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "data", trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    before = os.lstat(special)
    try:
        # WHEN the card makes each call on it
        for call, extra, refusal in CALLS:
            # (bounded only so that a regression fails rather than hangs the suite)
            d = await asyncio.wait_for(engine.call("c1", call, None,
                                                   {"path": "special", **extra}), 20)
            # THEN each is refused as not regular (a stat tells what it is)
            if refusal is None:
                assert d.value is not None and d.value["type"] == "other", d.message
            else:
                assert (d.code, d.reason) == refusal, (call, d.message)
    finally:
        stop.set()
        if sock is not None:
            sock.close()
    # AND it was never opened for reading, nor changed, nor moved
    assert not opened.is_set(), "a reader opened the FIFO"
    after = os.lstat(special)
    assert (after.st_ino, after.st_mode, after.st_rdev) == (before.st_ino, before.st_mode,
                                                            before.st_rdev)
    trashed = tmp_path / "trash" / "files"
    assert not trashed.exists() or not os.listdir(trashed)
