"""A refusal's ``retry_after`` is always a positive number of seconds (SPEC §6).

Found in round 19: ``retry_after`` was rounded to the microsecond, so a call
refused less than half a microsecond before its window's oldest call left got
``retry_after`` 0.0 ("try again now") and was refused again if it did.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock

from ..conftest import manifest, offer_install


async def test_a_refusal_an_instant_before_the_window_frees_says_wait(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """1e-7 s short of the clipboard's 1 s window freeing: refused, with retry_after above 0."""
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.c", {"clipboard.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.c"}, workspace="w1")
    clock.t = 1000.0000001
    assert (await engine.call("c1", "clipboard.copyText", None, {"text": "x"})).allowed
    clock.t = 1001.0
    d = await engine.call("c1", "clipboard.copyText", None, {"text": "x"})
    assert d.code == "RATE_LIMITED"
    assert d.retry_after is not None and d.retry_after > 0
    # Waiting what it says is enough.
    clock.t += d.retry_after
    assert (await engine.call("c1", "clipboard.copyText", None, {"text": "x"})).allowed


async def test_retry_after_keeps_its_exact_value_otherwise(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """The usual refusal still says oldest + P − t, to the microsecond."""
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.c", {"clipboard.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.c"}, workspace="w1")
    assert (await engine.call("c1", "clipboard.copyText", None, {"text": "x"})).allowed
    clock.t += 0.25
    d = await engine.call("c1", "clipboard.copyText", None, {"text": "x"})
    assert (d.code, d.retry_after) == ("RATE_LIMITED", 0.75)
