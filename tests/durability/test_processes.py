"""Several processes on one database; writers killed with SIGKILL mid-append."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from engine.app.cli import main

from ..conftest import manifest, notes_world, offer_install
from .targets import Target

ROOT = Path(__file__).resolve().parents[2]
#: The full crash run is `ARROWGATE_CRASH_RUNS=200 python -m pytest tests/durability -k crash`.
CRASH_RUNS = int(os.environ.get("ARROWGATE_CRASH_RUNS", "20"))


async def _setup(db: Path | str, tmp_path: Path, cards: int) -> None:
    (await notes_world(db, tmp_path, cards)).close()


def _writer(db: Path | str, card: str, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tests.durability.writer", str(db), card,
                             str(count)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _first_line(fd: int) -> str:
    """The first line of a pipe, read a byte at a time from its descriptor.

    Not ``proc.stdout.readline()``: that reads ahead into the file object's
    buffer, and ``communicate`` then reads the descriptor, so the lines the
    read-ahead took (several when commits are fast) would not be counted.
    """
    line = b""
    while not line.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte:
            break
        line += byte
    return line.decode()


def _check(db: Path | Target) -> list[int]:
    if isinstance(db, Target):
        seqs = db.log_seqs()  # PostgreSQL checks its own pages; the chain is ours to check
        verify = ["log", "verify", *db.args()]
    else:
        conn = sqlite3.connect(db)
        assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
        seqs = [r[0] for r in conn.execute("select seq from log order by seq")]
        conn.close()
        verify = ["log", "verify", "--db", str(db)]
    assert seqs == list(range(1, len(seqs) + 1)), "no gaps in the sequence"
    assert main(verify) == 0
    return seqs


async def test_two_engines_see_each_others_consent_changes(target: Target,
                                                           tmp_path: Path) -> None:
    """A revoke by one engine (e.g. the TUI's) holds for the other engine's next call."""
    await _setup(target.location, tmp_path, 1)
    app = target.open()
    tui = target.open()
    assert (await app.call("c0", "cards.note.append", "n1", {"text": "1"})).outcome == "ok"
    await tui.revoke("acme.notes", "cards.connected")
    d = await app.call("c0", "cards.note.append", "n1", {"text": "2"})
    assert (d.code, d.reason) == ("PERMISSION_DENIED", "not-granted")
    await tui.remove_arrow("e0")
    await tui.grant("acme.notes", "cards.connected")
    assert (await app.call("c0", "cards.note.append", "n1", {"text": "3"})).reason == \
        "not-connected"
    assert app.verify_log().ok and tui.verify_log().ok
    app.close()
    tui.close()


async def test_six_processes_append_without_locking_errors(target: Target, tmp_path: Path,
                                                           capsys) -> None:
    """6 processes x 300 appends: no 'database is locked', a valid chain, no gaps."""
    await _setup(target.location, tmp_path, 6)
    started = time.monotonic()
    procs = [_writer(target.location, f"c{i}", 300) for i in range(6)]
    outs = [p.communicate(timeout=300) for p in procs]
    elapsed = time.monotonic() - started
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.strip().splitlines()[-1] == "locked 0"
    seqs = _check(target if target.postgres else target.db)
    assert len(seqs) == 1800
    print(f"6 x 300 appends in {elapsed:.1f} s: {1800 / elapsed:.0f} rows/s")


async def test_crash_mid_append_loses_no_returned_row(target: Target, tmp_path: Path) -> None:
    """SIGKILL a writer at random moments: every returned row is there, the chain verifies."""
    await _setup(target.location, tmp_path, 1)
    db: Path | Target = target if target.postgres else target.db
    rng = random.Random(7)
    returned_total = 0
    for _run in range(CRASH_RUNS):
        before = len(_check(db))
        proc = _writer(target.location, "c0", 100_000)
        # Kill it while it appends: after its first returned row (however long a
        # loaded machine takes to start it), at a random moment within the next
        # 0.8 s.
        assert proc.stdout is not None
        first = _first_line(proc.stdout.fileno())
        time.sleep(rng.uniform(0.0, 0.8))
        proc.send_signal(signal.SIGKILL)
        out, _err = proc.communicate()
        returned = sum(1 for line in (first + out).splitlines() if line.startswith("ok "))
        returned_total += returned
        after = len(_check(db))
        # Every call that returned has its row; at most one more was mid-commit.
        assert after - before >= returned
        assert after - before <= returned + 1
    assert returned_total > 0
    print(f"{CRASH_RUNS} SIGKILLs, {returned_total} returned appends, none lost, "
          f"integrity ok, chain and anchor verified after each")


async def test_a_hold_approved_in_another_process_releases_the_waiter(target: Target,
                                                                     tmp_path: Path) -> None:
    """The app waits on a held prompt; a person approves it from a second process (the TUI)."""
    import asyncio

    engine = target.open()
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "dangerous": True}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    held = await engine.call("c1", "agents.prompt", "a1", {"text": "deploy"})
    assert held.outcome == "held"
    waiter = asyncio.create_task(engine.wait(held.prompt))
    code = (
        "import asyncio\n"
        "from engine import Engine, World\n"
        f"e = Engine.open({'store=' if target.postgres else ''}{target.location!r},"
        " world=World(net=None, fs=None))\n"
        f"sha = e.prompt({held.prompt!r}).text_sha256\n"
        f"print(asyncio.run(e.approve_hold({held.prompt!r}, text_sha256=sha)).outcome)\n"
    )
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", code, cwd=ROOT,
                                                stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    assert out.decode().strip() == "queued"
    result = await asyncio.wait_for(waiter, 5)
    assert result.outcome == "queued" and engine.prompt(held.prompt).state == "delivered"
    assert [r["outcome"] for r in engine.log_rows(arrow="e1")] == ["held", "approved"]
    engine.close()


async def test_changes_yields_when_another_process_commits(target: Target,
                                                           tmp_path: Path) -> None:
    """engine.changes() wakes a live view when another connection changes the store."""
    import asyncio

    await _setup(target.location, tmp_path, 1)
    view = target.open()
    other = target.open()
    changes = view.changes(interval=0.02)
    first = asyncio.ensure_future(changes.__anext__())
    await asyncio.sleep(0.1)
    assert not first.done()  # nothing changed: nothing to report
    await other.revoke("acme.notes", "cards.connected")
    await asyncio.wait_for(first, 2)
    assert not view.state.granted("acme.notes", "cards.connected")
    await changes.aclose()
    view.close()
    other.close()


async def test_changes_sees_a_commit_another_operation_synced_first(target: Target,
                                                                   tmp_path) -> None:
    """A reload made by an ordinary operation still counts as a change for live views."""
    view = target.open()
    other = target.open()
    try:
        changes = view.changes(interval=0.05)
        waiting = asyncio.ensure_future(anext(changes))
        await asyncio.sleep(0.01)  # the live view is watching
        await other.create_workspace("w1", str(tmp_path))
        await view.expire_due()  # syncs (and reloads) before changes() looks again
        revision = await asyncio.wait_for(waiting, 2)
        assert revision >= 1 and "w1" in view.state.workspaces
    finally:
        view.close()
        other.close()
