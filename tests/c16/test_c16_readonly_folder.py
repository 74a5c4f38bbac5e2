"""The read verbs cannot read a database they may read but whose folder they may not
write (a backup on a read-only mount, a snapshot, another user's app folder): even
`arrowgate log verify` refuses it with "not a readable database: attempt to write a
readonly database" (exit 2). The file is readable; the check itself opens it in a way
(WAL without its -shm file) that needs a write. An auditor verifying a read-only
copy of the log — the use log verify exists for — cannot."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.unit.cli_process import ARROWGATE, demo_db


def test_log_verify_reads_a_database_in_a_read_only_folder(tmp_path: Path) -> None:
    source = demo_db(tmp_path)
    folder = Path(tempfile.mkdtemp(prefix="c16-ro-"))
    try:
        for suffix in ("", ".anchor"):
            shutil.copy(f"{source}{suffix}", folder / f"app.db{suffix}")
            os.chmod(folder / f"app.db{suffix}", 0o444)
        os.chmod(folder, 0o555)
        command = [ARROWGATE, "log", "verify", "--db", str(folder / "app.db")]
        if os.geteuid() == 0:  # root writes anywhere: read as nobody
            if shutil.which("setpriv") is None:
                pytest.skip("needs setpriv to drop root")
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                       *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, env={**os.environ, "HOME": str(folder)})
        assert done.returncode == 0, done.stderr
        assert "log verify: ok" in done.stdout
    finally:
        os.chmod(folder, 0o755)
        shutil.rmtree(folder)
