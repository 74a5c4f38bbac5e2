"""After `Engine.close`, every public method of the engine raises `EngineClosed`.

`Engine.close` promises that every operation, subscription and log read after
close raises `EngineClosed`. Operations check in their prologue
(`Context.tick`); the engine's other public methods (reads of the state or the
store, the change feed, the drivers and timers) are marked `_while_open`, so
none reaches a closed SQLite connection and raises its ``ProgrammingError``
(a 500 for ``GET /v1/tool_calls/{id}``, a traceback in the TUI's refresh loop).
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, EngineClosed, Event
from tests.conftest import manifest, offer_install

#: Public methods that may be called after close: closing again does nothing,
#: `open` makes another engine, and `now` reads the clock alone (the TUI may
#: show a deadline while it unmounts).
_AFTER_CLOSE = {"close", "aclose", "open", "now"}


async def _closed(make_engine: Any, tmp_path: Path) -> Any:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.aclose()
    return engine


async def test_tool_call_after_close_raises_engine_closed(make_engine: Any,
                                                          tmp_path: Path) -> None:
    """A tool call not in memory, read after close, is `EngineClosed`, not a store error.

    (Found by a helper: `Tools.tool_call` fell back to the closed store.)
    """
    engine = await _closed(make_engine, tmp_path)
    with pytest.raises(EngineClosed):
        engine.tool_call("tc-unknown")


async def test_changes_after_close_raises_engine_closed(make_engine: Any,
                                                        tmp_path: Path) -> None:
    """`Engine.changes` asked for after close is `EngineClosed`.

    (Found by a helper: its loop read ``data_version`` on the closed connection.)
    """
    engine = await _closed(make_engine, tmp_path)
    with pytest.raises(EngineClosed):
        await asyncio.wait_for(engine.changes(0.01).__anext__(), 1)


async def test_changes_iterating_when_closed_ends_with_engine_closed(make_engine: Any,
                                                                     tmp_path: Path) -> None:
    """A refresh loop iterating `Engine.changes` when the engine closes gets `EngineClosed`."""
    # GIVEN a live view waiting on the change feed
    engine = make_engine()
    feed = engine.changes(0.01)
    waiting = asyncio.ensure_future(feed.__anext__())
    await asyncio.sleep(0.03)
    # WHEN the engine closes under it
    engine.close()
    # THEN its next look raises EngineClosed
    with pytest.raises(EngineClosed):
        await asyncio.wait_for(waiting, 1)


async def test_run_timers_when_closed_ends_with_engine_closed(make_engine: Any) -> None:
    """Hold timers running when the engine closes end with `EngineClosed`, not an outage
    retried every second for good."""
    engine = make_engine()
    stop = asyncio.Event()
    timers = asyncio.ensure_future(engine.run_timers(stop))
    await asyncio.sleep(0.01)
    engine.close()
    with pytest.raises(EngineClosed):
        await asyncio.wait_for(timers, 3)


def _arguments(method: Any) -> tuple[list[Any], dict[str, Any]]:
    # Placeholders for a method's required arguments: the check comes before any is read.
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for p in inspect.signature(method).parameters.values():
        if p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.kind == p.KEYWORD_ONLY:
            kwargs[p.name] = "x"
        else:
            args.append("x")
    return args, kwargs


async def test_every_public_method_after_close_raises_engine_closed(
        make_engine: Any, tmp_path: Path) -> None:
    """Every public method of `Engine` but `_AFTER_CLOSE` raises `EngineClosed` after close
    (secret_is_set, set_workspace_hidden, card_seen, background, prompts, notify among
    them), when called or when what it returns is awaited or iterated."""
    engine = await _closed(make_engine, tmp_path)
    special: dict[str, tuple[list[Any], dict[str, Any]]] = {
        "notify": ([Event("x", None, {})], {}),
        "run_timers": ([asyncio.Event()], {}),
        "call_many": ([[("c1", "x", None, {}, None)]], {}),
        "tool_call_holds": ([None], {}),
    }
    missed = []
    for name in sorted(dir(Engine)):
        if name.startswith("_") or name in _AFTER_CLOSE or isinstance(
                inspect.getattr_static(Engine, name), property):
            continue
        method = getattr(engine, name)
        args, kwargs = special.get(name) or _arguments(method)
        try:
            result = method(*args, **kwargs)
            if inspect.isawaitable(result):
                await asyncio.wait_for(result, 1)
            elif hasattr(result, "__anext__"):
                await asyncio.wait_for(result.__anext__(), 1)
        except EngineClosed:
            continue
        except BaseException as exc:  # noqa: BLE001 - reported below
            missed.append(f"{name}: {type(exc).__name__}")
            continue
        missed.append(f"{name}: returned")
    assert not missed, missed
