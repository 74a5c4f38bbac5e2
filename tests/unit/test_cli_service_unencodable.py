"""A write verb through ``--service`` given a value JSON cannot carry is a usage error, not a crash.

(Found by a hostile review, round 14, when it did not hold: a write verb through ``--service`` with a value JSON cannot carry crashes the CLI.)

`_fields` (``--set KEY=VALUE``) and `_json_object` (``--args``) read values with
``json.loads``, which accepts ``NaN``, ``Infinity``, ``1e999`` and ``"\\ud800"``.
`ServiceBackend._request` hands them to httpx (``json=``), whose encoder refuses
them (``ValueError`` / ``UnicodeEncodeError``): neither is caught by `_cmd` nor
by `main`, so the process dies with a traceback, exit 1, no JSON error even
with ``--json`` ("answer in JSON (errors too, on stderr)"). On ``--db`` the same
input is a clean INVALID_NODE / decision. Found before any request is sent, so
the server is never reached (the socket here need not exist).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.cli import main
from engine.effects.operator import OperatorCheck


@pytest.mark.parametrize("argv", [
    ["call", "c1", "agents.prompt", "a1", "--args", '{"text": NaN}'],
    ["call", "c1", "agents.prompt", "a1", "--args", '{"text": "\\ud800"}'],
    ["node", "add", "w1", "n2", "note", "--set", "text=Infinity"],
    ["node", "set", "n1", "--set", "text=1e999"],
    ["node", "add", "w1", "n3", "note", "--set", 'text="\\udc00"'],
])
def test_unencodable_values_are_a_clean_usage_error(tmp_path: Path, capsys, monkeypatch,
                                                     argv) -> None:
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    token = tmp_path / "token"
    token.write_text("t0k3n\n")
    token.chmod(0o600)  # a token file others may read is refused before anything is read
    code = main([*argv, "--service", str(tmp_path / "serve.sock"), "--token-file", str(token),
                 "--json"])  # a crash here is the finding
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "error" in json.loads(err)
