"""A request line too deep for a JSON reader is searched for its id in one pass, whatever
text it holds: the bridge reads every request in time linear in its length and serves
on (rule: hostile input never hangs; SPEC §10.2: the agent is never left waiting).

Found in round 30 by a time probe: `_top_level` reads such a line with a regex whose
strings had to end on the line; a text that never ended, each of its quotes escaped
(``"\\"\\"\\"…``), was tried again from every other quote to the line's end — 32 KB
held the bridge's loop 4.7 s, and a line of a few hundred KB for minutes, every other
request of the agent unanswered meanwhile.
"""

from __future__ import annotations

import pytest

from engine.app.mcp import _JSON_TOKEN, _top_level, _unreadable
from tests.service.conftest import Running

from .conftest import Bridge

#: Deeper than any JSON reader here goes: such a line is read by `_top_level`.
_DEEP = "[" * 1100


def _unended(n: int) -> str:
    """A text that never ends, its ``n`` quotes each escaped."""
    return '"' + '\\"' * n


@pytest.mark.parametrize("line", [
    '{"k":' + _DEEP + _unended(5000),
    "{" + _unended(5000),
    '{"id":' + _unended(5000),
    '{"k":' + _DEEP + '"a\\' + '"\\' * 5000,
])
def test_a_too_deep_line_is_read_in_one_pass(line: str) -> None:
    """Every character of the line is in exactly one token, so none is read twice; a
    text that never ends is no id or method."""
    tokens = [m.group() for m in _JSON_TOKEN.finditer(line)]
    assert "".join(tokens) == line, "characters were skipped and read again from later"
    assert _top_level(line) == {}
    assert _unreadable(line) is None


async def test_the_bridge_answers_on_after_a_too_deep_line_that_never_ends(
        world: tuple[Running, dict[str, str]]) -> None:
    """A request line nested too deep, holding a text that never ends (256 KB), leaves the
    bridge answering the next request."""
    running, files = world
    bridge = await Bridge.start(running.address, files["a1"])
    try:
        await bridge.initialize()
        # No id or method before the text: the whole line is searched for them.
        await bridge.send('{"jsonrpc":"2.0","k":' + _DEEP + _unended(128 * 1024))
        answer = await bridge.request("ping")
        assert answer.get("result") == {}, answer
    finally:
        await bridge.close()
