"""The write verbs through a running ``arrowgate serve`` (``--service``), on its socket and TCP."""

from __future__ import annotations

import hashlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.app.cli import main
from engine.effects.operator import OperatorCheck

MANIFEST = {"name": "acme.prompter", "version": "1.0.0",
            "permissions": {"agents.prompt": {}, "clipboard.write": {"optional": True}}}


def _start(tmp_path: Path, *listen: str,
           db_name: str = "ag.db") -> tuple[subprocess.Popen[str], Path]:
    db = tmp_path / db_name
    proc = subprocess.Popen([sys.executable, "-m", "engine.app.cli", "serve", "--db", str(db),
                             *listen], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        # Drain the service's output for its whole life, so a full pipe never blocks it.
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                lines.put(line)
        finally:
            proc.stdout.close()  # here, by its only reader, once the service has ended
            lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[str] = []
    while True:
        try:
            # A bound on a hang, not a timing assertion: a healthy start takes seconds.
            line = lines.get(timeout=180)
        except queue.Empty:
            line = None
        if line is None:
            _stop(proc)
            pytest.fail("arrowgate serve did not say ready:\n" + "".join(seen))
        seen.append(line)
        if line.strip() == "ready":
            return proc, Path(f"{db}.operator-token")


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """A service on a socket in a private folder; a person operates this process."""
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    sock = tmp_path / "run" / "serve.sock"
    proc, token = _start(tmp_path, "--socket", str(sock))
    try:
        yield str(sock), token
    finally:
        _stop(proc)


def run(capsys, service: tuple[str, Path], *argv: str) -> tuple[int, str, str]:
    """main(argv + --service + --token-file) → (exit code, stdout, stderr)."""
    code = main([*argv, "--service", service[0], "--token-file", str(service[1])])
    out, err = capsys.readouterr()
    return code, out, err


def test_every_write_verb_through_the_socket(service, tmp_path, capsys) -> None:
    """Workspace, package, nodes, arrows, calls, holds: the same verbs, through the service."""
    folder = tmp_path / "acme.prompter"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(MANIFEST))
    (folder / "index.js").write_text("// card\n")
    (tmp_path / "proj").mkdir(exist_ok=True)  # a workspace folder must exist
    assert run(capsys, service, "workspace", "add", "w1", str(tmp_path / "proj"))[0] == 0
    code, out, err = run(capsys, service, "package", "offer", str(folder), "--json")
    assert code == 0, err
    assert json.loads(out)["package"] == "acme.prompter"
    code, out, err = run(capsys, service, "package", "review", "acme.prompter", "--json")
    assert code == 0, err
    review_hash = json.loads(out)["hash"]
    code, _, err = run(capsys, service, "package", "install", "acme.prompter", "--review-hash",
                       "sha256:" + "0" * 64)
    assert code == 1 and "stale" in err
    code, _, err = run(capsys, service, "package", "install", "acme.prompter", "--review-hash",
                       review_hash)
    assert code == 0, err
    for argv in (["c1", "card", "--set", "package=acme.prompter"],
                 ["a1", "agent", "--set", "name=A1"],
                 ["yolo", "agent", "--set", "name=YOLO", "--set", "dangerous=true"]):
        code, _, err = run(capsys, service, "node", "add", "w1", *argv)
        assert code == 0, err
    code, out, _ = run(capsys, service, "call", "c1", "agents.prompt", "a1", "--args",
                       '{"text": "hi"}', "--json")
    assert code == 1 and json.loads(out)["reason"] == "not-connected"
    for arrow in (["e1", "c1", "a1"], ["ey", "c1", "yolo"]):
        code, _, err = run(capsys, service, "arrow", "add", "w1", *arrow)
        assert code == 0, err
    code, out, _ = run(capsys, service, "call", "c1", "agents.prompt", "a1", "--args",
                       '{"text": "hi"}', "--json")
    assert code == 0 and json.loads(out)["outcome"] == "queued"
    code, out, _ = run(capsys, service, "call", "c1", "agents.prompt", "yolo", "--args",
                       '{"text": "deploy\\u001b[2J"}', "--json")
    assert code == 0 and json.loads(out)["outcome"] == "held"
    code, out, _ = run(capsys, service, "hold", "list", "--json")
    (hold,) = json.loads(out)
    assert hold["text"] == "deploy\x1b[2J"
    code, _, err = run(capsys, service, "hold", "approve", hold["id"], "--sha256",
                       hashlib.sha256(b"other").hexdigest())
    assert code == 1 and "stale" in err
    code, out, err = run(capsys, service, "hold", "approve", hold["id"], "--sha256",
                         hashlib.sha256("deploy\x1b[2J".encode()).hexdigest(), "--json")
    assert code == 0 and json.loads(out)["outcome"] == "queued", err
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "manifest.json").write_text(json.dumps({**MANIFEST, "version": "1.1.0"}))
    code, out, err = run(capsys, service, "package", "offer", str(v2), "--json")
    assert code == 0 and json.loads(out)["state"] == "pending", err
    code, out, err = run(capsys, service, "package", "approve", "acme.prompter",
                         "--review-hash", json.loads(out)["hash"], "--json")
    assert code == 0 and json.loads(out)["package"] == "acme.prompter", err
    code, out, err = run(capsys, service, "package", "review", "acme.prompter", "--json")
    # The grant names the version seen (`package review`): nothing is asked then.
    assert run(capsys, service, "package", "grant", "acme.prompter", "clipboard.write",
               "--review-hash", json.loads(out)["hash"])[0] == 0
    assert run(capsys, service, "package", "revoke", "acme.prompter", "clipboard.write")[0] == 0
    code, out, _ = run(capsys, service, "node", "set", "a1", "--set", "dangerous=true",
                       "--json")
    assert code == 0 and json.loads(out)["dangerous"] is True
    assert run(capsys, service, "arrow", "remove", "e1")[0] == 0
    assert run(capsys, service, "node", "remove", "a1")[0] == 0
    code, out, _ = run(capsys, service, "hold", "list")
    assert (code, out.strip()) == (0, "no held prompts")


def test_package_revoke_of_what_was_not_granted_says_so(service, tmp_path, capsys) -> None:
    """Through the service as on the database: "was not granted; nothing changed", exit 1,
    ``{"package", "not_granted"}`` (the service answers ``revoked: false``)."""
    folder = tmp_path / "acme.prompter"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(MANIFEST))
    (tmp_path / "proj").mkdir(exist_ok=True)
    assert run(capsys, service, "workspace", "add", "w1", str(tmp_path / "proj"))[0] == 0
    assert run(capsys, service, "package", "offer", str(folder))[0] == 0
    code, out, _ = run(capsys, service, "package", "review", "acme.prompter", "--json")
    assert run(capsys, service, "package", "install", "acme.prompter", "--review-hash",
               json.loads(out)["hash"])[0] == 0
    code, out, err = run(capsys, service, "package", "revoke", "acme.prompter",
                         "clipboard.write")
    assert (code, out, err) == (
        1, "acme.prompter: clipboard.write was not granted; nothing changed\n", "")
    code, out, err = run(capsys, service, "package", "revoke", "acme.prompter",
                         "clipboard.write", "--json")
    assert code == 1 and err == ""
    assert json.loads(out) == {"package": "acme.prompter", "not_granted": "clipboard.write"}
    code, out, err = run(capsys, service, "package", "revoke", "acme.prompter",
                         "agents.prompt", "--json")
    assert code == 0 and json.loads(out) == {"package": "acme.prompter",
                                             "revoked": "agents.prompt"}, err


def test_a_wrong_token_is_a_refusal(service, tmp_path, capsys) -> None:
    """401 from the service: exit 1, the problem's message on stderr."""
    bad = tmp_path / "bad-token"
    bad.write_text("not-a-token\n")
    bad.chmod(0o600)  # private, as a token file must be
    code, out, err = run(capsys, (service[0], bad), "hold", "list")
    assert code == 1 and out == "" and "UNAUTHENTICATED" in err


def test_no_service_at_the_address_is_exit_2(tmp_path, capsys) -> None:
    """Nothing listens on the socket: exit 2 naming the address, and asking whether
    `arrowgate serve` runs there (round 34: a service stopped, its socket gone, was told
    only "No such file or directory" and to use http:// for TCP)."""
    token = tmp_path / "t"
    token.write_text("x")
    token.chmod(0o600)
    code, _, err = run(capsys, (str(tmp_path / "none.sock"), token), "hold", "list")
    assert code == 2 and "cannot reach the service" in err
    assert "is `arrowgate serve` running there?" in err, err


def test_no_service_on_a_loopback_port_asks_whether_it_runs(tmp_path, capsys) -> None:
    """Nobody listens on the port: exit 2 naming the address and asking whether
    `arrowgate serve` runs there (round 34: "All connection attempts failed", alone)."""
    token = tmp_path / "t"
    token.write_text("x")
    token.chmod(0o600)
    with socket.socket() as s:  # a port free now, and nobody listening on it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, _, err = run(capsys, (f"http://127.0.0.1:{port}", token), "hold", "list")
    assert code == 2 and f"cannot reach the service at http://127.0.0.1:{port}" in err
    assert "is `arrowgate serve` running there?" in err, err


def test_verbs_over_loopback_tcp(tmp_path, capsys, monkeypatch) -> None:
    """--service http://127.0.0.1:PORT works like the socket."""
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc, token = _start(tmp_path, "--listen", f"127.0.0.1:{port}")
    try:
        service = (f"http://127.0.0.1:{port}", token)
        assert run(capsys, service, "workspace", "add", "w1", str(tmp_path))[0] == 0
        code, out, _ = run(capsys, service, "node", "add", "w1", "n1", "note", "--json")
        assert code == 0 and json.loads(out)["id"] == "n1"
        code, _, err = run(capsys, service, "node", "add", "w1", "n1", "note")
        assert code == 2 and "n1" in err
    finally:
        _stop(proc)


def test_a_missing_arrow_or_node_is_not_found_through_either_transport(service, tmp_path,
                                                                      capsys) -> None:
    """Removing what does not exist: NOT_FOUND with a reason naming it, exit 2, through
    --service and --db alike.

    (Through --db, `arrow remove` of a missing arrow said INVALID_ARROW, the
    engine's code, where the service said NOT_FOUND; and the service's reason
    was ``missing`` for everything where the engine says ``missing-node``.)
    """
    db = str(tmp_path / "ag.db")
    for verb in ("arrow", "node"):
        answers = []
        for transport in (service, db):
            argv = ["--db", transport] if isinstance(transport, str) else \
                ["--service", transport[0], "--token-file", str(transport[1])]
            code = main([verb, "remove", "nope", *argv, "--json"])
            err = capsys.readouterr().err
            error = json.loads(err)["error"]
            answers.append((code, error["code"], error.get("reason")))
        assert answers[0] == answers[1] == (2, "NOT_FOUND", f"missing-{verb}"), answers


#: The keys of every error a write verb answers about the engine's or the service's
#: refusal under --json (README "Command line": its code and reason when it has them).
ERROR_KEYS = {"card", "code", "message", "package", "permission", "reason"}


def test_an_error_is_the_same_json_through_either_transport(service, tmp_path,
                                                            capsys) -> None:
    """GIVEN the same refused verb WHEN sent through --db and through --service THEN its
    JSON error is the same object: the same keys, the same message (its code in front,
    as every engine error's), the same exit code.

    (Found in round 28: through --service the error carried the HTTP problem's own fields
    besides — status, title, type, detail — and lacked card and package; through --db
    ``arrow remove`` said ``no arrow 'nope'`` where the service said ``NOT_FOUND: no arrow
    'nope'``, and kept only code, reason and message; ``node set`` of a missing node was
    INVALID_NODE through --db and NOT_FOUND through the service, and an arrow between
    workspaces ``cross-workspace`` through --db and ``other-workspace`` through the
    service, in other words.)
    """
    db = str(tmp_path / "ag.db")
    for ws in ("w1", "w2"):
        (tmp_path / ws).mkdir()
        assert main(["workspace", "add", ws, str(tmp_path / ws), "--db", db]) == 0
        assert main(["node", "add", ws, f"n{ws[1]}", "note", "--db", db]) == 0
    capsys.readouterr()
    digest = "0" * 64
    for argv in (["arrow", "remove", "nope"], ["node", "remove", "nope"],
                 ["arrow", "add", "w2", "e1", "n1", "n2"],
                 ["node", "set", "nope", "--set", "name=x"],
                 ["hold", "reject", "nope"], ["hold", "approve", "nope", "--sha256", digest],
                 ["package", "revoke", "nope", "agents.prompt"],
                 ["package", "review", "nope"], ["package", "install", "nope",
                                                 "--review-hash", "sha256:" + digest]):
        answers = []
        for transport in (service, db):
            where = ["--db", transport] if isinstance(transport, str) else \
                ["--service", transport[0], "--token-file", str(transport[1])]
            code = main([*argv, *where, "--json"])
            out, err = capsys.readouterr()
            assert out == "", (argv, out)
            answers.append((code, json.loads(err)["error"]))
        assert answers[0] == answers[1], (argv, answers)
        code, error = answers[0]
        assert set(error) == ERROR_KEYS, (argv, error)
        assert error["message"].startswith(f"{error['code']}: "), (argv, error)


def test_a_package_in_the_wrong_state_is_told_alike_through_either_transport(
        service, tmp_path, capsys) -> None:
    """GIVEN a package offered and not installed WHEN a permission is granted to it, its
    update declined or approved, through --db and through --service THEN the same JSON
    error and the same exit code: a package not installed is invalid input (exit 2), and
    one with no version pending is NOT_FOUND nothing-pending naming it.

    (Round 35: the grant exited 1 through the service, which took any 409 for a refusal,
    and 2 through --db; decline --pending-hash said PACKAGE_NOT_INSTALLED through --db
    and NOT_FOUND nothing-pending through the service; and the service's nothing-pending
    named no package.)
    """
    db = str(tmp_path / "ag.db")  # the service's own
    folder = tmp_path / "acme.prompter"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(MANIFEST))
    assert main(["package", "offer", str(folder), "--db", db]) == 0
    capsys.readouterr()
    digest = "sha256:" + "0" * 64
    for argv, wanted in (
            (["package", "grant", "acme.prompter", "clipboard.write", "--review-hash", digest],
             (2, "PACKAGE_NOT_INSTALLED", None)),
            (["package", "decline", "acme.prompter", "--pending-hash", digest],
             (2, "NOT_FOUND", "nothing-pending")),
            (["package", "decline", "acme.prompter"], (2, "NOT_FOUND", "nothing-pending")),
            (["package", "approve", "acme.prompter"], (2, "NOT_FOUND", "nothing-pending"))):
        said = []
        for where in (["--service", service[0], "--token-file", str(service[1])],
                      ["--db", db]):
            code = main([*argv, *where, "--json"])
            out, err = capsys.readouterr()
            assert out == "", (argv, where, out)
            said.append((code, json.loads(err)["error"]))
        assert said[0] == said[1], (argv, said)
        code, error = said[0]
        assert (code, error["code"], error["reason"]) == wanted, (argv, said[0])
        assert error["package"] == "acme.prompter", (argv, error)


def test_an_answer_is_the_same_json_through_either_transport(service, tmp_path,
                                                             capsys) -> None:
    """GIVEN a package offered WHEN its review is read, a package installed, and a
    permission granted, through --db and through --service THEN each verb's JSON answer
    has the same keys (the review and the grant are the same object), as every other write
    verb's has.

    (Found in round 28: through --service the review carried ``lines`` besides ``text``,
    and the install ``installed`` besides the review's keys.)
    """
    db = str(tmp_path / "ag.db")
    for name in ("acme.one", "acme.two"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "manifest.json").write_text(json.dumps({**MANIFEST, "name": name}))
        assert main(["package", "offer", str(folder), "--db", db]) == 0
    capsys.readouterr()
    answers = []
    for transport in (service, db):
        where = ["--db", transport] if isinstance(transport, str) else \
            ["--service", transport[0], "--token-file", str(transport[1])]
        assert main(["package", "review", "acme.one", *where, "--json"]) == 0
        answers.append(json.loads(capsys.readouterr().out))
    assert answers[0] == answers[1], answers
    installed = []
    for transport, name in ((service, "acme.one"), (db, "acme.two")):
        where = ["--db", transport] if isinstance(transport, str) else \
            ["--service", transport[0], "--token-file", str(transport[1])]
        assert main(["package", "review", name, "--db", db, "--json"]) == 0
        digest = json.loads(capsys.readouterr().out)["hash"]
        assert main(["package", "install", name, "--review-hash", digest, *where,
                     "--json"]) == 0
        installed.append(json.loads(capsys.readouterr().out))
    assert sorted(installed[0]) == sorted(installed[1]), installed
    # AND a grant's answer is the same object both ways, its ``granted`` a list as the
    # install's is: every permission held now (round 35: the one permission, a string)
    for transport, name in ((service, "acme.one"), (db, "acme.two")):
        where = ["--db", transport] if isinstance(transport, str) else \
            ["--service", transport[0], "--token-file", str(transport[1])]
        assert main(["package", "review", name, "--db", db, "--json"]) == 0
        digest = json.loads(capsys.readouterr().out)["hash"]
        assert main(["package", "grant", name, "clipboard.write", "--review-hash", digest,
                     *where, "--json"]) == 0
        assert json.loads(capsys.readouterr().out) == {
            "package": name, "permission": "clipboard.write",
            "granted": ["agents.prompt", "clipboard.write"]}


def test_a_newcomers_mistakes_are_told_alike_through_the_db_and_the_service(
        service, tmp_path, capsys) -> None:
    """A node type that is none, a node field unknown, of the wrong type or kept by the
    engine (added or set), one port of a port arrow, a workspace or node that is not
    there: the same JSON error,
    code and reason through --db and --service (round 34: through the service a bad type
    was ``INVALID_ARGUMENT: body.type: Input should be …`` and a field
    ``body.nme: Extra inputs are not permitted``, about a request body nobody here wrote;
    one port alone ``INVALID_ARROW … from_port and to_port``; and a
    missing workspace had reason ``missing-workspace`` there but null through --db)."""
    # GIVEN a workspace w1 with an agent a2 and a note n2 behind the service, and the same
    # behind a database of its own
    db = tmp_path / "own.db"
    (tmp_path / "proj").mkdir()
    assert run(capsys, service, "workspace", "add", "w1", str(tmp_path / "proj"))[0] == 0
    assert main(["workspace", "add", "w1", str(tmp_path / "proj"), "--db", str(db)]) == 0
    for node in (["a2", "agent"], ["n2", "note"]):
        assert run(capsys, service, "node", "add", "w1", *node)[0] == 0
        assert main(["node", "add", "w1", *node, "--db", str(db)]) == 0
    capsys.readouterr()
    for argv, wanted in (
            (["node", "add", "w1", "n1", "notes"], ("INVALID_NODE", "bad-type", "'notes'")),
            (["node", "add", "w1", "a1", "agent", "--set", "nme=Bob"],
             ("INVALID_NODE", "bad-field", "unknown field 'nme' for a node of type agent")),
            (["node", "add", "w1", "a1", "agent", "--set", "dangerous=yes"],
             ("INVALID_NODE", "bad-field", "field 'dangerous' has the wrong type")),
            (["node", "add", "w1", "a1", "agent", "--set", "screen=x"],
             ("INVALID_NODE", "bad-field", "screen")),
            (["node", "add", "w9", "n1", "note"], ("NOT_FOUND", "missing-workspace", "'w9'")),
            (["arrow", "add", "w1", "e1", "n1", "n2", "--from-port", "text"],
             (None, None, "--from-port and --to-port go together")),
            # node set judges the change as the engine does (round 35: through the
            # service these were body.nme, body.dangerous.bool, body.screen, body.type,
            # and a missing node's bad field body.nme, where --db said NOT_FOUND)
            (["node", "set", "a2", "--set", "nme=Bob"],
             ("INVALID_NODE", "bad-field", "unknown field 'nme' for a node of type agent")),
            (["node", "set", "a2", "--set", "dangerous=yes"],
             ("INVALID_NODE", "bad-field", "field 'dangerous' has the wrong type")),
            (["node", "set", "a2", "--set", "screen=x"],
             ("INVALID_NODE", "bad-field", "screen is kept by the engine")),
            (["node", "set", "a2", "--set", "type=note"],
             ("INVALID_NODE", "bad-field", "id and type cannot change")),
            (["node", "set", "a2", "--set", "layout=3"],
             ("INVALID_NODE", "bad-field", "layout needs finite numbers")),
            (["node", "set", "n2", "--set", "dangerous=true"],
             ("INVALID_NODE", "bad-field", "unknown field 'dangerous' for a node of type note")),
            (["node", "set", "nope", "--set", "nme=Bob"],
             ("NOT_FOUND", "missing-node", "no node 'nope'"))):
        # WHEN each mistake is made both ways
        said = []
        for where in (["--service", service[0], "--token-file", str(service[1])],
                      ["--db", str(db)]):
            code = main([*argv, *where, "--json"])
            out, err = capsys.readouterr()
            assert (code, out) == (2, ""), (argv, where, code, out, err)
            said.append(json.loads(err)["error"])
        # THEN both say the same, naming what was wrong
        assert said[0] == said[1], (argv, said)
        code, reason, named = wanted
        assert (said[0].get("code"), said[0].get("reason")) == (code, reason), said[0]
        assert named in said[0]["message"], said[0]


def test_a_default_socket_without_db_names_the_database_to_give(
        tmp_path, monkeypatch, capsys) -> None:
    """--service app.db.serve/serve.sock without --db or --token-file: the token is looked
    for beside the default database, and the error names ``--db app.db`` (round 34: a
    newcomer who gave the socket `arrowgate serve --db app.db` printed was told only "or
    --db of its database")."""
    # GIVEN a home with no default database, and a socket path as serve prints it
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ARROWGATE_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    # WHEN a verb is given that socket alone
    code = main(["hold", "list", "--service", "app.db.serve/serve.sock"])
    # THEN exit 2, naming the database whose socket it is
    err = capsys.readouterr().err
    assert code == 2 and "cannot read the token file" in err, err
    assert err.rstrip().endswith("or --db of its database: --db app.db for its socket "
                                 "app.db.serve/serve.sock)"), err
