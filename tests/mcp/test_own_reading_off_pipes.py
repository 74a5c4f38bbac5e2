"""`arrowgate mcp` reads and answers its input the same way whatever standard input and
output are (pipes, files, a terminal): a request whose id is a number with a fraction, a
batch, or a request whose id is no id at all is answered there too (SPEC §10.2: the agent
is never left waiting).

Found in round 22: off pipes the MCP SDK's own stdio transport served, so round 21's
answers to number ids and batches (and round 22's to ids of no id type) did not apply:
those requests were only logged, never answered.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .conftest import ARROWGATE, bridge_env

_INPUT = (b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{}}\n'
          b'[{"jsonrpc":"2.0","id":"b1","method":"tools/list","params":{}}]\n'
          b'{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list","params":{}}\n')


def _answers(text: str) -> list[Any]:
    """The answers written (notifications, such as a log message, left out)."""
    out = []
    for line in text.splitlines():
        message = json.loads(line)
        if not (isinstance(message, dict) and "method" in message):
            out.append(message)
    return out


@pytest.mark.parametrize("stdin_kind", ["file", "pipe"])
def test_answers_off_pipes_are_those_on_pipes(tmp_path: Path, stdin_kind: str) -> None:
    token = tmp_path / "a1.token"
    token.write_text("agt_secret\n")
    token.chmod(0o600)
    given = tmp_path / "in.jsonl"
    given.write_bytes(_INPUT)
    out = tmp_path / "out.jsonl"
    command = [str(ARROWGATE), "mcp", "--agent", "a1", "--service", str(tmp_path / "no.sock"),
               "--token-file", str(token)]
    with open(out, "wb") as stdout, open(given, "rb") as stdin:
        if stdin_kind == "file":
            done = subprocess.run(command, env=bridge_env(), stdin=stdin, stdout=stdout,
                                  stderr=subprocess.PIPE, timeout=60, check=False)
        else:
            done = subprocess.run(command, env=bridge_env(), input=_INPUT, stdout=stdout,
                                  stderr=subprocess.PIPE, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    answers = _answers(out.read_text())
    assert len(answers) == 3, answers
    number, batch, nothing = answers
    assert number["id"] == 1.5 and number["error"]["code"] == -32600, number
    assert [a["id"] for a in batch] == ["b1"] and batch[0]["error"]["code"] == -32600, batch
    assert nothing["id"] is None and nothing["error"]["code"] == -32600, nothing
