"""A process whose engine closed with file work stuck (a network file system that stopped
answering) still exits.

Rule: hostile input never hangs. `Engine.close` waits a few seconds for file work
under way and logs what it could not wait for as ``cancelled`` (it may yet be
done); after that nothing of the engine may keep its process alive — a file
thread stuck in the kernel included, or Ctrl-C would never end ``arrowgate serve``.

(Found in round 25: file work ran in a ``ThreadPoolExecutor``, whose threads the
interpreter joins at exit: a stuck one kept the process running for ever.)
"""

from __future__ import annotations

from pathlib import Path

from .exiting import run_to_exit

_CHILD = """
import asyncio, sys, threading
from pathlib import Path
from engine import Engine, World
from engine.effects.files import ConfinedFiles
from engine.services import underway
from tests.conftest import manifest, offer_install

underway.CLOSE_WAIT = 0.2
stuck = threading.Event()
perform = ConfinedFiles._perform

def held(self, root, name, writes, path, *rest):
    stuck.set()
    threading.Event().wait()  # a file system that never answers
    return perform(self, root, name, writes, path, *rest)

ConfinedFiles._perform = held

async def main(tmp):
    (tmp / "ws").mkdir()
    engine = Engine.open(tmp / "db.sqlite",
                         world=World(net=None, fs=ConfinedFiles(data_dir=tmp / "data")))
    await engine.create_workspace("w1", tmp / "ws")
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    call = asyncio.ensure_future(engine.call("c1", "fs.writeText", None,
                                             {"path": "a.txt", "text": "x"}))
    while not stuck.is_set():
        await asyncio.sleep(0.01)
    engine.close()
    print((await call).outcome, flush=True)

asyncio.run(main(Path(sys.argv[1])))
print("closed", flush=True)
"""


def test_a_process_exits_after_close_with_file_work_stuck(tmp_path: Path) -> None:
    # GIVEN an engine whose file call is stuck in the kernel, WHEN it closes and its
    # program returns
    done = run_to_exit(_CHILD, tmp_path)
    # THEN the call was answered (logged cancelled) and the process exited
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["denied", "closed"], done.stdout
