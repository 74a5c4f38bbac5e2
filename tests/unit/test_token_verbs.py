"""``arrowgate token mint|revoke|list`` (SPEC §10.1 "Who is calling"): a card's or an
agent's token from the command line, on the store (``--db``, ``--store``) as through the
service.

The secret is shown once: alone on standard output, or with ``--out FILE`` written to a
new file of mode 0600 (in a folder of mode 0700 when one is made) and not printed. A
principal that names no card or agent there, a workspace that does not exist, an
``--out`` file that is there (unless ``--force``) or inside a workspace's folder: exit 2,
nothing minted, nothing written. ``token list`` tells ids, principals and when each was
made, never a secret. Minting is an operator's act (tested through a real process in
``tests/service/test_token_verbs_through_the_service.py``).

(Found in round 29: no verb minted or revoked a token; a person wiring their own agent
ran a Python script against the service.)
"""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path

import pytest

from engine.app.cli import main
from engine.app.writefailure import Failure
from engine.app.writetokens import parse_principal
from engine.effects.operator import OperatorCheck
from engine.service.auth import TokenStore

from ..bindmount import bound
from ..conftest import open_store


@pytest.fixture(autouse=True)
def _a_person(monkeypatch: pytest.MonkeyPatch) -> None:
    """A person operates this process (the check itself is tested through a process)."""
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))


async def _build(store: str, tmp_path: Path) -> None:
    """Workspace w1 (folder ws) with agent a1 and terminal t1; workspace w2, empty."""
    engine = open_store(store)
    try:
        (tmp_path / "ws").mkdir()
        (tmp_path / "ws2").mkdir()
        await engine.create_workspace("w1", str(tmp_path / "ws"))
        await engine.create_workspace("w2", str(tmp_path / "ws2"))
        await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
        await engine.add_node({"id": "t1", "type": "terminal"}, workspace="w1")
    finally:
        engine.close()


def _canvas(store: str, tmp_path: Path) -> None:
    asyncio.run(_build(store, tmp_path))


def _where(store: str) -> list[str]:
    return ["--store", store] if store.startswith("postgresql://") else ["--db", store]


def _holder(store: str, secret: str) -> tuple[str, str] | None:
    """(id, principal) of the live token ``secret`` in the store, asked afresh."""
    engine = open_store(store)
    try:
        tokens = TokenStore(engine.store.tokens())
        try:
            found = tokens.lookup(secret)
        finally:
            tokens.close()
    finally:
        engine.close()
    return None if found is None else (found[0], str(found[1]))


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_minted_token_is_written_private_accepted_listed_and_revoked(
        store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN agent a1 on the canvas
    _canvas(store, tmp_path)
    where = _where(store)
    out = tmp_path / "app.agents" / "a1.token"
    # WHEN its token is minted into a new file
    code, said, err = _run(capsys, "token", "mint", "agent:a1", *where, "--out", str(out),
                           "--json")
    assert code == 0, err
    answer = json.loads(said)
    assert answer == {"id": answer["id"], "principal": "agent:a1", "file": str(out)}
    # THEN the file is private, in a private folder, and the store accepts what it holds
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert stat.S_IMODE(out.parent.stat().st_mode) == 0o700
    secret = out.read_text().strip()
    assert _holder(store, secret) == (answer["id"], "agent:a1")
    # AND the list names it, never its secret
    code, listed, err = _run(capsys, "token", "list", *where, "--json")
    assert code == 0, err
    assert secret not in listed
    [row] = json.loads(listed)
    assert (row["id"], row["principal"], row["revoked"]) == (answer["id"], "agent:a1", None)
    assert isinstance(row["made"], float)
    code, listed, _ = _run(capsys, "token", "list", *where)
    assert code == 0 and answer["id"] in listed and "agent:a1" in listed
    # WHEN it is revoked
    code, said, err = _run(capsys, "token", "revoke", answer["id"], *where, "--json")
    assert code == 0 and json.loads(said) == {"id": answer["id"], "revoked": True}, err
    # THEN the store refuses it, the list leaves it out (--all tells when)
    assert _holder(store, secret) is None
    assert json.loads(_run(capsys, "token", "list", *where, "--json")[1]) == []
    [row] = json.loads(_run(capsys, "token", "list", *where, "--all", "--json")[1])
    assert row["id"] == answer["id"] and isinstance(row["revoked"], float)
    # AND revoking it again names the id: exit 2
    code, _, err = _run(capsys, "token", "revoke", answer["id"], *where)
    assert code == 2 and "NOT_FOUND" in err and answer["id"] in err


def test_without_out_the_secret_is_printed_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "app.db")
    _canvas(db, tmp_path)
    code, said, err = _run(capsys, "token", "mint", "agent:a1", "--db", db)
    assert code == 0, err
    [secret] = said.splitlines()
    found = _holder(db, secret)
    assert found is not None and found[0] in err and secret not in err


@pytest.mark.parametrize("argv,said", [
    (["agent:nobody"], "no agent 'nobody'"),
    (["card:a1"], "no card 'a1'"),
    (["agent:t1"], "no agent 't1'"),
    (["agent:a1", "--workspace", "w9"], "no workspace 'w9'"),
    (["agent:a1", "--workspace", "w2"], "no agent 'a1' in workspace 'w2'"),
])
def test_a_principal_not_on_the_canvas_mints_and_writes_nothing(
        store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
        said: str) -> None:
    _canvas(store, tmp_path)
    out = tmp_path / "agents" / "x.token"
    code, _, err = _run(capsys, "token", "mint", *argv, *_where(store), "--out", str(out))
    assert code == 2 and "NOT_FOUND" in err and said in err, err
    assert not out.parent.exists()
    assert json.loads(_run(capsys, "token", "list", *_where(store), "--all", "--json")[1]) == []


@pytest.mark.parametrize("principal,said", [
    ("terminal:t1", "not 'terminal'"), ("operator", "arrowgate serve"), ("a1", "card:ID"),
    ("agent:", "no node id"), ("agent:a b", "without spaces"), ("agent:" + "x" * 257, "256")])
def test_a_principal_that_is_no_card_or_agent_is_refused_saying_what_is(
        principal: str, said: str) -> None:
    with pytest.raises(Failure) as caught:
        parse_principal(principal)
    assert caught.value.exit_code == 2 and said in str(caught.value)
    assert caught.value.data["reason"] == "bad-principal"


def test_card_and_agent_principals_are_read() -> None:
    assert parse_principal("card:c1") == ("card", "c1")
    assert parse_principal("agent:a:1") == ("agent", "a:1")


def test_a_bad_principal_on_the_command_line_is_exit_2_before_the_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Read before anything is opened: no database is needed to be told."""
    code, _, err = _run(capsys, "token", "mint", "terminal:t1", "--db",
                        str(tmp_path / "none.db"), "--json")
    assert code == 2 and json.loads(err)["error"]["reason"] == "bad-principal"
    assert not (tmp_path / "none.db").exists()


def test_an_out_file_that_is_there_is_kept_unless_forced(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "app.db")
    _canvas(db, tmp_path)
    out = tmp_path / "a1.token"
    out.write_text("keep me")
    code, _, err = _run(capsys, "token", "mint", "agent:a1", "--db", db, "--out", str(out))
    assert code == 2 and "exists" in err and "--force" in err
    assert out.read_text() == "keep me"
    assert json.loads(_run(capsys, "token", "list", "--db", db, "--all", "--json")[1]) == []
    out.chmod(0o644)
    code, _, err = _run(capsys, "token", "mint", "agent:a1", "--db", db, "--out", str(out),
                        "--force")
    assert code == 0, err
    assert out.read_text().startswith("agt_") and stat.S_IMODE(out.stat().st_mode) == 0o600
    folder = tmp_path / "a-folder"
    folder.mkdir()
    code, _, err = _run(capsys, "token", "mint", "agent:a1", "--db", db, "--out", str(folder),
                        "--force")
    assert code == 2 and "is a folder" in err


def test_an_out_file_inside_a_workspace_folder_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A card allowed fs.read there could read the token and act as the agent."""
    db = str(tmp_path / "app.db")
    _canvas(db, tmp_path)
    out = tmp_path / "ws2" / "deep" / "a1.token"
    code, _, err = _run(capsys, "token", "mint", "agent:a1", "--db", db, "--out", str(out))
    assert code == 2 and "workspace folder" in err
    assert not (tmp_path / "ws2" / "deep").exists()
    assert json.loads(_run(capsys, "token", "list", "--db", db, "--all", "--json")[1]) == []


@pytest.mark.parametrize("mounted", ["", "sub", "sub/with space"])
def test_an_out_file_inside_a_workspace_folder_by_another_path_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], mounted: str) -> None:
    """The workspace folder by a second path (a bind mount here; on a case-folding file
    system, ``WS2`` for ``ws2``) is the workspace folder: refused, nothing minted. So is
    a folder of it mounted at another place, which nothing above is the workspace
    folder: the mount table says where it lies."""
    db = str(tmp_path / "app.db")
    _canvas(db, tmp_path)
    (tmp_path / "ws2" / mounted).mkdir(parents=True, exist_ok=True)
    with bound(tmp_path / "ws2" / mounted, tmp_path / "second"):
        out = tmp_path / "second" / "deep" / "a1.token"
        code, _, err = _run(capsys, "token", "mint", "agent:a1", "--db", db, "--out", str(out))
    assert code == 2 and "workspace folder" in err, err
    assert not (tmp_path / "ws2" / mounted / "deep").exists()
    assert json.loads(_run(capsys, "token", "list", "--db", db, "--all", "--json")[1]) == []


def test_token_list_through_the_service_is_refused_naming_the_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "token", "list", "--service", str(tmp_path / "s.sock"))
    assert code == 2 and "--db or --store" in err


@pytest.mark.parametrize("own", ["", "-wal", ".anchor", ".operator-token"])
def test_an_out_file_that_is_the_database_or_its_own_file_is_refused_even_forced(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], own: str) -> None:
    """``--out app.db --force`` (a slip of the tab key) would put a token where the canvas
    was; so would the database's log, its anchor or its operator's token: exit 2, each
    file as it was, nothing minted (as `arrowgate serve --token-file` refuses its own
    database)."""
    db = tmp_path / "app.db"
    _canvas(str(db), tmp_path)
    out = Path(f"{db}{own}")
    if not out.exists():
        out.write_bytes(b"kept")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    code, _, err = _run(capsys, "token", "mint", "agent:a1", "--db", str(db), "--out",
                        str(out), "--force")
    assert code == 2 and str(out) in err and "database" in err, err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before
    assert json.loads(_run(capsys, "token", "list", "--db", str(db), "--all", "--json")[1]) == []


def test_an_out_file_that_is_the_token_file_given_is_refused_even_forced(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "app.db"
    _canvas(str(db), tmp_path)
    operator = tmp_path / "operator.token"
    operator.write_text("agt_" + "x" * 40 + "\n")
    code, _, err = _run(capsys, "token", "mint", "agent:a1", "--db", str(db), "--token-file",
                        str(operator), "--out", str(operator), "--force")
    assert code == 2 and "--token-file" in err, err
    assert operator.read_text() == "agt_" + "x" * 40 + "\n"
