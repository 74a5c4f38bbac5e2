"""``POST /v1/packages`` refuses a ``manifest.json`` file naming a key twice, as the
command line refuses such a manifest: 400, reason ``manifest``, nothing offered.

The file's text is what the content hash covers and what a person reads in the
package; one whose first ``"permissions"`` asks for nothing and whose second
matches the manifest sent would show a reader of the file less than the engine
grants. (Found in round 20: the route compared ``json.loads`` of the file,
which keeps a repeated key's last value, and answered 201.)
"""

from __future__ import annotations

from pathlib import Path

from tests.service.conftest import Running, build_canvas, snapshot


def test_a_manifest_file_naming_a_key_twice_is_a_400_and_changes_nothing(
        unix_server: Running, tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    before = snapshot(unix_server.db)
    text = ('{"name": "x.y", "version": "1.0.0", "permissions": {}, '
            '"permissions": {"fs.read": {}}}')
    r = op.post("/v1/packages", json={
        "manifest": {"name": "x.y", "version": "1.0.0", "permissions": {"fs.read": {}}},
        "files": {"manifest.json": text}})
    assert r.status_code == 400, r.text
    assert r.json()["reason"] == "manifest"
    assert snapshot(unix_server.db) == before
