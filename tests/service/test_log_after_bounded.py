"""``GET /v1/log``'s ``after`` is a sequence number SQLite can hold: one past 64 bits is
a 400 naming ``after`` (SPEC §10.1: malformed input is a 400 problem), not a 500.

(Found by the round's review: it reached the store, where SQLite raised OverflowError.)
"""

from __future__ import annotations

from pathlib import Path

from tests.service.conftest import build_canvas


def test_log_after_past_64_bits_is_a_400_naming_after(unix_server, tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "ws")
    # WHEN a caller pages on from a sequence number no log reaches, past 2**63
    r = op.get("/v1/log", params={"after": 2**64})
    # THEN it is a 400 problem naming after (or an empty page), never a 500
    assert r.status_code in (200, 400), (r.status_code, r.text[:200])
    if r.status_code == 400:
        assert "after" in r.json()["message"], r.json()
    # AND the service still answers
    assert op.get("/v1/health").status_code == 200
