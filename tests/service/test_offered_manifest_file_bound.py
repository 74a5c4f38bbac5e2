"""The text of a package's ``manifest.json`` sent to ``POST /v1/packages`` is held to a
manifest's bounds (`MAX_MANIFEST_TEXT`, `MAX_MANIFEST_VALUES`) before it is read, as a
manifest file a person names is: refused ``MANIFEST_INVALID`` naming the bound, nothing
offered (rule: hostile input never floods; every size bound is enforced where the input
enters).

(Found in round 31: the file's text is one string of the body, so the body's own bounds
let through 8 MiB of it; the route read it as JSON, to compare it with the manifest sent,
before any bound: 8 MiB of empty objects built 2.8 million of them, 220 MB and most of a
second on the service's event loop, each time.)
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import httpx

from engine.core.manifest import MAX_MANIFEST_TEXT
from tests.service.conftest import two_apps

MANIFEST = {"name": "acme.flood", "version": "1.0.0", "permissions": {}}


async def test_a_manifest_file_past_its_bound_is_refused_unread(tmp_path: Path) -> None:
    """A ``manifest.json`` of 3 MiB of empty objects: 400 MANIFEST_INVALID naming its
    size, no package offered, no more memory held than a few copies of the body."""
    apps = await two_apps(tmp_path, [], [], max_body=1 << 23)
    flood = "[" + ",".join(["{}"] * (MAX_MANIFEST_TEXT // 2)) + "]"
    body = json.dumps({"manifest": MANIFEST, "files": {"manifest.json": flood}}).encode()
    try:
        for app in (apps.lane, apps.fastapi):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                         base_url="http://x") as client:
                tracemalloc.start()
                try:
                    r = await client.post("/v1/packages", content=body, headers={
                        "Authorization": f"Bearer {apps.operator}",
                        "Content-Type": "application/json"})
                    peak = tracemalloc.get_traced_memory()[1]
                finally:
                    tracemalloc.stop()
            assert r.status_code == 400, r.text[:300]
            problem = r.json()
            assert problem["code"] == "MANIFEST_INVALID", problem
            assert f"{len(flood)} bytes of text" in problem["message"], problem
            assert "acme.flood" not in apps.engine.state.packages
            assert peak < 8 * len(body), f"refusing {len(body)} bytes held {peak}"
    finally:
        apps.close()
