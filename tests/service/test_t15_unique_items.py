"""`uniqueItems` on an innocent schema: a hostile agent stops the service.

The card's schema is harmless (`tags`: at most 10 unique strings). The agent sends an
array of ~32 000 mixed numbers and strings within max_payload (256 KiB): jsonschema
cannot sort mixed types and falls back to comparing every pair (O(n²), minutes),
on the service's event loop, although the array is refused anyway (`maxItems`,
`items`). Meanwhile no route of the service answers.

Spec silent on the cost of a check; a careful user expects a refused tool call to
cost the service no more than reading its body, and the service to keep answering.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from .served import canvas, serve

MANIFEST = {"name": "acme.tags", "version": "1.0.0", "permissions": {},
            "tools": [{"name": "tag", "input": {
                "type": "object",
                "properties": {"tags": {"type": "array", "items": {"type": "string"},
                                        "maxItems": 10, "uniqueItems": True}}}}]}


def test_unique_items_on_a_mixed_array_does_not_stop_the_service(tmp_path: Path) -> None:
    tags = [x for i in range(16_000) for x in (i, str(i))]
    with serve(tmp_path) as served:
        canvas(served, tmp_path / "ws", MANIFEST)
        agent = served.client(served.mint("agent:a1"), timeout=120)

        def call() -> None:
            try:
                agent.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "tag",
                                                   "args": {"tags": tags}})
            except Exception:
                pass

        threading.Thread(target=call, daemon=True).start()
        time.sleep(1.0)
        assert served.health_within(2.0), "the service's loop is comparing pairs of tags"
