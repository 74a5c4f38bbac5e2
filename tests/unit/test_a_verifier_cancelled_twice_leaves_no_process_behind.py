"""A verification cancelled while it stops its child still waits for the child to end.

Rule: what the engine starts it waits for, and closes what it opened to talk to it.
`engine.app.verifier.verify_in_a_process`, cancelled (the TUI left, the client went
away), kills its ``python -m engine.store.logindex`` child and waits for it. Cancelled
again during that wait — as it is when the TUI quits while its start-up `log verify` is
under way: Textual cancels the worker, then the loop's end cancels every task still
running — it used to give up the wait: the child was never reaped and its asyncio
transport and pipes were left open until the garbage collector found them, with a
``ResourceWarning`` ("unclosed transport", "subprocess … is still running") wherever that
happened — in the test suite, in a later test on the same worker (``filterwarnings =
error``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import subprocess
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.app import verifier


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[bytes]]:
    """Every child process made while the test runs, as it is made."""
    children: list[subprocess.Popen[bytes]] = []
    real_popen = subprocess.Popen

    class RecordedPopen(real_popen):  # type: ignore[valid-type,misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            children.append(self)

    monkeypatch.setattr(subprocess, "Popen", RecordedPopen)
    return children


def test_a_verification_cancelled_while_it_stops_its_child_reaps_it(
        tmp_path: Path, made: list[subprocess.Popen[bytes]]) -> None:
    db = tmp_path / "a.db"
    Engine.open(db, world=World(net=None, fs=None)).close()
    started = made

    async def quit_while_verifying() -> None:
        task = asyncio.create_task(verifier.verify_in_a_process(str(db)))
        while not started:  # the child is made ...
            await asyncio.sleep(0)
        for _ in range(50):  # ... and runs (its start ends within a few steps of the
            await asyncio.sleep(0)  # loop): the verification awaits its answer
        task.cancel()  # the TUI quits: its worker is cancelled
        await asyncio.sleep(0)  # ... and it is killing its child, waiting for it
        task.cancel()  # the app's loop ends: every task still running is cancelled
        await asyncio.sleep(0)

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        asyncio.run(quit_while_verifying())
        gc.collect()
    (proc,) = started
    assert proc.returncode is not None, "the killed verifier was never waited for"
    leaks = [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)]
    assert not leaks, leaks


def test_a_verification_cancelled_twice_while_its_child_starts_reaps_it(
        tmp_path: Path, made: list[subprocess.Popen[bytes]]) -> None:
    """Cancelled while asyncio still connects the child's pipes (the TUI quit as its arrow
    log opened), and again as asyncio's own clean-up of that start waits for the child:
    the child is still killed, waited for and its pipes closed.

    (Found by helper tui30 in round 30, hunting the flake of round 29: asyncio's
    `create_subprocess_exec`, cancelled after the child is made, kills it and waits; a
    second cancellation ends that wait, and the child was left to the garbage
    collector's "subprocess … is still running", in a later test of the same worker.)
    """
    db = tmp_path / "a.db"
    Engine.open(db, world=World(net=None, fs=None)).close()

    async def quit_as_the_log_opens() -> None:
        task = asyncio.create_task(verifier.verify_in_a_process(str(db)))
        while not made:  # the child is made; asyncio connects its pipes
            await asyncio.sleep(0)
        task.cancel()  # the TUI quits: its worker is cancelled
        await asyncio.sleep(0)  # ... asyncio kills the child and waits for it
        task.cancel()  # the app's loop ends: every task still running is cancelled
        with contextlib.suppress(asyncio.CancelledError):
            await task

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        asyncio.run(quit_as_the_log_opens())
        gc.collect()
    (proc,) = made
    assert proc.returncode is not None, "the verifier's child was never waited for"
    leaks = [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)]
    assert not leaks, leaks


def test_a_loop_that_ends_as_a_verification_starts_ends(
        tmp_path: Path, made: list[subprocess.Popen[bytes]]) -> None:
    """The loop ends (every task cancelled once) while the child is being started: the
    loop's end finishes, and the child is reaped.

    (Found by helper tui30 in round 30: asyncio's clean-up of the cancelled start waited
    for the child's pipes, whose connecting task the loop's end had cancelled too: the
    wait, and the loop's end, never ended.)
    """
    db = tmp_path / "a.db"
    Engine.open(db, world=World(net=None, fs=None)).close()

    async def end_as_it_starts() -> None:
        asyncio.create_task(verifier.verify_in_a_process(str(db)))
        while not made:
            await asyncio.sleep(0)
        # returning ends the loop: asyncio.run cancels the verification, still starting

    errors: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(end_as_it_starts())
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        runner = threading.Thread(target=run, daemon=True)
        runner.start()
        runner.join(30)  # a killed child ends within milliseconds
        assert not runner.is_alive(), "the loop's end waits for ever on the verification"
        gc.collect()
    assert not errors, errors
    (proc,) = made
    assert proc.returncode is not None, "the verifier's child was never waited for"
    leaks = [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)]
    assert not leaks, leaks
