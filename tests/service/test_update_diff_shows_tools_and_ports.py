"""The service's diff body and `arrowgate package approve` show the tools and ports an
update adds or removes (see tests/unit/test_update_diff_shows_tools_and_ports.py).

(Found in round 23: an update adding a tool or a port printed no diff line at all.)
"""

from __future__ import annotations

from typing import Any

from tests.unit.test_update_diff_shows_tools_and_ports import NEW, OLD, SHOWN


def test_the_service_diff_and_the_cli_show_them(unix_server: Any, tmp_path: Any,
                                                capsys: Any, monkeypatch: Any) -> None:
    op = unix_server.client()
    assert op.post("/v1/packages", json={"manifest": OLD}).status_code == 201
    assert op.post("/v1/packages/acme.x/install", json={}).status_code == 200
    assert op.post("/v1/packages", json={"manifest": NEW}).status_code == 201
    body = op.get("/v1/packages/acme.x/diff").json()
    assert all(line in body["lines"] for line in SHOWN), body
    assert body["widened"] == [] and body["narrowed"] == []
    from engine.app.cli import main
    from engine.effects.operator import OperatorCheck

    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("n\n"))
    code = main(["package", "approve", "acme.x", "--service", unix_server.address,
                 "--token-file", str(_token_file(unix_server, tmp_path))])
    out, err = capsys.readouterr()
    assert code == 1 and all(line in out for line in SHOWN), (out, err)


def _token_file(server: Any, tmp_path: Any) -> Any:
    path = tmp_path / "token"
    path.write_text(server.token)
    path.chmod(0o600)  # private, as a token file must be
    return path
