"""A process whose fetch ended at its deadline, its name lookup still stuck, still exits.

Rule: hostile input never hangs. A lookup cannot be cancelled: one a name server
never answers (a card may fetch any name under a domain it declared) holds its
thread past the fetch's deadline. Once the engine has closed, that thread must
not keep the process alive: the interpreter does not wait for it at exit.

(Found in round 25: the lookup threads were a ``ThreadPoolExecutor``'s, which the
interpreter joins at exit.)
"""

from __future__ import annotations

from pathlib import Path

from .exiting import run_to_exit

_CHILD = """
import asyncio, socket, sys, threading
from pathlib import Path
from engine import Engine, World
from engine.effects.netguard import FetchResponse, GuardedFetch
from engine.effects.transport import system_resolver
from tests.conftest import manifest, offer_install

def stuck(host, *args, **kwargs):
    threading.Event().wait()  # a name server that never answers

socket.getaddrinfo = stuck

async def transport(method, url, headers, body, address, **limits):
    return FetchResponse(200, "ok")

async def main(tmp):
    (tmp / "ws").mkdir()
    engine = Engine.open(tmp / "db.sqlite",
                         world=World(net=GuardedFetch(system_resolver, transport), fs=None))
    await engine.create_workspace("w1", tmp / "ws", settings={"fetch_timeout": 0.2})
    await offer_install(engine, manifest("acme.net", {"network": {"hosts": ["*.example.org"]}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.net"}, workspace="w1")
    done = await engine.call("c1", "net.fetch", None, {"url": "https://a.example.org/"})
    print(done.reason, flush=True)
    engine.close()

asyncio.run(main(Path(sys.argv[1])))
print("closed", flush=True)
"""


def test_a_process_exits_with_a_name_lookup_stuck(tmp_path: Path) -> None:
    # GIVEN a fetch whose lookup never returns, WHEN it ends at its deadline and the
    # engine closes and its program returns
    done = run_to_exit(_CHILD, tmp_path)
    # THEN the fetch was refused at its deadline and the process exited
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["timeout", "closed"], done.stdout
