"""Each verb's ``--help`` says what a newcomer needs and nothing untrue: the database
``--db`` names when not given (``$ARROWGATE_DB``, else the default path, never "the
embedded default"), whether it must exist, the exit codes of the write verbs (a refusal
or finding is 1: a refused call, a revoke of what was not granted), ``serve``'s defaults,
and that an approval naming another pending version is refused as stale.

(Found in round 29, reading each verb's help once as a newcomer.)
"""

from __future__ import annotations

import pytest

from engine.app.cli import main

WRITE_VERBS = [["workspace", "add"], ["node", "add"], ["node", "set"], ["node", "remove"],
               ["arrow", "add"], ["arrow", "remove"], ["package", "offer"],
               ["package", "review"], ["package", "install"], ["package", "grant"],
               ["package", "revoke"], ["package", "approve"], ["package", "decline"],
               ["call"], ["hold", "list"], ["hold", "approve"], ["hold", "reject"]]
DEFAULT = "$ARROWGATE_DB or ~/.local/share/arrowgate/arrowgate.db"


def _help(capsys: pytest.CaptureFixture[str], *verb: str) -> str:
    assert main([*verb, "--help"]) == 0
    # One line, as argparse wraps it at the terminal's width.
    return " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("verb", WRITE_VERBS, ids=" ".join)
def test_a_write_verbs_help_names_the_default_database_and_the_exit_codes(
        verb: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    said = _help(capsys, *verb)
    assert "embedded default" not in said and DEFAULT in said, said
    exists = ("created with its folder when missing" if verb == ["workspace", "add"]
              else "must exist")
    assert exists in said, said
    assert "Exit codes: 0 done; 1 a refusal or a finding" in said, said
    assert "2 usage or invalid input" in said and "130 interrupted" in said, said


def test_serve_names_its_default_database_and_heartbeat(
        capsys: pytest.CaptureFixture[str]) -> None:
    said = _help(capsys, "serve")
    assert "embedded default" not in said and DEFAULT in said, said
    assert "created with its folder when missing" in said, said
    assert "seconds between event-stream heartbeats (default: 15)" in said, said


def test_revoke_and_approve_say_what_they_refuse(capsys: pytest.CaptureFixture[str]) -> None:
    assert "exit 1 when it was not granted" in _help(capsys, "package", "revoke")
    said = _help(capsys, "package", "approve")
    assert "another version pending now is refused as stale" in said, said


def test_serve_and_mcp_say_how_they_stop_and_their_exit_codes(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`serve --help` says what it prints, how it stops and its exit codes; `mcp --help`
    its exit codes (round 34: both had none, where every other verb's help has them)."""
    said = _help(capsys, "serve")
    assert "prints its address" in said and "then `ready`" in said, said
    assert "SIGTERM, SIGINT (Ctrl-C) or SIGHUP (its terminal gone) stops it" in said, said
    assert "SIGINT or SIGHUP ignored when it starts (a shell's background job, nohup) stays " \
        "ignored" in said, said
    assert "Exit codes: 0 stopped by SIGTERM, SIGINT or SIGHUP once serving; 2 a start " \
        "refused" in said, said
    assert "130 interrupted (Ctrl-C) while it starts" in said, said
    said = _help(capsys, "mcp")
    assert "Exit codes: 0 its input ended or its client closed its end; 1 its output " \
           "failed" in said, said
    assert "2 usage or invalid input" in said and "130 interrupted" in said, said
