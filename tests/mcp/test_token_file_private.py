"""`arrowgate mcp` refuses an agent token file that group or others may read, or that is
not the user's, naming the file and its mode, as ssh refuses a private key (SPEC §10.1:
the service's own token file is mode 0600 and is not trusted otherwise).

Found in round 21: ``arrowgate mcp`` read its token from a file of any mode, so an agent
token left readable by everyone on the machine went on being used.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .conftest import ARROWGATE, bridge_env


def _run(token_file: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ARROWGATE), "mcp", "--agent", "a1", "--service", str(tmp_path / "no.sock"),
         "--token-file", str(token_file)], env=bridge_env(), input="",
        capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o666, 0o620])
def test_a_token_file_others_may_read_or_write_is_refused(tmp_path: Path, mode: int) -> None:
    token = tmp_path / "a1.token"
    token.write_text("agt_secret\n")
    token.chmod(mode)
    done = _run(token, tmp_path)
    assert done.returncode == 2, done
    assert str(token) in done.stderr and f"{mode:04o}" in done.stderr, done.stderr
    assert "chmod 600" in done.stderr
    assert token.read_text() == "agt_secret\n"  # left as it is


def test_a_link_to_an_open_token_file_is_judged_by_the_file(tmp_path: Path) -> None:
    token = tmp_path / "real.token"
    token.write_text("agt_secret\n")
    token.chmod(0o644)
    link = tmp_path / "a1.token"
    link.symlink_to(token)
    done = _run(link, tmp_path)
    assert done.returncode == 2 and "0644" in done.stderr, done


@pytest.mark.parametrize("mode", [0o600, 0o400])
def test_a_private_token_file_is_taken(tmp_path: Path, mode: int) -> None:
    token = tmp_path / "a1.token"
    token.write_text("agt_secret\n")
    token.chmod(mode)
    done = _run(token, tmp_path)
    # Read, then served until standard input ended: no complaint about the file.
    assert done.returncode == 0, done
    assert "token" not in done.stderr, done.stderr


def test_a_token_file_of_another_user_is_refused(tmp_path: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to give a file to another user")
    token = tmp_path / "a1.token"
    token.write_text("agt_secret\n")
    token.chmod(0o600)
    os.chown(token, 12345, 12345)
    done = _run(token, tmp_path)
    assert done.returncode == 2 and str(token) in done.stderr and "12345" in done.stderr, done


def test_a_missing_token_file_says_how_to_get_one(tmp_path: Path) -> None:
    """GIVEN no token file where it was named WHEN ``arrowgate mcp`` starts THEN exit 2,
    naming the file and how a token is made for the agent (the operator mints it through
    the service; the README's "Wiring your own coding agent" shows how), not only that
    the file does not exist (round 28: a person wiring their own agent was left there)."""
    token = tmp_path / "app.db.agents" / "a1.token"
    done = _run(token, tmp_path)
    assert done.returncode == 2, done
    assert f"cannot read the agent token {token}: No such file or directory" in done.stderr
    assert 'POST /v1/tokens {"principal": "agent:a1"}' in done.stderr, done.stderr
    assert "Wiring your own coding agent" in done.stderr, done.stderr
    # And the command that mints it into that very file (round 29: `arrowgate token mint`).
    assert f"arrowgate token mint agent:a1 --out {token}" in done.stderr, done.stderr
    assert not token.parent.exists()  # nothing made


def test_without_token_file_or_database_it_says_what_to_give(tmp_path: Path) -> None:
    """GIVEN ``--service`` but neither ``--token-file`` nor ``--db``, and no default
    database (a team's shared PostgreSQL store has no file to put the token beside)
    WHEN ``arrowgate mcp`` starts THEN exit 2 with one line saying to give
    ``--token-file`` (or ``--db`` of the served database) — not to build the demo's
    database, which would give the agent no token either (round 28)."""
    done = subprocess.run(
        [str(ARROWGATE), "mcp", "--agent", "a1", "--service", str(tmp_path / "s.sock")],
        env={**bridge_env(), "HOME": str(tmp_path), "ARROWGATE_DB": ""}, input="",
        capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "--token-file" in done.stderr and "--db" in done.stderr, done.stderr
    assert "arrowgate demo" not in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing made
