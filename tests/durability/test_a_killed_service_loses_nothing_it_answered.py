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

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from engine.app.cli import main
from tests.durability.targets import Target
from tests.shortdirs import short_dir

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = {"name": "acme.p", "version": "1.0.0", "tools": ["relay"],
            "permissions": {"agents.prompt": {}, "cards.connected": {},
                            "clipboard.write": {"optional": True}}}
CARDS = ("c0", "c1")
#: The card whose tool the agent calls: a card with tool calls open may not prompt their
#: agent (the loop guard, SPEC §9), so it is not one of `CARDS`.
TOOL_CARD = "c2"
#: The prompt window: 6 a minute per card (SPEC §6).
PROMPTS = 6


@dataclass
class Service:
    proc: subprocess.Popen[str]
    address: str
    token: str

    def client(self, token: str | None = None) -> httpx.Client:
        return httpx.Client(transport=httpx.HTTPTransport(uds=self.address),
                            base_url="http://ag", timeout=30,
                            headers={"Authorization": f"Bearer {token or self.token}"})


@pytest.fixture
def serve(target: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
          ) -> Iterator[Callable[[], Service]]:
    """Starts ``arrowgate serve`` on the test's store (again after a kill); each is killed
    at the end."""
    # PostgreSQL's anchor of the store goes beside $ARROWGATE_DB: this test's folder.
    monkeypatch.setenv("ARROWGATE_DB", str(tmp_path / "home.db"))
    token_file = tmp_path / "operator-token"
    store = (["--store", target.location, "--token-file", str(token_file)] if target.postgres
             else ["--db", target.location, "--token-file", str(token_file)])
    started: list[subprocess.Popen[str]] = []

    def start() -> Service:
        sock = short_dir("ag-kill") / "s" / "serve.sock"
        proc = subprocess.Popen(
            [sys.executable, "-m", "engine.app.cli", "serve", *store, "--socket", str(sock)],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        started.append(proc)
        assert proc.stdout is not None
        address = proc.stdout.readline().strip()
        assert proc.stdout.readline().strip() == "ready", proc.communicate()[1]
        return Service(proc, address, token_file.read_text().strip())

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=60)


@dataclass
class Answers:
    """What the clients were answered (and, for consent, what they sent)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    calls: list[tuple[str, str, dict[str, object]]] = field(default_factory=list)
    consent: list[tuple[str, int | None]] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)


def _canvas(op: httpx.Client, folder: Path) -> str:
    """The canvas of the burst; returns agent a1's token."""
    assert op.post("/v1/workspaces", json={"id": "w1", "folder": str(folder), "settings": {
        "card_write_limit": 1_000_000}}).status_code == 201
    assert op.post("/v1/packages", json={"manifest": MANIFEST}).status_code in (200, 201)
    assert op.post("/v1/packages/acme.p/install", json={"grant": "all"}).status_code == 200
    for node in ({"id": "a1", "type": "agent", "status": "waiting"},
                 {"id": "n1", "type": "note"}):
        assert op.post("/v1/workspaces/w1/nodes", json=node).status_code == 201
    for card in (*CARDS, TOOL_CARD):
        assert op.post("/v1/workspaces/w1/nodes", json={
            "id": card, "type": "card", "package": "acme.p"}).status_code == 201
        for to in ("a1", "n1"):
            assert op.post("/v1/workspaces/w1/arrows", json={
                "id": f"{card}-{to}", "from": card, "to": to}).status_code == 201
    return str(op.post("/v1/tokens", json={"principal": "agent:a1"}).json()["token"])


def _card(service: Service, card: str, answers: Answers, stop: threading.Event) -> None:
    with service.client() as client:
        n = 0
        while not stop.is_set():
            n += 1
            text = f"{card} {n}"
            body = ({"card": card, "call": "agents.prompt", "target": "a1",
                     "args": {"text": text}} if n % 3 == 0 else
                    {"card": card, "call": "cards.note.append", "target": "n1",
                     "args": {"text": text}})
            try:
                answer = client.post("/v1/calls", json=body)
            except httpx.HTTPError:
                return  # the service was killed: this call was never answered
            assert answer.status_code == 200, answer.text
            with answers.lock:
                answers.calls.append((card, text, answer.json()))


def _operator(service: Service, answers: Answers, stop: threading.Event) -> None:
    with service.client() as client:
        n = 0
        while not stop.is_set():
            n += 1
            verb = "revoke" if n % 2 else "grant"
            with answers.lock:
                answers.consent.append((verb, None))
                at = len(answers.consent) - 1
            try:
                answer = client.post(f"/v1/packages/acme.p/{verb}",
                                     json={"permission": "clipboard.write"})
            except httpx.HTTPError:
                return
            with answers.lock:
                answers.consent[at] = (verb, answer.status_code)


def _agent(service: Service, token: str, answers: Answers, stop: threading.Event) -> None:
    with service.client(token) as client:
        while not stop.is_set():
            try:
                answer = client.post("/v1/tool-calls", json={
                    "agent": "a1", "card": TOOL_CARD, "tool": "relay", "args": {}})
            except httpx.HTTPError:
                return
            assert answer.status_code in (200, 201, 202), answer.text
            if answer.json().get("id") is not None:
                with answers.lock:
                    answers.tools.append(answer.json()["id"])


def _burst_then_kill(service: Service, agent_token: str, answers: Answers) -> None:
    stop = threading.Event()
    threads = [threading.Thread(target=_card, args=(service, card, answers, stop))
               for card in CARDS]
    threads += [threading.Thread(target=_operator, args=(service, answers, stop)),
                threading.Thread(target=_agent, args=(service, agent_token, answers, stop))]
    for thread in threads:
        thread.start()
    # Killed once every client has had answers, mid-burst.
    while True:
        with answers.lock:
            if (len(answers.calls) >= 40 and answers.tools
                    and any(code == 200 for _verb, code in answers.consent)):
                break
        stop.wait(0.005)
    service.proc.send_signal(signal.SIGKILL)
    service.proc.communicate(timeout=60)
    stop.set()
    for thread in threads:
        thread.join(60)


def test_a_killed_service_loses_nothing_it_answered(
        target: Target, serve: Callable[[], Service], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a service whose clients burst: calls, prompts, grants and revokes, tool calls
    service = serve()
    with service.client() as op:
        agent_token = _canvas(op, tmp_path)
    answers = Answers()
    # WHEN it is killed (SIGKILL) mid-burst
    _burst_then_kill(service, agent_token, answers)
    # THEN every answer holds in the store
    logged = {str(p) for (p,) in target.query("select payload from log")}
    missing = [text for _card, text, _d in answers.calls if text not in logged]
    assert not missing, f"answered calls without a log row: {missing[:5]}"
    accepted = {card: [d["prompt"] for c, _t, d in answers.calls
                       if c == card and d["outcome"] == "queued"] for card in CARDS}
    for card, prompts in accepted.items():
        stored = {str(p) for (p,) in target.query(
            "select id from prompts where card = ?", [card])}
        assert set(prompts) <= stored, f"{card}'s accepted prompts without a row"
        counted = target.query("select count(*) from rate_events where card = ? and"
                               " key = 'prompt'", [card])[0][0]
        assert counted >= len(prompts), f"{card}: {counted} counted, {len(prompts)} accepted"
    opened = {str(i) for (i,) in target.query("select id from tool_calls")}
    assert set(answers.tools) <= opened
    granted = bool(target.query("select count(*) from grants where package = 'acme.p'"
                                " and permission = 'clipboard.write'")[0][0])
    last_answered = max(i for i, (_verb, code) in enumerate(answers.consent) if code == 200)
    if all(code is not None for _verb, code in answers.consent[last_answered + 1:]):
        # No grant or revoke was left without its answer: the last answered one stands.
        assert granted == (answers.consent[last_answered][0] == "grant")
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
