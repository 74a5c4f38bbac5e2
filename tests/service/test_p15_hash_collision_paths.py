"""p15: file paths of an offer are not checked, and the content hash joins path and
digest with NUL and newline: a path holding them makes two packages with different
manifests share one content hash, so a review's hash no longer names what is installed
(SPEC §2 content hash, §4.4 approval by hash, §10.1 install ``review_hash``)."""

from __future__ import annotations

import hashlib
import json


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


NARROW = {"name": "acme.twin", "version": "1.0.0", "permissions": {}}
WIDE = {"name": "acme.twin", "version": "1.0.0",
        "permissions": {"fs.write": {}, "agents.prompt": {}}}


def _twins() -> tuple[dict[str, str], dict[str, str]]:
    m1, m2 = json.dumps(NARROW), json.dumps(WIDE)
    y, z = "y", "z"
    narrow = {"manifest.json": m1,
              f"a\0{_sha(y)}\nmanifest.json\0{_sha(m2)}\nzz": z}
    wide = {"manifest.json": m2, "a": y,
            f"zz\0{_sha(z)}\nmanifest.json": m1}
    return narrow, wide


def test_a_reviewed_hash_never_installs_other_permissions(unix_server):
    op = unix_server.client()
    narrow, wide = _twins()
    r = op.post("/v1/packages", json={"manifest": NARROW, "files": narrow})
    assert r.status_code == 201, r.text
    review = op.get("/v1/packages/acme.twin/review").json()
    assert review["high"] == [] and review["medium"] == [] and review["low"] == []
    seen = review["hash"]  # the person saw: no permissions at all
    # Meanwhile another client offers the same name again, with a wide manifest.
    r2 = op.post("/v1/packages", json={"manifest": WIDE, "files": wide})
    # The person installs the review they saw.
    r = op.post("/v1/packages/acme.twin/install", json={"grant": "required",
                                                         "review_hash": seen})
    granted = r.json().get("granted", []) if r.status_code == 200 else []
    assert granted == [], (r2.status_code, r2.text, r.status_code, r.text)
