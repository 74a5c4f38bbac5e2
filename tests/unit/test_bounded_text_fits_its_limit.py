"""`engine.core.text.bounded` promises ``text`` "in at most ``limit`` bytes of UTF-8", and
`Prompts.agent_replied` keeps a reply "within the workspace's ``max_payload``".

Rule: the cut text always fits its limit: the mark that names the whole size where it
fits, a shorter one (``[cut]``) where it does not, none under a limit smaller still.

(Found by a helper: the cut mark was added whole even when it alone was longer than
the limit; ``max_payload`` may be 1 byte, and a reply was then stored, sent on the
``reply`` port and logged at ~30 bytes.)
"""

from __future__ import annotations

from engine import Engine
from engine.core.text import bounded


def test_a_cut_fits_a_limit_smaller_than_its_mark() -> None:
    """Whatever the limit, the cut text fits in it."""
    for limit in (1, 8, 16, 24):
        cut = bounded("x" * 100, limit)
        assert len(cut.encode()) <= limit, (limit, cut)


def test_a_cut_is_marked_as_far_as_the_limit_allows() -> None:
    """The whole size where its mark fits, ``[cut]`` where only that does."""
    assert bounded("x" * 100, 40) == "x" * 16 + "\n[cut: 100 bytes in all]"
    assert bounded("x" * 100, 16) == "x" * 10 + "\n[cut]"
    assert bounded("x" * 100, 3) == "xxx"


async def test_reply_kept_within_a_small_max_payload(world: Engine) -> None:
    """A workspace with max_payload 16 keeps a reply in 16 bytes."""
    # GIVEN a workspace whose text from outside is bounded to 16 bytes
    await world.set_settings("w1", {"max_payload": 16})
    prompt = await world.call("c1", "agents.prompt", "a1", {"text": "hi"})
    assert world.prompt(prompt.prompt).state == "delivered"
    # WHEN the agent replies at length
    await world.agent_replied("a1", "y" * 500)
    # THEN the kept reply is within the bound
    reply = world.state.canvas.node("a1").data["last_reply"]
    assert len(reply.encode()) <= 16, f"{len(reply.encode())} bytes kept: {reply!r}"
