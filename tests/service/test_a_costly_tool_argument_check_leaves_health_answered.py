"""An agent's tool call whose arguments are costly to check holds the service's event
loop a bounded time, however large its arguments: ``GET /v1/health`` from another client
waits about as long behind a call of 250 KB as behind one of 8 KB.

(Found in round 35: the check's budget grew by 4 steps a byte of arguments, so 250 KB
against a schema of shared references held the loop ~10 s, before the agent's rate
limit, and health went unanswered meanwhile; now a check takes at most
`engine.core.tools._STEPS_MOST` steps.) Compared as a ratio of the two waits, not
against a wall-clock limit: both are slowed alike on a loaded machine.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from .conftest import Running, mint

_LEVELS = 30
_SHARED: dict[str, Any] = {
    "$defs": {**{f"a{i}": {"allOf": [{"$ref": f"#/$defs/a{i + 1}"},
                                     {"$ref": f"#/$defs/a{i + 1}"}]} for i in range(_LEVELS)},
              f"a{_LEVELS}": {"type": "object"}},
    "$ref": "#/$defs/a0"}
_MANIFEST = {"name": "acme.shared", "version": "1.0.0", "permissions": {},
             "tools": [{"name": "t", "input": _SHARED}]}


def _agent(running: Running, folder: Path) -> httpx.Client:
    """Card c1 of acme.shared, agent a1 wired to it; a1's client."""
    op = running.client()
    folder.mkdir(exist_ok=True)
    for path, body in (("/v1/workspaces", {"id": "w1", "folder": str(folder)}),
                       ("/v1/packages", {"manifest": _MANIFEST}),
                       ("/v1/packages/acme.shared/install", {"grant": "required"}),
                       ("/v1/workspaces/w1/nodes", {"id": "c1", "type": "card",
                                                    "package": "acme.shared"}),
                       ("/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"}),
                       ("/v1/workspaces/w1/arrows", {"id": "e1", "from": "a1", "to": "c1"})):
        r = op.post(path, json=body)
        assert r.status_code in (200, 201), (path, r.text)
    return running.client(mint(op, "agent:a1"))


def _longest_health_wait(running: Running, agent: httpx.Client, pad: int) -> float:
    """The longest another client waits for ``GET /v1/health`` while a1's call with
    ``pad`` bytes of arguments is checked (its answer: refused as too costly)."""
    answer: dict[str, Any] = {}

    def call() -> None:
        answer["r"] = agent.post("/v1/tool-calls", json={
            "agent": "a1", "card": "c1", "tool": "t", "args": {"pad": "x" * pad}})

    waits: list[float] = []
    calling = threading.Thread(target=call)
    with running.client(None) as anon:
        calling.start()
        while calling.is_alive():
            began = time.monotonic()
            assert anon.get("/v1/health").status_code == 200
            waits.append(time.monotonic() - began)
        calling.join()
    r = answer["r"]
    assert "too costly" in r.text, r.text
    return max(waits)


def test_a_costly_check_holds_health_no_longer_for_larger_arguments(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    running = serve_at()
    agent = _agent(running, tmp_path / "ws")
    small = max(_longest_health_wait(running, agent, 8_000) for _ in range(2))
    large = _longest_health_wait(running, agent, 250_000)
    # 8 KB: 82,000 steps; 250 KB: 250,000 (at most), where it was 1,050,000 (13 times).
    assert large < 6 * small, (large, small)
