"""`PromptIndex.first`: the prompt the pump delivers next."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.core.prompts import Prompt, PromptIndex

_STATES = ("queued", "held", "delivered", "replied")


@given(st.lists(st.tuples(st.sampled_from(("a1", "a2")), st.sampled_from(_STATES)), max_size=12),
       st.randoms(use_true_random=False))
def test_first_is_the_head_of_of_agent(prompts: list[tuple[str, str]], rnd) -> None:  # type: ignore[no-untyped-def]
    """Whatever order prompts were indexed in, `first` is `of_agent`'s first (or None)."""
    made = [Prompt(f"p{i}", i, "w1", "c1", "pkg", agent, None, "agents.prompt", "t", state=s)
            for i, (agent, s) in enumerate(prompts)]
    rnd.shuffle(made)
    index = PromptIndex()
    for p in made:
        index.update(p)
    for agent in ("a1", "a2", "a3"):
        for state in _STATES:
            listed = index.of_agent(agent, state)
            assert index.first(agent, state) is (listed[0] if listed else None)
