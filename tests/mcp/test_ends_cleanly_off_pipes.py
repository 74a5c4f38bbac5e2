"""`arrowgate mcp` whose standard input and output are not pipes (a file, /dev/null: the
MCP SDK's own stdio transport then serves) ends when its input ends with exit 0 and no
traceback, as on pipes.

Found in round 21: the SDK's transport closes standard output as it ends, and the
command line's last flush of it raised "I/O operation on closed file": exit 1, a
traceback on standard error.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from .conftest import ARROWGATE, bridge_env


def test_input_from_a_file_ends_with_exit_0(tmp_path: Path) -> None:
    token = tmp_path / "a1.token"
    token.write_text("agt_secret\n")
    token.chmod(0o600)
    out = tmp_path / "out.jsonl"
    with open(out, "wb") as stdout:
        done = subprocess.run(
            [str(ARROWGATE), "mcp", "--agent", "a1", "--service", str(tmp_path / "no.sock"),
             "--token-file", str(token)], env=bridge_env(), stdin=subprocess.DEVNULL,
            stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
