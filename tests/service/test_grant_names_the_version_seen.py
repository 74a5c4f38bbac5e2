"""A grant over HTTP names the version the person saw: ``review_hash`` in the grant body
(the review's ``hash``); another version installed since is 409 ``stale``, naming the
version there is now, and nothing is granted. A body without it keeps SPEC §10.1's
``{"permission"}`` shape and grants for the version installed now.

(Found in round 23: the grant route took only ``{"permission"}``, so a person's grant of
1.0.0's ``network`` to one host applied to 1.1.0's ``network`` to another, approved in
between.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _v(version: str, host: str) -> dict[str, Any]:
    return {"name": "acme.net", "version": version,
            "permissions": {"network": {"hosts": [host], "optional": True},
                            "clipboard.write": {"optional": True}}}


def test_a_grant_naming_a_version_no_longer_installed_is_stale(unix_server,
                                                                tmp_path: Path) -> None:
    op = unix_server.client()
    assert op.post("/v1/packages", json={"manifest": _v("1.0.0", "api.example.com")}
                   ).status_code == 201
    assert op.post("/v1/packages/acme.net/install", json={}).status_code == 200
    seen = op.get("/v1/packages/acme.net/review").json()["hash"]   # the person looks
    r = op.post("/v1/packages", json={"manifest": _v("1.1.0", "evil.example.net")})
    assert r.status_code == 201, r.text
    assert op.post("/v1/packages/acme.net/approve",
                   json={"review_hash": r.json()["hash"]}).status_code == 200
    r = op.post("/v1/packages/acme.net/grant",
                json={"permission": "network", "review_hash": seen})
    assert (r.status_code, r.json().get("reason")) == (409, "stale"), r.text
    assert "1.1.0" in r.json()["detail"] or "1.1.0" in r.json().get("message", "")
    now = op.get("/v1/packages/acme.net/review").json()["hash"]
    r = op.post("/v1/packages/acme.net/grant", json={"permission": "network",
                                                     "review_hash": now})
    assert r.status_code == 200 and "network" in r.json()["granted"], r.text
    # SPEC §10.1's body, without the hash: granted for the version installed now.
    r = op.post("/v1/packages/acme.net/grant", json={"permission": "clipboard.write"})
    assert r.status_code == 200 and "clipboard.write" in r.json()["granted"], r.text
