"""A method the document does not list for a path is a 405 problem+json whose ``Allow``
names exactly the methods it lists, on every path of ``openapi.json``; and the document
lists no 405, as OpenAPI describes the operations a path has, not those it has not
(schemathesis' own check, ``unsupported_method``, reads it so: "return 405 for methods
not listed in the OpenAPI spec"). Round 32 (bounds32) decided it; README says so.
A path with GET is answered HEAD too (RFC 9110 §9.1, round 34), so its ``Allow`` names
HEAD beside what the document lists (OpenAPI's generator writes no HEAD operation, and
schemathesis sends no HEAD as an unlisted method).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.service.conftest import Running, build_canvas

DOC = json.loads((Path(__file__).resolve().parents[2] / "openapi.json").read_text())
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE")


def test_every_unlisted_method_is_405_naming_the_listed(unix_server: Running,
                                                       tmp_path: Path) -> None:
    """Each path answers each method it does not list 405, Allow its listed methods."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    wrong = []
    for path, operations in DOC["paths"].items():
        listed = {method.upper() for method in operations}
        if "GET" in listed:
            listed.add("HEAD")
        url = re.sub(r"\{[^}]+\}", "c1", path)
        for method in METHODS:
            if method in listed:
                continue
            r = op.request(method, url)
            allow = {m.strip() for m in r.headers.get("allow", "").split(",") if m.strip()}
            if r.status_code != 405 or allow != listed \
                    or r.headers.get("content-type") != "application/problem+json":
                wrong.append((method, path, r.status_code, sorted(allow)))
    assert wrong == []


def test_the_document_lists_no_405() -> None:
    """No operation documents a 405: it is the answer to an operation the path has not."""
    assert all("405" not in op.get("responses", {})
               for operations in DOC["paths"].values() for op in operations.values())
