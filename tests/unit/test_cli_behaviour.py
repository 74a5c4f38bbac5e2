"""The command line behaves as people expect (issue 13): terminals, --db, exit codes,
--json, --version, help, log subcommands, times, outcomes, columns, hints."""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engine.app.cli import LOG_OUTCOMES, build_parser, main
from engine.app.times import format_local, parse_time

ARROWGATE = str(Path(sys.executable).parent / "arrowgate")


def run(*args: str, stdin: Any = subprocess.DEVNULL, **env: str) -> subprocess.CompletedProcess[str]:
    """The real `arrowgate` command, with no terminal (as in CI or a script)."""
    import os

    # A generous bound only so that a hang fails the test instead of the run.
    return subprocess.run([ARROWGATE, *args], stdin=stdin, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **env})


# -- no terminal ----------------------------------------------------------------------


def test_demo_without_a_terminal_prints_the_narrative_and_exits_0(tmp_path: Path) -> None:
    """`arrowgate demo </dev/null` never starts the TUI; its hints name the --db given."""
    db = tmp_path / "my app.db"
    done = run("demo", "--db", str(db), "--folder", str(tmp_path / "proj"))
    assert done.returncode == 0, done.stderr
    assert "arrow log:" in done.stdout and "chain verified" in done.stdout
    assert "not a terminal; printed the narrative only" in done.stderr
    # The hints work as printed: they name this database, quoted for the shell.
    assert f"`arrowgate tui --demo --db '{db}'`" in done.stdout
    assert f"`arrowgate log show --db '{db}'`" in done.stdout
    assert "Traceback" not in done.stderr


def test_tui_without_a_terminal_refuses_at_once(tmp_path: Path) -> None:
    """`arrowgate tui </dev/null` exits non-zero with a message on stderr, creating nothing."""
    db = tmp_path / "app.db"
    done = run("tui", "--db", str(db))
    assert done.returncode == 2
    assert "needs a terminal" in done.stderr and done.stdout == ""
    # One line, saying so once and what reads the database without one (round 31:
    # "arrowgate: arrowgate tui needs a terminal", and nothing more).
    assert done.stderr.count("\n") == 1 and done.stderr.count("arrowgate") == 2, done.stderr
    assert "`arrowgate log show`" in done.stderr
    assert not db.exists()


# -- --db -------------------------------------------------------------------------------


READERS = [["log", "show"], ["log", "export"], ["log", "verify"], ["reach", "c1"], ["export"],
           ["tui"]]


@pytest.mark.parametrize("verb", READERS, ids=" ".join)
def test_readers_refuse_a_missing_database_and_create_nothing(
        verb: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """log, reach, export, tui and verify refuse a path that does not exist; no file, no folder."""
    monkeypatch.setattr("engine.app.cli.interactive", lambda: True)  # past the tui's tty check
    missing = tmp_path / "no" / "such" / "app.db"
    assert main([*verb, "--db", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"no database at {missing}" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("verb", [*READERS[:-1], ["demo", "--no-tui"]], ids=" ".join)
@pytest.mark.parametrize("content", ["text", "sqlite"])
def test_a_file_that_is_not_an_arrowgate_database_is_one_line(
        verb: list[str], content: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A text file or another program's SQLite file gives one line on stderr, exit 2."""
    path = tmp_path / "notes.txt"
    if content == "text":
        path.write_text("shopping list\n")
    else:
        conn = sqlite3.connect(path)
        conn.execute("create table recipes (name text)")
        conn.close()
    before = path.read_bytes()
    assert main([*verb, "--db", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "not a database" in err or "another program" in err
    assert path.read_bytes() == before  # nothing written into it


def test_not_a_database_from_the_real_command(tmp_path: Path) -> None:
    """The installed command prints one line, no traceback."""
    path = tmp_path / "x.db"
    path.write_text("hello")
    done = run("log", "verify", "--db", str(path))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "not a database" in done.stderr


# -- exit codes, streams, --version, help ------------------------------------------------


def test_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """0 ok; 1 a finding (a widening diff); 2 usage errors and invalid input."""
    old, new, bad = tmp_path / "old.json", tmp_path / "new.json", tmp_path / "bad.json"
    old.write_text(json.dumps({"name": "a.b", "version": "1.0.0", "permissions": {}}))
    new.write_text(json.dumps({"name": "a.b", "version": "2.0.0",
                               "permissions": {"clipboard.write": {}}}))
    bad.write_text(json.dumps({"name": "a.b", "version": "1.0.0", "permissions": {"made.up": {}}}))
    assert main(["diff", str(new), str(old)]) == 0  # narrowing only
    assert main(["diff", str(old), str(new)]) == 1  # widening needs consent: a finding
    assert main(["review", str(bad)]) == 2
    assert main(["review", str(tmp_path / "missing.json")]) == 2
    assert main(["no-such-verb"]) == 2
    assert main(["log", "show", "--colour"]) == 2
    assert main(["log"]) == 2
    err = capsys.readouterr().err
    assert "made.up" in err and "missing.json" in err and "invalid choice" in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    """--version prints the installed version."""
    from importlib.metadata import version

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"arrowgate {version('arrowgate')}"


def _parsers(parser: argparse.ArgumentParser, path: str = "arrowgate") -> Any:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def test_every_option_has_help() -> None:
    """Every option and argument of every verb, plugged-in ones too, says what it does."""
    seen = set()
    for path, parser in _parsers(build_parser()):
        seen.add(path)
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help and action.help != argparse.SUPPRESS, (path, action.dest)
    assert {"arrowgate log show", "arrowgate log export", "arrowgate log verify",
            "arrowgate tui", "arrowgate demo"} <= seen


@pytest.mark.parametrize("verb", ["show", "export", "verify"])
def test_log_verbs_are_subcommands_with_their_own_help(
        verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`arrowgate log show --help` is the help of show, not of log."""
    assert main(["log", verb, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: arrowgate log {verb}")
    assert ("--outcome" in out) == (verb != "verify")


def test_the_help_lists_every_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    """`arrowgate --help` lists the exit codes README "Command line" gives every verb:
    0, 1, 2 and 130 for an interrupt (round 28: 130 was left out, as if Ctrl-C ended a
    verb with one of the other three)."""
    assert main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    codes = text[text.index("Exit codes:"):]
    for said in ("0 ok", "1 a finding", "2 a usage error or invalid input",
                 "130 interrupted (Ctrl-C)"):
        assert said in codes, codes


# -- the log verbs ------------------------------------------------------------------------


@pytest.fixture
async def logged(world: Any, db_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """Three rows at t = 1000 (the virtual clock): queued, denied, ok."""
    await world.call("c1", "agents.prompt", "a1", {"text": "hi \x1b[31mred"})
    await world.call("c1", "agents.prompt", "a2", {"text": "no arrow"})
    await world.call("c1", "terminals.run", "t1", {"command": "make"})
    capsys.readouterr()
    return db_path


def _out(capsys: pytest.CaptureFixture[str], *argv: str, code: int = 0) -> str:
    assert main(list(argv)) == code
    return capsys.readouterr().out


def test_log_show_json_has_the_record_shape_of_export(
        logged: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`log show --json` prints exactly the records `log export` writes."""
    shown = _out(capsys, "log", "show", "--json", "--db", str(logged))
    exported = _out(capsys, "log", "export", "--db", str(logged))
    assert shown == exported
    assert [json.loads(x)["schema"] for x in shown.splitlines()] == \
        ["arrowgate.decision/1"] * 3
    verdict = json.loads(_out(capsys, "log", "verify", "--json", "--db", str(logged)))
    assert verdict == {"ok": True, "rows": 3, "first_bad": None, "problem": None}


def test_log_show_prints_local_times_in_aligned_columns(
        logged: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Readable local times; every column starts where its header does; escapes inert."""
    lines = _out(capsys, "log", "show", "--db", str(logged)).splitlines()
    header, rows = lines[0], lines[1:]
    assert header.split()[:3] == ["seq", "time", "(local)"] and len(rows) == 3
    stamp = format_local(1000.0)
    for column in ("arrow", "outcome", "payload"):
        at = header.index(column)
        for row in rows:
            assert row[at - 1] == " " and row[at] != " ", (column, row)
    assert all(stamp in row for row in rows)
    assert "\x1b" not in "\n".join(lines) and "\\x1b[31mred" in rows[0]


@pytest.mark.parametrize(("since", "until", "count"), [
    ("1000", None, 3), ("1000.5", None, 0), (None, "999", 0),
    ("1970-01-01T00:16:40Z", None, 3), ("1970-01-01T00:16:41+00:00", None, 0),
    ("10m", None, 0), (None, "2h", 3),
])
def test_since_and_until_read_spans_iso_times_and_epoch_seconds(
        logged: Path, capsys: pytest.CaptureFixture[str], since: str | None, until: str | None,
        count: int) -> None:
    """--since/--until take 10m, 2h, ISO times (with offsets) and epoch seconds."""
    argv = ["log", "export", "--db", str(logged)]
    argv += ["--since", since] if since else []
    argv += ["--until", until] if until else []
    assert len(_out(capsys, *argv).splitlines()) == count


@pytest.mark.parametrize("argv", [["--since", "yesterday"], ["--until", "nan"],
                                  ["--outcome", "allowed"], ["--outcome", "DENIED"]])
def test_bad_times_and_unknown_outcomes_are_usage_errors(
        logged: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    """A time that is not one, or an outcome the log never has, exits 2 naming it."""
    assert main(["log", "show", "--db", str(logged), *argv]) == 2
    captured = capsys.readouterr()
    assert argv[1] in captured.err and captured.out == ""


def test_outcome_filter(logged: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--outcome takes every outcome of SPEC §8 and filters by it."""
    assert {"ok", "denied", "rate-limited", "approved", "cancelled"} <= set(LOG_OUTCOMES)
    rows = _out(capsys, "log", "export", "--outcome", "denied", "--db", str(logged))
    assert [json.loads(r)["result"]["code"] for r in rows.splitlines()] == ["PERMISSION_DENIED"]


def test_the_time_parser_is_shared_and_reads_naive_times_in_the_shown_zone() -> None:
    """One parser: the TUI reads naive ISO times as UTC, `log show` as local time."""
    from tui.screens.arrow_log import parse_filter

    assert parse_time("2h", 10_000.0) == 2_800.0
    assert parse_time("1700000000", 0) == 1_700_000_000.0
    assert parse_time("2027-01-15T08:00", 0) == 1_800_000_000.0
    local = parse_time("2027-01-15T08:00", 0, naive="local")
    assert local == time.mktime(time.strptime("2027-01-15T08:00", "%Y-%m-%dT%H:%M"))
    assert parse_filter("since:2027-01-15T08:00Z", 0).since == 1_800_000_000.0
    with pytest.raises(ValueError, match="inf"):
        parse_time("inf", 0)


@pytest.mark.parametrize("kind", ["fifo", "empty"])
def test_a_fifo_or_an_empty_file_is_refused_by_readers(
        kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A FIFO is never opened (it would block); an empty file holds no arrowgate data."""
    import os

    path = tmp_path / "db"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.write_bytes(b"")
    assert main(["log", "show", "--db", str(path)]) == 2
    err = capsys.readouterr().err
    assert ("not a regular file" if kind == "fifo" else "an empty file") in err


def test_a_tilde_in_arrowgate_db_is_the_home_folder(monkeypatch, tmp_path) -> None:
    """``$ARROWGATE_DB=~/x.db`` (a quoted shell value, a service file) names the home
    folder's file, as ``--db ~/x.db`` does, not a folder called ``~`` in the current one.
    (Found in round 16 by a helper.)"""
    from engine.store.database import default_database_path

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ARROWGATE_DB", "~/data/x.db")
    assert default_database_path() == tmp_path / "data" / "x.db"
