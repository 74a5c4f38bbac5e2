"""An operator token found in a file others may read is revoked as it is replaced.

(Found by a hostile test, round 14, when it did not hold: it was replaced but stayed a live operator token.)

`operator_token` sees the token file is not private (mode 0644), so it mints a
new token and writes it 0600 — but the old token, which others could read, is
never revoked: anyone who read it keeps operator powers (SPEC §10.1: the token
file is 0600, never readable by others).
"""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


def _start(db) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([*ARROWGATE, "serve", "--db", str(db), "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    address = proc.stdout.readline().strip()
    assert proc.stdout.readline().strip() == "ready"
    return proc, address


def test_a_token_that_was_readable_by_others_is_revoked(tmp_path) -> None:
    db = tmp_path / "a.db"
    token_file = tmp_path / "a.db.operator-token"
    proc, _ = _start(db)
    proc.terminate()
    proc.communicate(timeout=60)
    old = token_file.read_text().strip()
    os.chmod(token_file, 0o644)  # exposed: others could read it
    proc, address = _start(db)
    try:
        new = token_file.read_text().strip()
        assert new != old  # the server judged the old one exposed
        answer = httpx.get(f"{address}/v1/holds", headers={"Authorization": f"Bearer {old}"})
        assert answer.status_code == 401, "the exposed operator token still works"
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


def test_a_token_file_of_another_owner_is_replaced_and_its_token_revoked(serve_at,
                                                                         tmp_path) -> None:
    """SPEC §10.1: the operator token file is the user's, mode 0600. One found owned by
    another user (private to them, 0600) is not trusted: its token is revoked (401 over
    HTTP) and a new one written in a file of ours, 0600, that the server takes.
    (Holds: checked for svc27's audit of SPEC §10.1.)"""
    if os.getuid() != 0:
        pytest.skip("giving a file to another user needs root")
    db = tmp_path / "arrowgate.db"
    token_file = tmp_path / "arrowgate.db.operator-token"
    first = serve_at(db=db)
    first.shutdown()
    os.chown(token_file, 65534, 65534)
    second = serve_at(db=db)
    st = os.lstat(token_file)
    assert second.token != first.token
    assert (st.st_uid, st.st_mode & 0o777) == (os.getuid(), 0o600)
    assert token_file.read_text().strip() == second.token
    assert second.client(token=first.token).get("/v1/holds").status_code == 401
    assert second.client().get("/v1/holds").status_code == 200
