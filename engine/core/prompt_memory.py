"""The prompts an engine keeps in memory: every one in play, and the newest finished.

A finished prompt (replied, rejected, expired, cancelled) is final: nothing
decides on it again, and its row in the store says all there is to know.
Memory keeps the newest `FINISHED_KEPT` of them, so that a card or a person
asking about a prompt that just finished is answered without a read; older
ones are read from the store when asked for (`engine.services.prompts.Prompts`).
So an engine's memory, and its open time, do not grow with its history.
"""

from __future__ import annotations

from collections import OrderedDict

from engine.core.prompts import IN_PLAY, Prompt

__all__ = ["FINISHED_KEPT", "PromptMemory"]

#: Finished prompts memory keeps, the newest. A card waits on its prompt's
#: outcome right after it finishes, and the TUI shows the newest; a thousand
#: covers more than the busiest workspace finishes in the seconds such a look
#: follows (the budget delivers 60 prompts in 10 s by default), and at the
#: largest text (256 KiB) bounds what they hold at about a quarter of a GiB,
#: typically a few hundred KiB.
FINISHED_KEPT = 1000


class PromptMemory(dict[str, Prompt]):
    """Prompts by id: every prompt in play, and at most ``bound`` finished ones.

    A dict, so a look-up or an insert costs what a dict's does (an accepted
    prompt is put here on the hot path). Whoever changes a prompt's state to
    a finished one says so (`finished`); the oldest finished prompt past the
    bound then leaves memory (its row stays in the store).
    """

    __slots__ = ("_finished", "bound")

    def __init__(self, bound: int | None = None) -> None:
        super().__init__()
        #: Ids of the finished prompts kept, oldest finished first.
        self._finished: OrderedDict[str, None] = OrderedDict()
        # Read when made, not imported: a test (or an operator's build) may set it.
        self.bound = FINISHED_KEPT if bound is None else bound

    def keep(self, prompt: Prompt) -> None:
        """Put ``prompt`` in memory as it now stands (read from the store)."""
        self[prompt.id] = prompt
        if prompt.state not in IN_PLAY:
            self.finished(prompt)

    def finished(self, prompt: Prompt) -> None:
        """``prompt`` reached a final state: it is the newest finished one kept.

        The oldest past the bound leaves memory, unless it is back in play
        since (an approved hold is queued again): it is counted again when
        it finishes.
        """
        kept = self._finished
        if prompt.id in kept:
            kept.move_to_end(prompt.id)
        else:
            kept[prompt.id] = None
        while len(kept) > self.bound:
            oldest, _ = kept.popitem(last=False)
            gone = self.get(oldest)
            if gone is not None and gone.state not in IN_PLAY:
                del self[oldest]
