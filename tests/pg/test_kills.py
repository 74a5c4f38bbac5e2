"""Killing a process mid-burst loses no answered call (issue 20, SPEC §10 "Storage").

An engine process (tests/pg/burster.py) sends bursts of appends, printing each
call the moment it returns. Whatever is killed — the engine process itself
(SIGKILL), its server backend (``pg_terminate_backend``), or a backend with
SIGKILL (the server then resets every session and recovers from its WAL) —
every call that returned is in the log, nothing is in the log that no caller
asked for, and the chain verifies, numbered without gaps. A call refused with
STORE_FAILED may or may not have committed (the connection was lost before the
answer); it is never reported done.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest

from engine.app.cli import main
from tests.conftest import notes_world

ROOT = Path(__file__).resolve().parents[2]


#: Engine processes this module's tests started, reaped after each test.
_started: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _reap_bursters() -> Iterator[None]:
    """A test that fails midway leaves no engine process running, nor its pipes open
    (an unclosed pipe is reported later, as another test's unraisable warning)."""
    yield
    while _started:
        proc = _started.pop()
        if proc.poll() is None:
            proc.kill()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait(timeout=60)


def _burster(dsn: str, tag: str, bursts: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "tests.pg.burster", dsn, tag, str(bursts)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _started.append(proc)
    assert proc.stdout is not None
    assert _line(proc).strip() == "ready", proc.stderr.read() if proc.stderr else ""
    return proc


def _line(proc: subprocess.Popen[str]) -> str:
    """The next line of a burster's output, read a byte at a time from its descriptor.

    Not ``proc.stdout.readline()``: that reads ahead into the file object's buffer,
    and ``communicate`` then reads the descriptor, so the lines the read-ahead took
    (several when the machine is loaded and they arrive together) would be lost —
    calls answered, but counted as never asked for.
    """
    assert proc.stdout is not None
    line = b""
    while not line.endswith(b"\n"):
        byte = os.read(proc.stdout.fileno(), 1)
        if not byte:
            break
        line += byte
    return line.decode()


def _outcomes(lines: list[str]) -> tuple[set[str], set[str]]:
    answered = {line[3:] for line in lines if line.startswith("ok ")}
    failed = {line[7:] for line in lines if line.startswith("failed ")}
    return answered, failed


def _check(dsn: str, answered: set[str], failed: set[str], capsys: pytest.CaptureFixture[str]
           ) -> set[str]:
    """Every answered call is in the log, nothing else but ``failed`` ones (cut before their
    answer); the chain verifies. Returns the payloads logged."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("select seq, payload, outcome from log where call ="
                            " 'cards.note.append' order by seq").fetchall()
        seqs = [int(r[0]) for r in conn.execute("select seq from log order by seq")]
    logged = {str(payload) for _seq, payload, _outcome in rows}
    assert len(logged) == len(rows), "a call was logged twice"
    assert all(outcome == "ok" for _s, _p, outcome in rows)
    missing = answered - logged
    assert not missing, f"answered calls missing from the log: {sorted(missing)[:5]}"
    unasked = logged - answered - failed
    assert not unasked, f"rows no caller asked for: {sorted(unasked)[:5]}"
    assert seqs == list(range(1, len(seqs) + 1)), "a gap in the log's numbers"
    capsys.readouterr()
    assert main(["log", "verify", "--store", dsn]) == 0, capsys.readouterr().out
    return logged


def _backends(dsn: str) -> list[int]:
    """The server processes serving this database, but for the asking connection.

    Waits while the server is in crash recovery: `_wait_for_server` can get
    in after a kill but before the server has noticed it and begun recovery.
    """
    deadline = time.monotonic() + 60.0
    while True:
        try:
            with psycopg.connect(dsn, autocommit=True, connect_timeout=2) as conn:
                return [int(r[0]) for r in conn.execute(
                    "select pid from pg_stat_activity where datname = current_database()"
                    " and pid <> pg_backend_pid()")]
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_sigkill_of_the_engine_mid_burst_loses_no_answered_call(
        pg_dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Three engine processes killed (SIGKILL) once 10–60 of their calls have returned."""
    asyncio.run(notes_world(pg_dsn, tmp_path, 4)).close()
    rng = random.Random(20)
    answered: set[str] = set()
    in_flight: set[str] = set()  # calls that may have committed without an answer
    for run in range(3):
        proc = _burster(pg_dsn, f"k{run}", 0)
        assert proc.stdout is not None
        lines: list[str] = []
        threshold = rng.randint(10, 60)
        while sum(1 for x in lines if x.startswith("ok ")) < threshold:
            line = _line(proc)
            assert line, f"the engine process ended: {proc.stderr.read() if proc.stderr else ''}"
            lines.append(line.strip())
        proc.send_signal(signal.SIGKILL)
        rest, _err = proc.communicate(timeout=60)
        lines += rest.splitlines()
        ok, failed = _outcomes(lines)
        assert not failed
        answered |= ok
        # The burst of the last answer, and the one after it, were in flight.
        last = max(int(text.split()[1]) for text in ok)
        in_flight |= {f"k{run} {b} {i}" for b in (last, last + 1) for i in range(8)}
        logged = _check(pg_dsn, answered, in_flight, capsys)
        assert len(logged - answered) <= 16
    assert len(answered) >= 30
    print(f"3 engine SIGKILLs: {len(answered)} answered calls, all logged")


def test_terminated_backends_mid_burst_lose_no_answered_call(
        pg_dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """pg_terminate_backend on the engine's server process, 8 times during 300 bursts:
    the calls it cuts fail closed, the engine reconnects, no answered call is lost."""
    asyncio.run(notes_world(pg_dsn, tmp_path, 4)).close()
    rng = random.Random(21)
    proc = _burster(pg_dsn, "t", 300)
    terminated = 0
    while terminated < 8 and proc.poll() is None:
        time.sleep(rng.uniform(0.02, 0.25))
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            ended = admin.execute(
                "select count(*) filter (where pg_terminate_backend(pid)) from"
                " pg_stat_activity where datname = current_database()"
                " and pid <> pg_backend_pid()").fetchone()
            terminated += int(ended[0]) if ended else 0
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert lines[-1] == "done"
    answered, failed = _outcomes(lines)
    assert len(answered) + len(failed) == 2400
    assert terminated and failed, "no termination cut a call: the test proved nothing"
    logged = _check(pg_dsn, answered, failed, capsys)
    print(f"{terminated} backends terminated: {len(answered)} answered (all logged), "
          f"{len(failed)} failed closed ({len(logged & failed)} of them committed)")


def _local_server_pid_can_be_signalled(dsn: str) -> bool:
    host = parse_qs(urlsplit(dsn).query).get("host", [""])[0]
    return host.startswith("/") and Path(host).is_dir()


def test_sigkill_of_a_server_backend_mid_burst_loses_no_answered_call(
        pg_server: str, pg_dsn: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """SIGKILL the engine's backend: the server ends every session and replays its WAL
    (crash recovery), then takes connections again; every answered call is still there."""
    if not _local_server_pid_can_be_signalled(pg_server):
        pytest.skip("the server is not this machine's throwaway server: its processes "
                    "are not ours to kill")
    asyncio.run(notes_world(pg_dsn, tmp_path, 4)).close()
    rng = random.Random(22)
    proc = _burster(pg_dsn, "s", 300)
    killed = 0
    while killed < 3 and proc.poll() is None:
        time.sleep(rng.uniform(0.1, 0.4))
        for pid in _backends(pg_dsn)[:1]:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass  # it ended on its own meanwhile
        _wait_for_server(pg_dsn)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    answered, failed = _outcomes(out.splitlines())
    assert len(answered) + len(failed) == 2400
    assert killed and failed, "no kill cut a call: the test proved nothing"
    logged = _check(pg_dsn, answered, failed, capsys)
    print(f"{killed} backends SIGKILLed: {len(answered)} answered (all logged), "
          f"{len(failed)} failed closed ({len(logged & failed)} of them committed)")


def _wait_for_server(dsn: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            psycopg.connect(dsn, connect_timeout=2).close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
