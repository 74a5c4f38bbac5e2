"""A tool's input schema never makes the engine fetch anything: every `$ref` and
`$dynamicRef` is local (``#…``) or the manifest is MANIFEST_INVALID naming it, and the
validator's registry refuses every retrieval (a schema stored before this rule too).

SPEC §8.1: the engine reaches the network for a card only through `net.fetch`, with
`network` granted, public addresses only.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.core.errors import ManifestInvalid
from engine.core.manifest import json_path, parse_manifest
from engine.core.tools import tool_args_problem

from .served import serve


@pytest.fixture
def web() -> Iterator[tuple[str, list[str]]]:
    """A local web server that serves a schema and notes each request."""
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

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/internal/schema.json", hits
    finally:
        server.shutdown()
        server.server_close()


def test_a_remote_ref_is_refused_at_install_and_never_fetched(
        tmp_path: Path, web: tuple[str, list[str]]) -> None:
    """A schema with an http `$ref` does not install (MANIFEST_INVALID naming it); no request.

    (Found by a helper: jsonschema fetched the URL at every tool call, on the event loop,
    with no timeout, to any address.)
    """
    url, hits = web
    manifest = {"name": "acme.ref", "version": "1.0.0", "permissions": {},
                "tools": [{"name": "t", "input": {"type": "object",
                                                  "properties": {"x": {"$ref": url}}}}]}
    with serve(tmp_path) as served, served.client() as op:
        offered = op.post("/v1/packages", json={"manifest": manifest})
        assert offered.status_code in (200, 201), offered.text  # stored, as offered
        r = op.post("/v1/packages/acme.ref/install", json={"grant": "required"})
    assert r.status_code == 400, r.text
    assert r.json()["code"] == "MANIFEST_INVALID"
    assert [p["path"] for p in r.json()["problems"]] == [
        json_path(("tools", 0, "input", "properties", "x", "$ref"))]
    assert hits == []


@pytest.mark.parametrize("ref", ["file:///etc/passwd", "urn:x", "other.json#/a",
                                 "https://json-schema.org/draft/2020-12/schema"])
@pytest.mark.parametrize("key", ["$ref", "$dynamicRef"])
def test_every_ref_that_is_not_local_is_refused_at_offer(ref: str, key: str) -> None:
    """file://, relative and even the meta-schema's own URI are not local."""
    manifest = {"name": "acme.ref", "version": "1.0.0", "permissions": {},
                "tools": [{"name": "t", "input": {"items": {key: ref}}}]}
    with pytest.raises(ManifestInvalid) as refused:
        parse_manifest(manifest)
    assert [p for p, _ in refused.value.problems] == [
        json_path(("tools", 0, "input", "items", key))]


def test_a_stored_schema_with_a_remote_ref_fetches_nothing(web: tuple[str, list[str]]) -> None:
    """A schema that got past offer before this rule refuses the call, fetching nothing."""
    url, hits = web
    path, what = tool_args_problem({"properties": {"x": {"$ref": url}}}, {"x": 1}, 1000) \
        or ("", "")
    assert (path, "not local" in what, hits) == ("args", True, [])
