"""SPEC §10 "Storage" through ``arrowgate serve``: SIGKILLed mid-burst of several clients —
cards' calls and prompts, an operator granting and revoking, an agent's tool calls — every
answer given before the kill holds once it is restarted: each answered call has its log
row, each accepted prompt its row and its counted place in the card's rate window, each
tool call its row, the last answered grant or revoke stands; the log verifies, with its
anchor; and the restarted service serves, on both stores.

(`test_sigterm_mid_burst_loses_no_answered_call` stops the service gently, with one
kind of call; tests/pg/test_kills.py kills an engine process, not the service. The long
run of this, many kills with seeds, is ``bench/crash_soak.py``. Its seconds are two
starts of the service process, the one killed and the one that must serve after.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.app.cli import main
from tests.durability.servicekills import (
    CARDS,
    PROMPTS,
    Answers,
    Service,
    burst_then_kill,
    canvas,
    check_answers,
    start_service,
)
from tests.durability.targets import Target


@pytest.fixture
def serve(target: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
          ) -> Iterator[Callable[[], Service]]:
    """Starts ``arrowgate serve`` on the test's store (again after a kill); each is killed
    at the end."""
    # PostgreSQL's anchor of the store goes beside $ARROWGATE_DB: this test's folder.
    monkeypatch.setenv("ARROWGATE_DB", str(tmp_path / "home.db"))
    started: list[Service] = []

    def start() -> Service:
        started.append(start_service(target, tmp_path / "operator-token"))
        return started[-1]

    yield start
    for service in started:
        if service.proc.poll() is None:
            service.proc.kill()
        service.proc.communicate(timeout=60)


def test_a_killed_service_loses_nothing_it_answered(
        target: Target, serve: Callable[[], Service], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a service whose clients burst: calls, prompts, grants and revokes, tool calls
    service = serve()
    with service.client() as op:
        agent_token = canvas(op, tmp_path)
    answers = Answers()
    # WHEN it is killed (SIGKILL) mid-burst
    burst_then_kill(service, agent_token, answers)
    # THEN every answer holds in the store, and the log verifies
    check_answers(target, answers)
    capsys.readouterr()
    assert main(["log", "verify", *target.args()]) == 0, capsys.readouterr().out
    # AND the restarted service serves, its windows counting what was accepted
    again = serve()
    with again.client() as client:
        assert client.get("/v1/health").status_code == 200
        for card in CARDS:
            window = target.query("select count(*) from prompts where card = ?", [card])[0][0]
            outcomes = [client.post("/v1/calls", json={
                "card": card, "call": "agents.prompt", "target": "a1",
                "args": {"text": f"{card} after {i}"}}).json()["outcome"]
                for i in range(PROMPTS + 1 - window)]
            assert outcomes == ["queued"] * (PROMPTS - window) + ["rate-limited"], outcomes
