"""A held prompt waits for a person's OK on the card (SPEC §7): the card that made it is
told on its event stream (``prompt.held``: the prompt, agent, arrow, whole text and
deadline), the operator's ``GET /v1/holds`` shows card, package, arrow, agent and the
whole text with its SHA-256, and once a person approves by that digest the card is told
``prompt.resolved`` — through the service, as a canvas app shows it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

from tests.service.conftest import Running, build_canvas, mint

#: A prompt of many lines, larger than any line, with markup and a terminal control
#: sequence in it: what the card and the person are shown is all of it, as sent.
TEXT = "deploy to prod\n" + "\n".join(f"[bold]step {i}[/bold] \x1b[31mred\x1b[0m"
                                      for i in range(2000))


def _next_frame(lines: Iterator[str]) -> dict[str, Any]:
    """The next SSE message of the stream's ``lines``: ``{"id", "event", "data"}``."""
    frame: dict[str, Any] = {}
    for line in lines:
        if line.startswith(":"):
            continue
        if not line:
            if frame:
                return frame
            continue
        key, _, value = line.partition(": ")
        frame[key] = json.loads(value) if key == "data" else value
    raise AssertionError(f"the stream ended after {frame}")


def test_the_card_is_told_of_its_hold_and_its_answer(unix_server: Running, tmp_path) -> None:
    """prompt.held with the whole text on the card's stream, the hold on GET /v1/holds,
    then prompt.resolved approved once the operator approves by the text's digest."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    c1 = unix_server.client(token=mint(op, "card:c1"))
    with c1.stream("GET", "/v1/events") as stream:
        lines = stream.iter_lines()
        # GIVEN card c1 prompts the dangerous agent y1
        held = c1.post("/v1/calls", json={"card": "c1", "call": "agents.prompt",
                                          "target": "y1", "args": {"text": TEXT}}).json()
        assert held["outcome"] == "held", held
        prompt = held["value"]["prompt"]
        # THEN the card is told of the hold: the whole text, on the arrow, to y1
        told = _next_frame(lines)
        assert told["event"] == "prompt.held"
        data = told["data"]["data"]
        assert (data["prompt"], data["agent"], data["arrow"], data["text"]) == (
            prompt, "y1", "e2", TEXT)
        # AND the person's list shows the same hold, whole, with the digest to approve by
        (hold,) = op.get("/v1/holds").json()
        digest = hashlib.sha256(TEXT.encode()).hexdigest()
        assert {k: hold[k] for k in ("id", "card", "package", "arrow", "agent", "text",
                                     "text_sha256")} == {
            "id": prompt, "card": "c1", "package": "acme.standup", "arrow": "e2",
            "agent": "y1", "text": TEXT, "text_sha256": digest}
        assert hold["deadline"] == data["deadline"]
        # WHEN the operator approves by that digest
        approved = op.post(f"/v1/holds/{prompt}/approve", json={"text_sha256": digest})
        assert approved.status_code == 200 and approved.json()["outcome"] == "queued", \
            approved.text
        # THEN the card is told it was approved
        resolved = _next_frame(lines)
    assert resolved["event"] == "prompt.resolved"
    assert resolved["data"]["data"] == {"prompt": prompt, "state": "approved", "code": None,
                                        "reason": None}
    assert op.get("/v1/holds").json() == []
