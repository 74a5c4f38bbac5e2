"""A verb run with standard error closed (``2>&-``) still keeps standard output for its
data alone: its error is dropped, never written where the data goes (Python's ``print``
to a missing ``sys.stderr`` writes to ``sys.stdout``); the exit code still tells. With
standard input or output closed it ends as it would with them empty, never a traceback.

(Found in round 25: ``arrowgate log export --db missing 2>&-`` wrote its error line into
standard output, and ``replay --json`` a text line into its JSON Lines.)
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.unit.cli_process import ARROWGATE


def _run(*args: str, close: int) -> subprocess.CompletedProcess[str]:
    """`arrowgate ARGS` with descriptor ``close`` closed, the other two captured."""
    kept = {0: subprocess.DEVNULL, 1: subprocess.PIPE, 2: subprocess.PIPE}
    return subprocess.run([ARROWGATE, *args], text=True, timeout=60, stdin=kept[0],
                          stdout=kept[1], stderr=kept[2], pass_fds=(),
                          preexec_fn=lambda: os.close(close))


def test_an_error_with_stderr_closed_never_reaches_stdout(tmp_path: Path) -> None:
    for verb in (["log", "export"], ["log", "show", "--json"], ["reach", "c1"]):
        done = _run(*verb, "--db", str(tmp_path / "missing.db"), close=2)
        assert done.returncode == 2, (verb, done)
        assert done.stdout == "", (verb, done.stdout)


def test_replay_json_with_stderr_closed_writes_only_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    done = _run("replay", "--json", str(bad), close=2)
    assert done.returncode == 2
    assert [json.loads(line) for line in done.stdout.splitlines()][-1]["invalid"] == 1


def test_a_question_with_stdin_closed_is_a_refusal(tmp_path: Path) -> None:
    """No terminal and no standard input at all: refused as without a terminal (exit 1)."""
    done = _run("hold", "approve", "p1", "--db", str(tmp_path / "missing.db"), close=0)
    assert done.returncode == 1 and "refused" in done.stderr and "Traceback" not in done.stderr


def test_mcp_with_stdout_closed_still_says_it_has_no_client(tmp_path: Path) -> None:
    """A stand-in for a closed stream never hides that the stream is closed from a verb
    that serves on it: `arrowgate mcp` with standard output closed is refused, exit 2."""
    token = tmp_path / "t"
    token.write_text("t0k3n")
    token.chmod(0o600)
    done = _run("mcp", "--agent", "a1", "--service", str(tmp_path / "s.sock"),
                "--token-file", str(token), close=1)
    assert done.returncode == 2 and "standard output is closed" in done.stderr, done
