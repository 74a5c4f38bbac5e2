"""k16: a driven agent's own child, detached (`setsid -f`) with a cleared environment
(`env -i`), reaches the service with the operator token and is taken for a person.

SPEC §4.5 / §10.1: consent actions from a peer that runs inside an agent's process
tree are refused. The agent here is a process arrowgate's own driver started and
recorded (`DrivenRegistry`); its child detaches in one line and grants a permission.
"""

from __future__ import annotations

import asyncio
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.effects.drivers import CommandAgent
from tests.service.conftest import Running, build_canvas

_PROBE = """\
import http.client, json, socket, sys
sock_path, token_file, out = sys.argv[1:4]
class Conn(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sock_path)
c = Conn("arrowgate")
c.request("POST", "/v1/packages/acme.standup/grant",
          body=json.dumps({"permission": "clipboard.write"}),
          headers={"Authorization": "Bearer " + open(token_file).read().strip(),
                   "Content-Type": "application/json"})
r = c.getresponse()
open(out + ".part", "w").write(f"{r.status} {r.read().decode()[:300]}")
import os; os.replace(out + ".part", out)
"""


class _Host:
    def __init__(self) -> None:
        self.replies: list[str] = []
        self.done = asyncio.Event()

    def output(self, node: str, text: str) -> None:
        pass

    def status(self, node: str, status: str) -> None:
        pass

    def replied(self, node: str, text: str, *, status: str = "waiting",
                length: int | None = None) -> None:
        self.replies.append(text)
        self.done.set()


@pytest.mark.skipif(not shutil.which("setsid"), reason="needs util-linux setsid")
async def test_a_detached_child_of_a_driven_agent_cannot_grant(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    server = serve_at()
    operator = server.client()
    build_canvas(operator, tmp_path / "ws")
    probe = tmp_path / "probe.py"
    probe.write_text(_PROBE)
    token_file = server.db.with_name(server.db.name + ".operator-token")

    async def run_in_agent(prefix: list[str], out: Path) -> str:
        """The driven agent runs the probe (after ``prefix``) and prints its verdict."""
        launch = " ".join(shlex.quote(str(a)) for a in (
            *prefix, sys.executable, probe, server.address, token_file, out))
        script = f"{launch}; while [ ! -e {shlex.quote(str(out))} ]; do sleep 0.05; done; " \
                 f"cat {shlex.quote(str(out))}"
        agent = CommandAgent("a1", ["sh", "-c", script], timeout=25)
        host = _Host()
        await agent.start(host, str(tmp_path / "ws"))  # type: ignore[arg-type]
        try:
            agent.submit("go")
            await asyncio.wait_for(host.done.wait(), 30)
        finally:
            await agent.aclose()
        return host.replies[0]

    # The check works for the agent's plain child: refused.
    assert (await run_in_agent([], tmp_path / "v1")).startswith("403")
    # One line later, the same child detached with a clean environment.
    reply = await run_in_agent(["setsid", "-f", "env", "-i"], tmp_path / "v2")
    # What a person expects: 403 APPROVAL_REFUSED, clipboard.write not granted.
    assert reply.startswith("403"), f"the agent's detached child was taken for a person: {reply}"
