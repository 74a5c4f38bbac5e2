"""Over HTTP a package is offered under its manifest's name, which must be a package name.

``POST /v1/packages`` with a manifest whose ``name`` is not text matching SPEC
§2's pattern answers 400 ``MANIFEST_INVALID`` at ``$.name`` and offers nothing
(the Python API's `offer` refuses such a name as INVALID_ARGUMENT:
tests/unit/test_offer_names_are_package_names.py).

(Found by a helper, p17: the engine's offer stored any name; the route checked
only that the manifest's name was non-empty text.)
"""

from __future__ import annotations

from typing import Any

RAW = {"name": "acme.x", "version": "1.0.0", "permissions": {}}


def test_over_http_the_manifest_name_is_checked(unix_server: Any) -> None:
    """POST /v1/packages with a manifest named outside the pattern: 400 MANIFEST_INVALID."""
    op = unix_server.client()
    raw = {**RAW, "name": "Acme"}
    r = op.post("/v1/packages", json={"manifest": raw})
    assert (r.status_code, r.json()["code"]) == (400, "MANIFEST_INVALID"), r.text
    assert "$.name" in r.json()["message"]
    assert op.get("/v1/packages/Acme/review").status_code == 404
