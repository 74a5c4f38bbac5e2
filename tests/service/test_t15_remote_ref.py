"""A tool's input schema with a remote `$ref` makes the engine fetch it, at every call.

jsonschema (4.18+) still retrieves unknown `$ref` URIs with `urllib.request.urlopen`
(with a DeprecationWarning): a manifest with `{"$ref": "http://127.0.0.1:PORT/…"}`
passes validation and install, and each tool call makes the engine GET that URL —
synchronously on the event loop, with no timeout, to any address (loopback, private,
cloud metadata), with no `network` permission declared or granted. `file://` URIs
are read the same way (a FIFO or /dev/zero there hangs or fills memory).

SPEC §8.1: the engine reaches the network for a card only through `net.fetch`, with
`network` granted, public addresses only; the brief: a remote $ref must never be
fetched. Expected: refused at offer/install (MANIFEST_INVALID, naming the $ref), or
never resolved (the call refused with INVALID_ARGUMENT) — in no case a request.
"""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path

from .served import canvas, serve


def test_a_remote_ref_is_never_fetched(tmp_path: Path) -> None:
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = json.dumps({"type": "string"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    web = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{web.server_port}/internal/schema.json"
    manifest = {"name": "acme.ref", "version": "1.0.0", "permissions": {},
                "tools": [{"name": "t", "input": {"type": "object",
                                                  "properties": {"x": {"$ref": url}}}}]}
    try:
        with serve(tmp_path) as served:
            try:
                canvas(served, tmp_path / "ws", manifest)
            except AssertionError:
                assert not hits
                return  # refused at offer or install: fine
            with served.client(served.mint("agent:a1")) as agent:
                agent.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "t",
                                                   "args": {"x": 1}})
        assert hits == [], f"the engine fetched {hits} for a card without network"
    finally:
        web.shutdown()
        web.server_close()
