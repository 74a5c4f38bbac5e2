"""Through the service, too, a node, arrow or workspace id holds no control or invisible
character: 400 INVALID_NODE / INVALID_ARROW / INVALID_ARGUMENT naming it, nothing made.
(Found by a helper: the engine took such ids by every way in.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.service.conftest import build_canvas, snapshot

BAD = "x\u202etxt.exe"


@pytest.mark.parametrize(("path", "body", "code"), [
    ("/v1/workspaces/w1/nodes", {"id": BAD, "type": "note"}, "INVALID_NODE"),
    ("/v1/workspaces/w1/arrows", {"id": BAD, "from": "c2", "to": "a1"}, "INVALID_ARROW"),
    ("/v1/workspaces", {"id": BAD, "folder": "{folder}"}, "INVALID_ARGUMENT"),
])
def test_a_bad_id_is_refused_naming_the_character(unix_server, tmp_path: Path, path: str,
                                                  body: dict[str, str], code: str) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    before = {t: rows for t, rows in snapshot(unix_server.db).items()
              if t in ("workspaces", "nodes", "arrows")}
    body = {k: v.format(folder=tmp_path) for k, v in body.items()}
    r = op.post(path, json=body)
    assert r.status_code == 400 and r.json()["code"] == code, r.text
    assert "U+202E" in r.json()["message"], r.text
    after = {t: rows for t, rows in snapshot(unix_server.db).items()
             if t in ("workspaces", "nodes", "arrows")}
    assert after == before
