"""A tool's `pattern` is matched on the service's event loop with Python's backtracking
`re`: one tool call whose argument makes the pattern backtrack stops the whole service
(every route, every card, every agent) for as long as the match runs — minutes, hours.

SPEC §9 validates the arguments against the tool's schema; §8 "No card can exhaust the
store", §8.3 "File work never blocks the engine's other calls": a careful user expects
no single call, least of all a refused one, to freeze the service.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from .t15_proc import canvas, serve

MANIFEST = {"name": "acme.re", "version": "1.0.0", "permissions": {},
            "tools": [{"name": "t", "input": {
                "type": "object",
                "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}}]}


def test_a_backtracking_pattern_does_not_stop_the_service(tmp_path: Path) -> None:
    with serve(tmp_path) as served:
        canvas(served, tmp_path / "ws", MANIFEST)
        agent = served.client(served.mint("agent:a1"), timeout=60)

        def call() -> None:
            try:
                agent.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "t",
                                                   "args": {"s": "a" * 40 + "!"}})
            except Exception:
                pass

        threading.Thread(target=call, daemon=True).start()
        time.sleep(0.5)
        assert served.health_within(2.0), "the service's loop is stuck in one regex match"
