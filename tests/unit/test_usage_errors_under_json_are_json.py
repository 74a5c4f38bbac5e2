"""A usage error (an unknown flag, a missing argument, a bad choice) is answered as every
other error of a verb asked for ``--json``: one JSON object on standard error, nothing on
standard output, exit 2. Without ``--json`` it stays argparse's usage and one line, and
that line shows what was typed inert (an argument may hold ESC or OSC 52 sequences a
script passed on from a file's name).

(Found in round 25: ``--json`` promised JSON, but argparse's errors printed its usage text
under it, so a script reading standard error as JSON failed on ``usage: arrowgate …``;
and ``unrecognized arguments`` echoed an argument's escape sequences raw.)
"""

from __future__ import annotations

import json

import pytest

from engine.app.cli import main


@pytest.mark.parametrize("argv, said", [
    (["log", "show", "--json", "--bogus"], "unrecognized arguments: --bogus"),
    (["log", "show", "--js", "--bogus"], "unrecognized arguments: --bogus"),
    (["log", "show", "--json", "--outcome", "nope"], "invalid choice: 'nope'"),
    (["log", "show", "--json", "--since", "banana"], "argument --since"),
    (["log", "verify", "--json", "export.jsonl", "extra"], "unrecognized arguments: extra"),
    (["call", "--json"], "the following arguments are required: card, call"),
    (["package", "install", "--json"], "the following arguments are required: name"),
    (["replay", "--json"], "the following arguments are required: CASE.json"),
    (["review", "--json"], "the following arguments are required: MANIFEST"),
    (["import", "b.canvas", "--json", "--dry-run", "--review-sha256", "ab"],
     "not allowed with argument"),
    (["export", "--json", "--bogus"], "unrecognized arguments: --bogus"),
    (["--json", "log", "show"], "unrecognized arguments: --json"),
    (["log", "--json"], "required"),
    (["hold", "approve", "--json", "p1", "--sha256"], "expected one argument"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_a_usage_error_under_json_is_one_json_object(
        capsys: pytest.CaptureFixture[str], argv: list[str], said: str) -> None:
    """GIVEN --json WHEN argparse refuses the arguments THEN stderr is one JSON line
    naming the problem, stdout is empty, exit 2."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    error = json.loads(lines[0])["error"]
    assert error["code"] == "USAGE" and said in error["message"], error
    assert error["usage"].startswith("arrowgate"), error


def test_a_usage_error_without_json_is_argparses_usage_and_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    """GIVEN no --json WHEN a flag is unknown THEN the usage and 'error:' as before, exit 2."""
    assert main(["log", "show", "--bogus"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: arrowgate")
    assert err.rstrip().endswith("error: unrecognized arguments: --bogus")


def test_a_usage_error_shows_what_was_typed_inert(capsys: pytest.CaptureFixture[str]) -> None:
    """GIVEN an argument holding ESC, OSC 52 and a bidi override WHEN it is refused THEN
    the error shows them as visible escapes, never raw."""
    hostile = "\x1b]52;c;aGk=\x07\x1b[2J\u202e"
    for argv in (["log", "show", hostile], ["log", "show", "--json", hostile]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err, repr(err)
        assert "unrecognized arguments" in err


@pytest.mark.parametrize("argv, verb", [
    (["log", "show", "--bogus"], "arrowgate log show"),
    (["log", "verify", "export.jsonl", "extra"], "arrowgate log verify"),
    (["call", "c1", "agents.prompt", "a1", "--bogus"], "arrowgate call"),
    (["node", "add", "w1", "n1", "note", "--bogus"], "arrowgate node add"),
    (["hold", "list", "--bogus"], "arrowgate hold list"),
    (["mcp", "--agent", "a1", "--bogus"], "arrowgate mcp"),
    (["serve", "--bogus"], "arrowgate serve"),
    (["demo", "--bogus"], "arrowgate demo"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_an_unknown_argument_is_told_with_the_verbs_usage(
        capsys: pytest.CaptureFixture[str], argv: list[str], verb: str) -> None:
    """GIVEN a verb and an argument it does not take WHEN it is refused THEN the usage
    shown and the error's name are the verb's (README: "the verb's `usage` line"), not
    the top level's `arrowgate [-h] [--version] COMMAND ...`, which names no flag of it;
    with --json as without."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: {verb} "), err
    assert f"{verb}: error: unrecognized arguments:" in err, err
    assert main([*argv, "--json"]) == 2
    error = json.loads(capsys.readouterr().err)["error"]
    assert error["usage"].startswith(f"{verb} "), error
    assert error["message"].startswith(f"{verb}: unrecognized arguments: "), error
