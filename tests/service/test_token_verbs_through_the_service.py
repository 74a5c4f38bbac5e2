"""``arrowgate token mint|revoke`` through a running ``arrowgate serve`` (``--service``), and
minting as an operator's act: refused from a process no person operates (SPEC §4.5),
as every consent verb is, so an agent cannot mint itself a card's token.

(Found in round 29: no verb minted or revoked a token.)

A few seconds: one service started, and two starts of the real command.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import httpx
import pytest

from engine import Engine
from engine.app.cli import main
from engine.effects.operator import OperatorCheck
from tests.unit.cli_process import run
from tests.unit.test_cli_service import _start, _stop


async def _build(db: Path, folder: Path) -> None:
    folder.mkdir()
    engine = Engine.open(db)
    try:
        await engine.create_workspace("w1", str(folder))
        await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    finally:
        engine.close()


def _canvas(db: Path, folder: Path) -> None:
    asyncio.run(_build(db, folder))


def _tools(sock: str, token: str) -> int:
    """The status of agent a1's tool listing with ``token``."""
    with httpx.Client(transport=httpx.HTTPTransport(uds=sock), base_url="http://arrowgate",
                      headers={"Authorization": f"Bearer {token}"}) as client:
        return client.get("/v1/agents/a1/tools").status_code


def test_mint_and_revoke_through_the_service(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    _canvas(tmp_path / "ag.db", tmp_path / "ws")
    proc, operator = _start(tmp_path)
    sock = str(tmp_path / "ag.db.serve" / "serve.sock")
    via = ["--service", sock, "--token-file", str(operator)]
    try:
        # WHEN a1's token is minted through the service into a new file
        out = tmp_path / "agents" / "a1.token"
        assert main(["token", "mint", "agent:a1", *via, "--out", str(out), "--json"]) == 0
        minted = json.loads(capsys.readouterr().out)
        # THEN the service takes it as agent a1's
        secret = out.read_text().strip()
        assert _tools(sock, secret) == 200
        # AND a principal not on the canvas, or a workspace that is not there, is exit 2
        for argv, said in ((["agent:a9"], "no agent 'a9'"),
                           (["agent:a1", "--workspace", "w9"], "no workspace 'w9'")):
            assert main(["token", "mint", *argv, *via, "--out", str(tmp_path / "x")]) == 2
            assert said in capsys.readouterr().err
            assert not (tmp_path / "x").exists()
        # WHEN it is revoked through the service, THEN the service refuses it
        assert main(["token", "revoke", minted["id"], *via]) == 0
        assert _tools(sock, secret) == 401
        assert main(["token", "revoke", minted["id"], *via]) == 2
        assert "NOT_FOUND" in capsys.readouterr().err
        # AND one minted and revoked on the store itself (--db) is taken, then refused, by
        # the running service at once: the store is where every server reads tokens
        db = ["--db", str(tmp_path / "ag.db")]
        assert main(["token", "mint", "agent:a1", *db, "--json"]) == 0
        minted = json.loads(capsys.readouterr().out)
        assert _tools(sock, minted["token"]) == 200
        assert main(["token", "revoke", minted["id"], *db]) == 0
        assert _tools(sock, minted["token"]) == 401
    finally:
        _stop(proc)


def test_minting_is_refused_from_a_process_no_person_operates(tmp_path: Path) -> None:
    # GIVEN agent a1 on the canvas
    db = tmp_path / "app.db"
    _canvas(db, tmp_path / "ws")
    out = tmp_path / "a1.token"
    # WHEN `arrowgate token mint` runs with no terminal (as an agent's tool would)
    done = run("token", "mint", "agent:a1", "--db", str(db), "--out", str(out), "--json")
    # THEN it is refused as every consent verb is: exit 1, nothing minted or written
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stderr)["error"]["code"] == "APPROVAL_REFUSED"
    assert not out.exists()
    # AND listing the store (no consent given) works, and finds no token
    listed = run("token", "list", "--db", str(db), "--all", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == [], listed.stderr


def test_an_address_off_this_machine_is_refused_before_any_connection(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The write verbs' rule: the operator's token goes to loopback http only."""
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    token = tmp_path / "op.token"
    token.write_text("op_x")
    token.chmod(0o600)
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        port = listener.getsockname()[1]
        for address in (f"http://0.0.0.0:{port}", f"https://127.0.0.1:{port}"):
            assert main(["token", "mint", "agent:a1", "--service", address, "--token-file",
                         str(token)]) == 2
            assert repr(address) in capsys.readouterr().err
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()
