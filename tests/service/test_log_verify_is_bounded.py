"""``POST /v1/log/verify``'s verifier child is bounded in time and in number: one that has
not answered within `VERIFY_TIMEOUT_S` is killed and the answer says the log was not
verified (``ok`` false, fail closed), and the service runs one verifier at a time, however
many clients ask at once (SPEC §10.1; hostile input never hangs or floods the engine).

Found in round 32 (bounds32; round 31 left it): a verifier that never ended (a store that
stopped answering mid-read, a log far past what was meant) held its request for ever,
and each request started a child of its own: a script asking in a loop ran as many
verifying processes, each hashing the whole log, as it had requests open.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from pathlib import Path

import httpx
import pytest

from engine.app import verifier
from engine.store.log import Verification
from tests.service.conftest import start_server


def _script(path: Path, body: str) -> str:
    """An executable standing in for the interpreter the verifier child is run with."""
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_a_verifier_that_never_answers_is_killed_and_the_log_said_unverified(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A child past the bound is killed and reaped; the answer names the bound, not ok."""
    # GIVEN a verifier child that never answers, and a bound of half a second
    pid_file = tmp_path / "pid"
    monkeypatch.setattr(sys, "executable", _script(
        tmp_path / "python", f"echo $$ > {pid_file}\nexec sleep 60\n"))
    monkeypatch.setattr(verifier, "VERIFY_TIMEOUT_S", 0.5, raising=False)

    # WHEN the log is verified
    async def verify() -> Verification:
        return await asyncio.wait_for(verifier.verify_in_a_process(str(tmp_path / "a.db")), 20)

    found = asyncio.run(verify())
    # THEN it is said unverified, naming the bound, and the child is gone
    assert found.ok is False, found
    assert "did not finish" in found.problem and "0.5 s" in found.problem, found.problem
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_verifications_asked_at_once_run_one_at_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three clients asking at once are each answered by a verification of their own, the
    children run one after another, never two at once."""
    runs = tmp_path / "runs"
    monkeypatch.setattr(sys, "executable", _script(
        tmp_path / "python", f"echo start >> {runs}\nsleep 0.2\necho end >> {runs}\n"
        """echo '{"ok": true, "rows": 0, "first_bad": null, "problem": ""}'\n"""))
    db = tmp_path / "a.db"
    server = start_server(db, log_location=str(db))
    try:
        answers: list[httpx.Response] = []

        def ask() -> None:
            with server.client() as client:
                answers.append(client.post("/v1/log/verify"))

        # WHEN three clients ask at once
        askers = [threading.Thread(target=ask) for _ in range(3)]
        for t in askers:
            t.start()
        for t in askers:
            t.join(30)
        # THEN each is answered, and the children never overlapped
        assert [a.status_code for a in answers] == [200] * 3, [a.text for a in answers]
        assert runs.read_text().split() == ["start", "end"] * 3, runs.read_text()
    finally:
        server.shutdown()
