"""A process a driven agent detaches entirely gives no consent over the socket (SPEC §10.1).

The escape the README used to name: ``setsid -f env -i …`` with the operator
token, posting an approval to the Unix socket. The detached process has a
session of its own, a clean environment, no terminal, and its parent is gone;
it is below the run's supervisor all the same, so the service's peer check
refuses it.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import sys
import textwrap

import pytest

from engine.effects.drivers import CommandAgent
from tests.service.conftest import build_canvas

pytestmark = pytest.mark.skipif(
    not (sys.platform.startswith("linux") and shutil.which("setsid") and shutil.which("env")),
    reason="needs Linux (the child subreaper and SO_PEERCRED) and util-linux setsid")

#: The detached client: the token from its file (``$(cat token)``), one request.
CLIENT = textwrap.dedent("""
    import json, os, sys, httpx
    socket_path, token_file, path, body, out = sys.argv[1:6]
    token = open(token_file).read().strip()
    client = httpx.Client(transport=httpx.HTTPTransport(uds=socket_path),
                          base_url="http://arrowgate")
    r = client.post(path, json=json.loads(body), headers={"Authorization": "Bearer " + token})
    tmp = out + ".tmp"
    open(tmp, "w").write(json.dumps([os.getsid(0) == os.getpid(), sorted(os.environ),
                                     r.status_code, r.json()]))
    os.replace(tmp, out)
""")


class _Host:
    def __init__(self) -> None:
        self.replies: list[str] = []

    def output(self, node: str, text: str) -> None:
        pass

    def exited(self, node: str, code: int) -> None:
        pass

    def status(self, node: str, status: str) -> None:
        pass

    def replied(self, node: str, text: str, *, status: str = "waiting",
                length: int | None = None, note: str | None = None) -> None:
        self.replies.append(text)


async def test_a_detached_child_of_a_driven_agent_cannot_approve(unix_server, tmp_path) -> None:
    """The operator token from a fully detached child of a driven run: 403, hold kept."""
    # GIVEN a held prompt, and the operator token in a file an agent could read
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    held = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()
    digest = op.get("/v1/holds").json()[0]["text_sha256"]
    token_file, client, out = tmp_path / "token", tmp_path / "client.py", tmp_path / "out.json"
    token_file.write_text(unix_server.token)
    token_file.chmod(0o600)
    client.write_text(CLIENT)
    words = ["setsid", "-f", "env", "-i", sys.executable, str(client), unix_server.address,
             str(token_file), f"/v1/holds/{held['prompt']}/approve",
             json.dumps({"text_sha256": digest}), str(out)]
    detach = " ".join(shlex.quote(w) for w in words)
    # WHEN a driven agent's run detaches the client and waits for its answer
    agent, host = CommandAgent("a1", ["sh", "-c", f"{detach}; while [ ! -s {shlex.quote(str(out))} ];"
                                                  f" do sleep 0.05; done; echo asked"]), _Host()
    await agent.start(host, str(tmp_path))  # type: ignore[arg-type]
    try:
        agent.submit("go")
        async with asyncio.timeout(120):
            await agent._task  # type: ignore[misc]
    finally:
        await agent.aclose()
    # THEN it was detached for real, and refused as from an agent
    own_session, environ, status, body = json.loads(out.read_text())
    assert host.replies == ["asked"]
    assert own_session and "ARROWGATE_DRIVEN" not in environ
    assert status == 403, body
    assert body["code"] == "APPROVAL_REFUSED" and body["reason"] == "from-agent"
    assert "arrowgate drives (node a1)" in json.dumps(body), body
    assert op.get("/v1/holds").json()[0]["id"] == held["prompt"]
