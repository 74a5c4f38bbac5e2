"""``--token-file`` is read as every file a person names is: never a blocking read.

The write verbs' ``--service`` reads the bearer token from ``--token-file`` (or the
database path plus ``.operator-token``). A name that points at a FIFO (or a
device, or a folder) is refused at once, naming the file (exit 2), as a case file,
a canvas or a manifest is (`engine.effects.userfile.read_user_bytes`).

(Found in round 24: the token was read with a plain ``open``, which on a FIFO with
no writer waits forever: ``arrowgate hold list --service S --token-file FIFO`` hung.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.unit.cli_process import run


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_fifo_as_token_file_is_refused_at_once(tmp_path: Path, json_flag: list[str]) -> None:
    fifo = tmp_path / "token"
    os.mkfifo(fifo)
    done = run("hold", "list", "--service", str(tmp_path / "serve.sock"), "--token-file",
               str(fifo), *json_flag, timeout=20)
    assert done.returncode == 2 and done.stdout == ""
    message = json.loads(done.stderr)["error"]["message"] if json_flag else done.stderr
    assert str(fifo) in message and "not a regular file" in message


def test_a_fifo_beside_the_database_is_refused_at_once(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    os.mkfifo(f"{db}.operator-token")
    done = run("call", "c1", "agents.prompt", "--db", str(db), "--service",
               str(tmp_path / "serve.sock"), timeout=20)
    assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr


def test_a_device_as_token_file_is_refused(tmp_path: Path) -> None:
    done = run("hold", "list", "--service", str(tmp_path / "serve.sock"), "--token-file",
               "/dev/zero", timeout=20)
    assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr
