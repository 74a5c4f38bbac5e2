"""Holds (SPEC §7) as pure rules: digests, where a prompt stands, its resolution, its deadline."""

from __future__ import annotations

import hashlib

import pytest

from canvas.model import WorkspaceSettings
from engine.core.holds import approves_text, hold_deadline, outcome_of, resolution_of
from engine.core.prompts import PROMPT_STATES, Prompt


def _prompt(state: str = "held", text: str = "rm -rf build", **kw: object) -> Prompt:
    return Prompt("p1", 1, "w1", "c1", "acme.p", "a1", "e1", "agents.prompt", text,
                  state=state, **kw)  # type: ignore[arg-type]


def test_approves_only_the_digest_of_the_held_text() -> None:
    """The SHA-256 of the held text, in any case of hex, approves; anything else does not."""
    prompt = _prompt()
    digest = hashlib.sha256(b"rm -rf build").hexdigest()
    assert approves_text(prompt, digest)
    assert approves_text(prompt, digest.upper())
    assert not approves_text(prompt, hashlib.sha256(b"rm -rf /").hexdigest())
    assert not approves_text(prompt, digest[:-1])
    assert not approves_text(prompt, "")
    assert not approves_text(prompt, None)
    assert not approves_text(prompt, digest.encode())  # bytes are not the digest's text


def test_text_digest_covers_lone_surrogates() -> None:
    """Text no UTF-8 encoder accepts still has a digest (surrogatepass), and only it approves."""
    prompt = _prompt(text="a\ud800b")
    assert approves_text(prompt, hashlib.sha256("a\ud800b".encode("utf-8", "surrogatepass"))
                         .hexdigest())
    assert not approves_text(prompt, hashlib.sha256(b"ab").hexdigest())


@pytest.mark.parametrize("state", ["queued", "delivered", "replied"])
def test_outcome_of_an_accepted_prompt(state: str) -> None:
    """Queued, delivered and replied prompts stand as ``queued`` decisions."""
    decision = outcome_of(_prompt(state))
    assert (decision.outcome, decision.code, decision.prompt) == ("queued", None, "p1")
    assert decision.value == {"prompt": "p1", "state": state}
    assert (decision.card, decision.target, decision.arrow) == ("c1", "a1", "e1")
    assert decision.message == f"prompt p1: {state}"


def test_outcome_of_held_and_ended_prompts() -> None:
    """Held waits; a rejected, expired or cancelled one is a refusal with its code."""
    held = outcome_of(_prompt("held"))
    assert held.outcome == "held" and held.allowed and held.code is None
    ended = outcome_of(_prompt("expired", code="HOLD_EXPIRED", reason="timeout"))
    assert (ended.outcome, ended.code, ended.reason) == ("denied", "HOLD_EXPIRED", "timeout")
    assert ended.message == "HOLD_EXPIRED: prompt p1" and not ended.allowed
    told = outcome_of(_prompt("rejected", code="PROMPT_REJECTED", message="no thanks"))
    assert told.message == "no thanks"


def test_resolution_of_reads_the_state() -> None:
    """Rejected, expired and cancelled name themselves; an approver means approved; else None."""
    assert {s: resolution_of(_prompt(s)) for s in PROMPT_STATES} == {
        "queued": None, "held": None, "delivered": None, "replied": None,
        "rejected": "rejected", "expired": "expired", "cancelled": "cancelled"}
    assert resolution_of(_prompt("delivered", approver="operator")) == "approved"
    assert resolution_of(_prompt("replied", approver="operator")) == "approved"
    # An approval that was then cancelled is logged cancelled, not approved.
    assert resolution_of(_prompt("cancelled", approver="operator")) == "cancelled"


def test_hold_deadline_is_hold_timeout_later() -> None:
    """The workspace's hold_timeout (default 300 s) after the moment it was held."""
    assert hold_deadline(1000.0, WorkspaceSettings()) == 1300.0
    assert hold_deadline(1000.0, WorkspaceSettings(hold_timeout=0.5)) == 1000.5
