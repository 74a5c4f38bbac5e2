"""The command line's write verbs, on the database (``--db``): every verb, exit codes, consent."""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.cli import build_parser, main
from engine.app.cli_write import Failure, inert, service_transport
from engine.effects.operator import OperatorCheck

PROMPTER = {"name": "acme.prompter", "version": "1.0.0",
            "permissions": {"agents.prompt": {}, "clipboard.write": {"optional": True}}}


@pytest.fixture
def person(monkeypatch: pytest.MonkeyPatch) -> None:
    """A person operates this process (the operator check passes)."""
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))


def run(capsys: pytest.CaptureFixture[str], *argv: str, stdin: str | None = None,
        monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    """main(argv) → (exit code, stdout, stderr)."""
    if stdin is not None:
        assert monkeypatch is not None
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def package(tmp_path: Path, raw: dict[str, Any]) -> Path:
    """A package folder with a manifest and one more file."""
    folder = tmp_path / raw["name"]
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(raw))
    (folder / "index.js").write_text("// the card\n")
    return folder


@pytest.fixture
def canvas(tmp_path: Path, capsys: pytest.CaptureFixture[str], person: None) -> Path:
    """A workspace w1 with card c1 (acme.prompter, installed) and agents a1 and yolo (dangerous).

    Built with the verbs themselves; no arrow yet.
    """
    db = str(tmp_path / "ag.db")
    (tmp_path / "proj").mkdir(exist_ok=True)  # a workspace folder must exist
    assert run(capsys, "workspace", "add", "w1", str(tmp_path / "proj"), "--db", db)[0] == 0
    assert run(capsys, "package", "offer", str(package(tmp_path, PROMPTER)), "--db", db)[0] == 0
    code, out, _ = run(capsys, "package", "review", "acme.prompter", "--db", db, "--json")
    assert code == 0
    review = json.loads(out)
    code, out, err = run(capsys, "package", "install", "acme.prompter", "--db", db,
                         "--review-hash", review["hash"], "--json")
    assert code == 0, err
    assert json.loads(out)["granted"] == ["agents.prompt"]
    for argv in (["c1", "card", "--set", "package=acme.prompter"],
                 ["a1", "agent", "--set", "name=A1", "--set", "tool=claude-code"],
                 ["yolo", "agent", "--set", "name=YOLO", "--set", "dangerous=true"]):
        code, _, err = run(capsys, "node", "add", "w1", *argv, "--db", db)
        assert code == 0, err
    return Path(db)


def test_a_refusal_for_want_of_an_arrow_then_the_arrow(canvas, capsys) -> None:
    """`call` prints the Decision: not-connected exits 1; after `arrow add` it is queued, exit 0."""
    db = str(canvas)
    code, out, _ = run(capsys, "call", "c1", "agents.prompt", "a1", "--args",
                       '{"text": "hello"}', "--db", db, "--json")
    assert code == 1
    decision = json.loads(out)
    assert (decision["code"], decision["reason"]) == ("PERMISSION_DENIED", "not-connected")
    # The keys the service answers (`decision_json`), null when unset: a script reads the
    # same object through --db and --service.
    assert set(decision) == {"outcome", "call", "card", "package", "target", "permission",
                             "code", "reason", "arrow", "message", "retry_after", "prompt",
                             "value"}
    assert decision["prompt"] is None and decision["value"] is None
    code, out, err = run(capsys, "arrow", "add", "w1", "e1", "c1", "a1", "--db", db)
    assert (code, out.strip()) == (0, "arrow e1 added: c1 -> a1"), err
    code, out, _ = run(capsys, "call", "c1", "agents.prompt", "a1", "--args",
                       '{"text": "hello"}', "--db", db)
    assert code == 0 and out.startswith("queued")
    code, out, _ = run(capsys, "arrow", "remove", "e1", "--db", db, "--json")
    assert code == 0 and json.loads(out) == {"id": "e1", "removed": True}
    code, out, _ = run(capsys, "call", "c1", "agents.prompt", "a1", "--args",
                       '{"text": "again"}', "--db", db, "--json")
    assert code == 1 and json.loads(out)["reason"] == "not-connected"


def test_node_set_and_remove(canvas, capsys) -> None:
    """`node set` changes fields (JSON values), `node remove` takes the node away."""
    db = str(canvas)
    code, out, _ = run(capsys, "node", "set", "a1", "--set", "dangerous=true", "--db", db,
                       "--json")
    assert code == 0 and json.loads(out)["dangerous"] is True
    assert run(capsys, "node", "remove", "a1", "--db", db)[0] == 0
    engine = Engine.open(canvas)
    try:
        assert engine.state.canvas.node("a1") is None
    finally:
        engine.close()


def test_grant_and_revoke(canvas, capsys, monkeypatch) -> None:
    """`package grant` an optional permission (shown, then confirmed), `package revoke` it
    again."""
    db = str(canvas)
    code, out, err = run(capsys, "package", "grant", "acme.prompter", "clipboard.write",
                         "--db", db, stdin="y\n", monkeypatch=monkeypatch)
    assert code == 0, err
    assert "acme.prompter 1.0.0" in out and "  clipboard.write (low)" in out
    code, out, _ = run(capsys, "call", "c1", "clipboard.copyText", "--args", '{"text": "x"}',
                       "--db", db, "--json")
    assert code == 0 and json.loads(out)["outcome"] == "ok"
    assert run(capsys, "package", "revoke", "acme.prompter", "clipboard.write", "--db", db)[0] == 0
    code, out, _ = run(capsys, "call", "c1", "clipboard.copyText", "--args", '{"text": "y"}',
                       "--db", db, "--json")
    assert code == 1 and json.loads(out)["reason"] == "not-granted"


def test_package_revoke_of_what_was_not_granted_says_so(canvas, capsys) -> None:
    """A revoke of a permission never granted: "was not granted; nothing changed", exit 1,
    no history row (SPEC §4.3; README decisions)."""
    db = str(canvas)
    engine = Engine.open(canvas)
    rows = len(engine.history.entries())
    engine.close()
    code, out, err = run(capsys, "package", "revoke", "acme.prompter", "clipboard.write",
                         "--db", db)
    assert (code, out, err) == (
        1, "acme.prompter: clipboard.write was not granted; nothing changed\n", "")
    code, out, err = run(capsys, "package", "revoke", "acme.prompter", "clipboard.write",
                         "--db", db, "--json")
    assert code == 1 and err == ""
    assert json.loads(out) == {"package": "acme.prompter", "not_granted": "clipboard.write"}
    engine = Engine.open(canvas)
    try:
        assert len(engine.history.entries()) == rows
    finally:
        engine.close()
    # AND a granted one is revoked as before
    code, out, err = run(capsys, "package", "revoke", "acme.prompter", "agents.prompt",
                         "--db", db, "--json")
    assert code == 0 and json.loads(out) == {"package": "acme.prompter",
                                             "revoked": "agents.prompt"}, err


def test_write_verbs_answer_in_plain_sentences(tmp_path, canvas, capsys, monkeypatch) -> None:
    """Each write verb's answer (without --json) is one plain sentence saying what was
    done to what, never words run together: not "prompt p2: queued prompt p2: delivered"
    (hold approve), "held: held: …" (call), "workspace w2 (/folder)" or "node a1:
    name=…" (no verb at all). A question answered from a pipe ends its line first.
    (Found in round 28.)"""
    db = str(canvas)
    (tmp_path / "two").mkdir()
    folder = (tmp_path / "two").resolve()
    said = {}
    for verb, argv in (
            ("workspace add", ["workspace", "add", "w2", str(folder)]),
            ("node set", ["node", "set", "a1", "--set", "name=A2"]),
            ("arrow add", ["arrow", "add", "w1", "e1", "c1", "a1"]),
            ("arrow add ey", ["arrow", "add", "w1", "ey", "c1", "yolo"]),
            ("call queued", ["call", "c1", "agents.prompt", "a1", "--args", '{"text": "hi"}']),
            ("call held", ["call", "c1", "agents.prompt", "yolo", "--args", '{"text": "go"}']),
            ("call held again", ["call", "c1", "agents.prompt", "yolo", "--args",
                                 '{"text": "again"}'])):
        code, out, err = run(capsys, *argv, "--db", db)
        assert code == 0, (verb, err)
        said[verb] = out
    assert said["workspace add"] == f"workspace w2 added (folder {folder})\n"
    assert said["node set"] == 'node a1 changed: name="A2"\n'
    assert said["arrow add"] == "arrow e1 added: c1 -> a1\n"
    assert said["call queued"] == "queued: card c1 (acme.prompter) agents.prompt\n"
    first, second = (json.loads(run(capsys, "hold", "list", "--db", db, "--json")[1]))
    assert said["call held"] == (f"held: prompt {first['id']} to yolo waits for a person's "
                                 "OK (dangerous mode)\n")
    code, out, err = run(capsys, "hold", "approve", first["id"], "--db", db, stdin="y\n",
                         monkeypatch=monkeypatch)
    assert code == 0, err
    # The question, answered from a pipe (no echo of the answer): then the answer's line.
    assert out.endswith(f"approve prompt {first['id']}? [y/N] \n"
                        f"prompt {first['id']} approved: queued (delivered)\n"), out
    code, out, err = run(capsys, "hold", "reject", second["id"], "--db", db)
    assert (code, out) == (0, f"prompt {second['id']} rejected\n"), err


def test_grant_of_an_undeclared_permission_is_a_refusal(canvas, capsys, monkeypatch) -> None:
    """APPROVAL_REFUSED (undeclared) exits 1 with the engine's message on stderr."""
    code, out, err = run(capsys, "package", "grant", "acme.prompter", "fs.write", "--db",
                         str(canvas), "--json", stdin="y\n", monkeypatch=monkeypatch)
    assert code == 1 and out == ""
    # What was shown and asked goes to stderr before the error.
    assert json.loads(err[err.index('{"error"'):])["error"]["reason"] == "undeclared"


def test_hold_approve_shows_the_whole_text_inert_and_sends_its_digest(
        canvas, capsys, monkeypatch) -> None:
    """The held text is shown whole with control sequences escaped; the approval names its SHA-256."""
    db = str(canvas)
    assert run(capsys, "arrow", "add", "w1", "ey", "c1", "yolo", "--db", db)[0] == 0
    text = "line one\n\x1b[2J\x1b[31mrm -rf /\u202e\nlast line " + "x" * 500
    code, out, _ = run(capsys, "call", "c1", "agents.prompt", "yolo", "--args",
                       json.dumps({"text": text}), "--db", db, "--json")
    assert code == 0 and json.loads(out)["outcome"] == "held"
    code, out, _ = run(capsys, "hold", "list", "--db", db, "--json")
    (hold,) = json.loads(out)
    assert hold["text"] == text
    assert hold["text_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    code, out, _ = run(capsys, "hold", "approve", hold["id"], "--db", db, stdin="y\n",
                       monkeypatch=monkeypatch)
    assert code == 0, out
    assert "\x1b" not in out and "\u202e" not in out
    assert "\\x1b[2J\\x1b[31mrm -rf /\\u202e" in out and "x" * 500 in out
    assert f"prompt {hold['id']} approved: queued" in out
    assert run(capsys, "hold", "list", "--db", db)[1].strip() == "no held prompts"


def test_hold_approve_with_another_digest_is_stale_and_changes_nothing(
        canvas, capsys) -> None:
    """`--sha256` of other text: APPROVAL_REFUSED stale, exit 1; the prompt stays held."""
    db = str(canvas)
    run(capsys, "arrow", "add", "w1", "ey", "c1", "yolo", "--db", db)
    run(capsys, "call", "c1", "agents.prompt", "yolo", "--args", '{"text": "deploy"}', "--db", db)
    (hold,) = json.loads(run(capsys, "hold", "list", "--db", db, "--json")[1])
    code, _, err = run(capsys, "hold", "approve", hold["id"], "--sha256",
                       hashlib.sha256(b"something else").hexdigest(), "--db", db, "--json")
    assert code == 1 and json.loads(err)["error"]["reason"] == "stale"
    assert [h["id"] for h in json.loads(run(capsys, "hold", "list", "--db", db,
                                            "--json")[1])] == [hold["id"]]
    code, out, _ = run(capsys, "hold", "approve", hold["id"], "--sha256", hold["text_sha256"],
                       "--db", db, "--json")
    assert code == 0 and json.loads(out)["outcome"] == "queued"


def test_a_person_who_says_no_changes_nothing(canvas, capsys, monkeypatch) -> None:
    """Answering anything but y to the confirmation exits 1 and leaves the hold held."""
    db = str(canvas)
    run(capsys, "arrow", "add", "w1", "ey", "c1", "yolo", "--db", db)
    run(capsys, "call", "c1", "agents.prompt", "yolo", "--args", '{"text": "deploy"}', "--db", db)
    (hold,) = json.loads(run(capsys, "hold", "list", "--db", db, "--json")[1])
    code, _, err = run(capsys, "hold", "approve", hold["id"], "--db", db, stdin="n\n",
                       monkeypatch=monkeypatch)
    assert code == 1 and "not confirmed" in err
    code, out, _ = run(capsys, "hold", "reject", hold["id"], "--db", db, "--json")
    assert code == 0 and json.loads(out)["code"] == "PROMPT_REJECTED"


def test_package_approve_shows_the_diff_and_approves_the_pending_hash(
        canvas, capsys, monkeypatch) -> None:
    """An update pends; `package approve` prints the widening and approves that version."""
    new = {**PROMPTER, "version": "1.1.0",
           "permissions": {**PROMPTER["permissions"], "usage.read": {}}}
    (tmp := canvas.parent / "v2").mkdir()
    code, out, _ = run(capsys, "package", "offer", str(package(tmp, new)), "--db", str(canvas),
                       "--json")
    assert code == 0 and json.loads(out)["state"] == "pending"
    code, out, _ = run(capsys, "call", "c1", "agents.prompt", "a1", "--args", '{"text": "x"}',
                       "--db", str(canvas), "--json")
    assert code == 1 and json.loads(out)["code"] == "PACKAGE_PENDING"
    code, out, _ = run(capsys, "package", "approve", "acme.prompter", "--db", str(canvas),
                       stdin="yes\n", monkeypatch=monkeypatch)
    assert code == 0 and "widened: +usage.read" in out
    code, out, _ = run(capsys, "call", "c1", "usage.get", "--db", str(canvas), "--json")
    assert code == 0 and json.loads(out)["outcome"] == "ok"


def test_package_decline_discards_the_update_and_the_approved_version_holds(
        canvas, capsys) -> None:
    """`package decline`: the pending version is gone, the approved hash holds, cards work.

    (Found by a helper: a pending update could be neither declined nor undone.)"""
    engine = Engine.open(canvas)
    approved = engine.state.packages["acme.prompter"].hash
    engine.close()
    (tmp := canvas.parent / "v2").mkdir()
    folder = package(tmp, PROMPTER)
    (folder / "payload.js").write_text("fetch('https://evil.example')\n")
    code, out, _ = run(capsys, "package", "offer", str(folder), "--db", str(canvas), "--json")
    pending = json.loads(out)["hash"]
    assert code == 0 and pending != approved
    # A decline names the version seen: another hash is stale, and nothing changes.
    code, _, err = run(capsys, "package", "decline", "acme.prompter", "--pending-hash",
                       "sha256:" + "0" * 64, "--db", str(canvas))
    assert code == 1 and "stale" in err
    code, out, err = run(capsys, "package", "decline", "acme.prompter", "--pending-hash",
                         pending, "--db", str(canvas), "--json")
    assert code == 0, err
    assert json.loads(out) == {"package": "acme.prompter", "hash": approved, "declined": True}
    code, out, _ = run(capsys, "call", "c1", "agents.list", "--db", str(canvas), "--json")
    assert code == 0 and json.loads(out)["outcome"] == "ok"
    # Nothing waits any more: a second decline is refused, naming why, and changes nothing.
    code, _, err = run(capsys, "package", "decline", "acme.prompter", "--db", str(canvas))
    assert code == 2 and "no version waiting for approval" in err


def test_install_with_a_stale_review_hash_installs_nothing(tmp_path, capsys, person) -> None:
    """`package install --review-hash` of another review: stale, exit 1, not installed."""
    db = str(tmp_path / "ag.db")
    run(capsys, "workspace", "add", "w1", str(tmp_path), "--db", db)
    run(capsys, "package", "offer", str(package(tmp_path, PROMPTER)), "--db", db)
    code, _, err = run(capsys, "package", "install", "acme.prompter", "--review-hash",
                       "sha256:" + "0" * 64, "--db", db)
    assert code == 1 and "stale" in err
    engine = Engine.open(db)
    try:
        assert not engine.state.packages["acme.prompter"].installed
    finally:
        engine.close()


@pytest.mark.parametrize("argv, message", [
    (["node", "add", "nope", "n9", "note"], "NOT_FOUND: no workspace 'nope'"),
    (["node", "add", "w1", "n9", "note", "--set", "text"], "--set 'text': write KEY=VALUE"),
    (["node", "add", "w1", "n9", "spaceship"], "INVALID_NODE"),
    (["node", "add", "w1", "n9", "note", "--set", "id=a1"], "the id is the positional ID"),
    (["node", "add", "w1", "n9", "note", "--set", "type=agent"],
     "the type is the positional TYPE"),
    (["call", "c1", "agents.prompt", "a1", "--args", "[1]"], "--args: must be a JSON object"),
    (["call", "c1", "agents.prompt", "a1", "--args", "{"], "--args: not JSON"),
    (["arrow", "add", "w1", "e9", "c1", "ghost"], "INVALID_ARROW"),
    (["arrow", "remove", "ghost"], "NOT_FOUND: no arrow 'ghost'"),
    (["hold", "reject", "p404"], "NOT_FOUND"),
])
def test_invalid_input_exits_2_naming_what_was_wrong(canvas, capsys, argv, message) -> None:
    """Bad input: exit 2, the message on stderr, nothing on stdout."""
    code, out, err = run(capsys, *argv, "--db", str(canvas))
    assert (code, out) == (2, "")
    assert message in err


def test_an_invalid_manifest_is_refused_with_its_problems(tmp_path, capsys, person) -> None:
    """MANIFEST_INVALID at install exits 2 and names the key; nothing is installed."""
    db = str(tmp_path / "ag.db")
    run(capsys, "workspace", "add", "w1", str(tmp_path), "--db", db)
    bad = {"name": "acme.bad", "version": "1.0.0", "permissions": {"teleport": {}}}
    assert run(capsys, "package", "offer", str(package(tmp_path, bad)), "--db", db)[0] == 0
    code, _, err = run(capsys, "package", "install", "acme.bad", "--review-hash", "x",
                       "--db", db)
    assert code == 2 and "MANIFEST_INVALID" in err and "teleport" in err


def test_no_database_and_usage_errors_exit_2(tmp_path, capsys) -> None:
    """A missing --db file and argparse's own usage errors are exit 2."""
    code, _, err = run(capsys, "hold", "list", "--db", str(tmp_path / "missing.db"))
    assert code == 2 and "no database at" in err
    assert main(["arrow", "add", "w1"]) == 2
    assert "required" in capsys.readouterr().err


def test_consent_verbs_are_refused_without_a_person(tmp_path) -> None:
    """Run from a pipe (no terminal), install is refused by the operator check: exit 1."""
    db = tmp_path / "ag.db"
    engine = Engine.open(db)
    engine.close()
    env = {k: v for k, v in os.environ.items()}
    for argv in (["package", "install", "acme.prompter", "--review-hash", "x"],
                 ["hold", "approve", "p1", "--sha256", "0" * 64],
                 ["arrow", "add", "w1", "e1", "c1", "a1"],
                 ["package", "grant", "acme.prompter", "clipboard.write"],
                 ["package", "approve", "acme.prompter", "--review-hash", "x"]):
        done = subprocess.run([sys.executable, "-m", "engine.app.cli", *argv, "--db", str(db)],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              env=env, timeout=120)
        assert done.returncode == 1, (argv, done.stderr)
        assert "refused: standard input is not a terminal" in done.stderr
        assert done.stdout == ""


def test_narrowing_verbs_need_no_person(canvas, capsys, monkeypatch) -> None:
    """Revoke, reject and arrow remove work without the operator check (they only
    narrow); removing a node does not (it destroys what a person put there)."""
    monkeypatch.setattr("engine.app.cli_write.operator_check",
                        lambda: OperatorCheck(False, "no person"))
    db = str(canvas)
    assert run(capsys, "package", "revoke", "acme.prompter", "agents.prompt", "--db", db)[0] == 0
    code, _, err = run(capsys, "node", "remove", "yolo", "--db", db)
    assert code == 1 and "node remove refused: no person" in err
    code, _, err = run(capsys, "node", "add", "w1", "n2", "note", "--db", db)
    assert code == 1 and "node add refused: no person" in err


def test_every_write_verb_option_has_help() -> None:
    """Each option and argument of each write verb says what it is for."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    verbs = 0
    for group in ("workspace", "node", "arrow", "package", "call", "hold"):
        top = sub.choices[group]
        acts = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
        leaves = list(acts[0].choices.values()) if acts else [top]
        for leaf in leaves:
            verbs += 1
            for action in leaf._actions:
                if isinstance(action, argparse._HelpAction):
                    continue
                assert action.help, f"{leaf.prog}: {action.dest} has no help"
    assert verbs == 17


def test_inert_escapes_controls_but_keeps_lines() -> None:
    """ESC, CR, bidi overrides and backslashes are shown escaped; newlines and tabs stay."""
    assert inert("a\tb\nc") == "a\tb\nc"
    assert inert("\x1b[31m\r\u202e\\x") == "\\x1b[31m\\x0d\\u202e\\\\x"


@pytest.mark.parametrize("address", ["http://example.com:80", "https://127.0.0.1:1",
                                     "http://10.0.0.1:80", "http://127.0.0.1",
                                     "http://127.0.0.1:80/v1"])
def test_service_address_must_be_a_socket_or_loopback(address) -> None:
    """The operator's token never goes to an address off this machine."""
    with pytest.raises(Failure) as exc:
        service_transport(address)
    assert exc.value.exit_code == 2


def test_a_missing_token_file_is_exit_2(tmp_path, capsys) -> None:
    """--service without a readable token: exit 2 naming the file."""
    code, _, err = run(capsys, "hold", "list", "--service", str(tmp_path / "s.sock"),
                       "--token-file", str(tmp_path / "none"))
    assert code == 2 and "cannot read the token file" in err


def test_json_answers_stay_alone_on_stdout_when_a_person_is_asked(
        tmp_path, capsys, monkeypatch, person) -> None:
    """install --json shows the review and asks on stderr; stdout is the JSON answer only."""
    db = str(tmp_path / "ag.db")
    run(capsys, "workspace", "add", "w1", str(tmp_path), "--db", db)
    run(capsys, "package", "offer", str(package(tmp_path, PROMPTER)), "--db", db)
    code, out, err = run(capsys, "package", "install", "acme.prompter", "--grant", "all",
                         "--db", db, "--json", stdin="y\n", monkeypatch=monkeypatch)
    assert code == 0, err
    assert json.loads(out)["granted"] == ["agents.prompt", "clipboard.write"]
    assert "Install acme.prompter 1.0.0" in err and "[y/N]" in err


def test_an_unreadable_package_file_is_exit_2(tmp_path, capsys, person) -> None:
    """A file of the package folder that cannot be read: exit 2 naming it, no traceback."""
    db = str(tmp_path / "ag.db")
    run(capsys, "workspace", "add", "w1", str(tmp_path), "--db", db)
    folder = package(tmp_path, PROMPTER)
    # A dangling link (chmod would not do: the tests may run as root, who reads anything).
    (folder / "broken").symlink_to(folder / "nowhere")
    code, out, err = run(capsys, "package", "offer", str(folder), "--db", db)
    assert (code, out) == (2, "")
    assert "cannot read" in err and "broken: No such file" in err


def test_offering_the_installed_version_again_says_nothing_is_to_approve(
        canvas, capsys) -> None:
    """`package offer` of the installed version's own folder: ``installed``, no approval
    suggested, and nothing pends (round 34: it said "an update: approve it", and the
    approval was refused ``nothing-pending``)."""
    # GIVEN acme.prompter installed from a folder
    folder = canvas.parent / "acme.prompter"
    installed = json.loads(run(capsys, "package", "review", "acme.prompter", "--db",
                               str(canvas), "--json")[1])["hash"]
    # WHEN that folder is offered again
    code, out, _ = run(capsys, "package", "offer", str(folder), "--db", str(canvas), "--json")
    # THEN it is the installed version, and the text says nothing is to approve
    assert code == 0 and json.loads(out) == {"package": "acme.prompter", "state": "installed",
                                             "hash": installed}
    code, out, _ = run(capsys, "package", "offer", str(folder), "--db", str(canvas))
    assert code == 0 and "nothing to approve" in out and "package approve" not in out
    code, _, err = run(capsys, "package", "approve", "acme.prompter", "--db", str(canvas),
                       "--json")
    assert code == 2 and json.loads(err)["error"]["reason"] == "nothing-pending"
