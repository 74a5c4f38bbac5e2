"""A prompt id that is not text names no prompt: reading one is None, and waiting for,
approving or rejecting one is ``NOT_FOUND`` (`InvalidRequest`), whatever its type,
and changes nothing.

Found in round 23: an unhashable id (a list, a dict) was looked up in memory before
its type was checked, so `Engine.prompt`, `wait`, `approve_hold` and `reject_hold`
raised a bare TypeError ("unhashable type") instead.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import Engine
from engine.core.errors import InvalidRequest


@pytest.mark.parametrize("prompt_id", [["p1"], {"id": "p1"}, {"p1"}])
async def test_an_id_that_is_not_text_is_not_found(world: Engine, prompt_id: Any) -> None:
    engine = world
    rows = len(engine.log_rows())
    assert engine.prompt(prompt_id) is None
    for attempt in (lambda: engine.wait(prompt_id),
                    lambda: engine.approve_hold(prompt_id, text_sha256="0" * 64),
                    lambda: engine.reject_hold(prompt_id)):
        with pytest.raises(InvalidRequest) as refused:
            await attempt()
        assert refused.value.code == "NOT_FOUND"
    assert len(engine.log_rows()) == rows
