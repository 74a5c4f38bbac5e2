"""A write's leftover temporary file is cleaned whatever its mode, even one no one may read.

A write over a file keeps that file's mode (README), its temporary file taking it
before a byte is written: a write over a file of mode ``000`` that a process left
stuck leaves a temporary file of mode ``000``. The cleaner opened a leftover for
reading to take its lock, which that mode refuses to its owner: the leftover stayed
for good, beside its target.

The engine that cleans runs in a process without the capability to override file
modes (as any user's but root's): root's ``CAP_DAC_OVERRIDE`` would read the file
anyway. (That child process is the test's 2 s or so.)

(Found by files26: a ``.tmp`` leftover of mode 000 stayed.)
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from engine.effects.leftovers import TempFiles

from .exiting import run_to_exit
from .test_fs_write_leftovers_are_cleaned_and_only_ours import _aged, _hidden

# The effective capabilities less CAP_DAC_OVERRIDE (1) and CAP_DAC_READ_SEARCH (2), for
# this thread and every thread it starts after (a user's process has none to drop).
_NO_DAC = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
class Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
class Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]
header, data = Header(0x20080522, 0), (Data * 2)()
assert libc.capget(ctypes.byref(header), data) == 0
data[0].effective &= ~0b110
assert libc.capset(ctypes.byref(header), data) == 0
"""

_CLEANER = _NO_DAC + """
import asyncio, os, sys
from pathlib import Path
from engine import Engine, World
from engine.effects.files import ConfinedFiles
from tests.conftest import manifest, offer_install

async def main(tmp):
    try:
        os.close(os.open(tmp / "ws" / "LEFT", os.O_RDONLY))
    except PermissionError:
        print("unreadable", flush=True)
    engine = Engine.open(tmp / "cleaner.sqlite",
                         world=World(net=None, fs=ConfinedFiles(data_dir=tmp / "data")))
    await engine.create_workspace("w1", tmp / "ws")
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    done = await engine.call("c1", "fs.writeText", None, {"path": "next.txt", "text": "n"})
    print(done.outcome, flush=True)
    engine.close()

asyncio.run(main(Path(sys.argv[1])))
"""


async def test_a_leftover_of_mode_000_is_cleaned(tmp_path: Path) -> None:
    """The leftover of a write over a file of mode 000 is removed at the next write; the
    file written over keeps its mode."""
    # GIVEN a file of mode 000, and the temporary file a write over it left (named as
    # the app names its own, its mode the file's: as a process stuck writing leaves it,
    # tests/scopes/test_fs_write_leftovers_are_cleaned_and_only_ours.py)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "plan.txt").write_text("old")
    os.chmod(ws / "plan.txt", 0)
    temp = TempFiles(tmp_path / "data")
    left = ws / temp.name_for("plan.txt")
    # and one of a write still under way (its writer holds its lock), as old
    held = ws / temp.name_for("held.txt")
    for path in (left, held):
        path.write_text("half")
        os.chmod(path, 0)
        _aged(path)
    writer = os.open(held, os.O_RDONLY)
    try:
        fcntl.flock(writer, fcntl.LOCK_EX)
        # WHEN an engine that may not read them (mode 000, its own files) writes there
        done = run_to_exit(_CLEANER.replace("LEFT", left.name), tmp_path)
    finally:
        os.close(writer)
    assert done.stdout.split() == ["unreadable", "ok"], (done.stdout, done.stderr[-2000:])
    # THEN the leftover is gone, the file it was for is as it was, and the file of the
    # write under way is there with its mode
    assert _hidden(ws) == {held.name}, "the leftover of mode 000 stayed"
    assert (ws / "plan.txt").stat().st_mode & 0o777 == 0
    assert held.stat().st_mode & 0o777 == 0
    assert (ws / "next.txt").read_text() == "n"
