"""Holds (SPEC §7): a prompt to an agent in dangerous mode waits for a person.

Pure rules of the hold's life: its deadline, the digest a person must
approve by, where a prompt stands as a decision, and which resolution row
ended it. The `Prompts` service applies them to the store.
"""

from __future__ import annotations

import hmac
import math

from canvas.model import WorkspaceSettings
from engine.core.decision import Decision
from engine.core.prompts import Prompt

__all__ = ["RESOLUTIONS", "approves_text", "hold_deadline", "held_for", "outcome_of",
           "prompt_decision", "resolution_of"]

#: How an open prompt ends, and the outcome of its resolution row in the log.
RESOLUTIONS = {"expired": "expired", "rejected": "rejected", "cancelled": "cancelled",
               "approved": "approved"}


def hold_deadline(now: float, settings: WorkspaceSettings) -> float:
    """When a prompt held at ``now`` expires unanswered (``hold_timeout`` later)."""
    return now + settings.hold_timeout


def held_for(prompt: Prompt) -> float:
    """The seconds from a held prompt's making to its deadline: the hold timeout it was
    held with (plus what it waited queued first, for one held once its agent turned
    dangerous); ``inf`` for a prompt with no deadline.

    Never the workspace's ``hold_timeout`` now: a timeout changed after a hold leaves it
    the time it was given (README), as a tool call keeps its own. While the engine's time
    stands still a hold runs on the clock only what its deadline left of that time
    (`engine.core.standing.ClockRun`), which is within this, so a prompt that waited
    queued gets no more than the timeout it was held with either.
    """
    return math.inf if prompt.deadline is None else prompt.deadline - prompt.t


def approves_text(prompt: Prompt, text_sha256: object) -> bool:
    """The digest a person approved is the held text's: nobody approves text they did not see.

    Compared in constant time; any case of hex digits is accepted. Text that is not
    ASCII is no digest of ours (and `hmac.compare_digest` would raise on it).
    """
    return (isinstance(text_sha256, str) and text_sha256.isascii()
            and hmac.compare_digest(text_sha256.lower(), prompt.text_sha256))


def prompt_decision(prompt: Prompt) -> Decision:
    """The decision a prompt's rows are logged with (its card, agent and arrow)."""
    return Decision("queued", "agents.prompt", prompt.card, prompt.package, prompt.agent,
                    "agents.prompt", arrow=prompt.arrow, prompt=prompt.id)


def outcome_of(prompt: Prompt) -> Decision:
    """Where a prompt stands, as a decision: ``queued``, ``held`` or its error."""
    base = prompt_decision(prompt).with_(value={"prompt": prompt.id, "state": prompt.state})
    if prompt.state in ("queued", "delivered", "replied"):
        return base.with_(message=f"prompt {prompt.id}: {prompt.state}")
    if prompt.state == "held":
        return base.with_(outcome="held", message=f"prompt {prompt.id} waits for a person")
    return base.with_(outcome="denied", code=prompt.code, reason=prompt.reason,
                      message=prompt.message or f"{prompt.code}: prompt {prompt.id}")


def resolution_of(prompt: Prompt) -> str | None:
    """The outcome of the prompt's resolution row, read off its state; None if never held."""
    if prompt.state in ("rejected", "expired", "cancelled"):
        return prompt.state
    # Only an approval sets the approver, and it logs ``approved``.
    return "approved" if prompt.approver else None
