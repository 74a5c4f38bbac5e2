"""``arrowgate serve`` SIGKILLed mid-burst, and what its answers must still be worth after.

Several clients burst at a service: two cards' calls and prompts (`CARDS`), an operator
granting and revoking an optional permission, an agent calling a card's tool. Once every
client has had answers it is killed (`burst_then_kill`); `check_answers` then reads the
store around the engine. Used by
tests/durability/test_a_killed_service_loses_nothing_it_answered.py (one kill a store)
and bench/crash_soak.py (many, seeded).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.durability.targets import Target
from tests.shortdirs import short_dir

__all__ = ["CARDS", "PROMPTS", "Answers", "Service", "burst_then_kill", "canvas",
           "check_answers", "start_service"]

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = {"name": "acme.p", "version": "1.0.0", "tools": ["relay"],
            "permissions": {"agents.prompt": {}, "cards.connected": {},
                            "clipboard.write": {"optional": True}}}
#: The cards that call and prompt.
CARDS = ("c0", "c1")
#: The card whose tool the agent calls: a card with tool calls open may not prompt their
#: agent (the loop guard, SPEC §9), nor may another card of its package (README: the
#: loop guard and a package's cards), so it is not one of `CARDS` and is of a package of
#: its own, `TOOL_MANIFEST`'s.
TOOL_CARD = "c2"
TOOL_MANIFEST = {"name": "acme.t", "version": "1.0.0", "tools": ["relay"], "permissions": {}}
#: The prompt window: 6 a minute per card (SPEC §6).
PROMPTS = 6


@dataclass
class Service:
    """A running ``arrowgate serve``: its process, socket and operator token."""

    proc: subprocess.Popen[str]
    address: str
    token: str

    def client(self, token: str | None = None) -> httpx.Client:
        """A client of the service (the operator's unless ``token`` is given)."""
        return httpx.Client(transport=httpx.HTTPTransport(uds=self.address),
                            base_url="http://ag", timeout=30,
                            headers={"Authorization": f"Bearer {token or self.token}"})


def start_service(target: Target, token_file: Path) -> Service:
    """``arrowgate serve`` on ``target``'s store, on a socket of its own, once ready.

    On PostgreSQL its anchor of the store goes beside ``$ARROWGATE_DB``: set it."""
    store = "--store" if target.postgres else "--db"
    sock = short_dir("ag-kill") / "s" / "serve.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine.app.cli", "serve", store, target.location,
         "--token-file", str(token_file), "--socket", str(sock)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    address = proc.stdout.readline().strip()
    if proc.stdout.readline().strip() != "ready":
        proc.kill()
        raise AssertionError(f"serve did not start: {proc.communicate()[1]}")
    return Service(proc, address, token_file.read_text().strip())


@dataclass
class Answers:
    """What the clients were answered (and, for consent, what they sent)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    #: (card, text, the Decision) of every answered call.
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    #: (verb, HTTP status or None while unanswered) of every grant and revoke sent.
    consent: list[tuple[str, int | None]] = field(default_factory=list)
    #: The ids of the tool calls opened.
    tools: list[str] = field(default_factory=list)


def canvas(op: httpx.Client, folder: Path) -> str:
    """The canvas of the burst, made through the service; returns agent a1's token."""
    # Every refusal logged row by row (none folded into a suppressed row: a soak's
    # prompts meet full windows a hundred times a minute), no window on note writes.
    assert op.post("/v1/workspaces", json={"id": "w1", "folder": str(folder), "settings": {
        "card_write_limit": 1_000_000, "denial_log_limit": 1_000_000}}).status_code == 201
    assert op.post("/v1/packages", json={"manifest": MANIFEST}).status_code in (200, 201)
    assert op.post("/v1/packages/acme.p/install", json={"grant": "all"}).status_code == 200
    assert op.post("/v1/packages", json={"manifest": TOOL_MANIFEST}).status_code in (200, 201)
    assert op.post("/v1/packages/acme.t/install", json={"grant": "all"}).status_code == 200
    for node in ({"id": "a1", "type": "agent", "status": "waiting"},
                 {"id": "n1", "type": "note"}):
        assert op.post("/v1/workspaces/w1/nodes", json=node).status_code == 201
    for card in (*CARDS, TOOL_CARD):
        assert op.post("/v1/workspaces/w1/nodes", json={
            "id": card, "type": "card",
            "package": TOOL_MANIFEST["name"] if card == TOOL_CARD else "acme.p"}
        ).status_code == 201
        for to in ("a1", "n1"):
            assert op.post("/v1/workspaces/w1/arrows", json={
                "id": f"{card}-{to}", "from": card, "to": to}).status_code == 201
    return str(op.post("/v1/tokens", json={"principal": "agent:a1"}).json()["token"])


def _card(service: Service, card: str, tag: str, answers: Answers,
          stop: threading.Event) -> None:
    with service.client() as client:
        n = 0
        while not stop.is_set():
            n += 1
            text = f"{card} {tag} {n}"
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
            opened = answer.json().get("id")  # None: refused (its window full)
            if opened is not None:
                with answers.lock:
                    answers.tools.append(str(opened))


#: How long `burst_then_kill` waits for its burst to be answered before it fails: a
#: burst takes well under a second on a quiet machine, tens under CI's load.
_BURST_DEADLINE = 180.0


def burst_then_kill(service: Service, agent_token: str, answers: Answers, *, tag: str = "",
                    calls: int = 40, pause: float = 0.0) -> None:
    """Burst at ``service`` from every client; SIGKILL it once ``calls`` more calls, a tool
    call and a grant or revoke were answered, and ``pause`` seconds after that."""
    stop = threading.Event()
    with answers.lock:
        before = len(answers.calls), len(answers.tools), len(answers.consent)
    threads = [threading.Thread(target=_card, args=(service, card, tag, answers, stop))
               for card in CARDS]
    threads += [threading.Thread(target=_operator, args=(service, answers, stop)),
                threading.Thread(target=_agent, args=(service, agent_token, answers, stop))]
    for thread in threads:
        thread.start()
    # Bounded: a client thread that died (or a server that stopped answering) would
    # otherwise leave this loop waiting for answers that never come, and the run stalled
    # instead of failing.
    deadline = time.monotonic() + _BURST_DEADLINE
    while True:
        with answers.lock:
            got = (len(answers.calls) - before[0], len(answers.tools) - before[1],
                   sum(code == 200 for _verb, code in answers.consent[before[2]:]))
        if got[0] >= calls and got[1] > 0 and got[2] > 0:
            break
        if time.monotonic() > deadline:
            stop.set()
            service.proc.kill()
            service.proc.communicate(timeout=60)
            for thread in threads:
                thread.join(60)
            raise AssertionError(f"the burst was not answered within {_BURST_DEADLINE:g} s: "
                                 f"{got[0]} of {calls} calls, {got[1]} tool calls, {got[2]} "
                                 "consent actions answered")
        stop.wait(0.005)
    stop.wait(pause)
    service.proc.send_signal(signal.SIGKILL)
    service.proc.communicate(timeout=60)
    stop.set()
    for thread in threads:
        thread.join(60)


def check_answers(target: Target, answers: Answers) -> None:
    """Every answer holds in the store, read around the engine: each answered call has its
    log row, each accepted prompt its row and its counted rate event, each tool call its
    row, and the last answered grant or revoke stands (unless a later one was sent and
    never answered)."""
    logged = {str(p) for (p,) in target.query("select payload from log")}
    missing = [text for _card, text, _d in answers.calls if text not in logged]
    assert not missing, f"answered calls without a log row: {missing[:5]}"
    for card in CARDS:
        prompts = {d["prompt"] for c, _t, d in answers.calls
                   if c == card and d["outcome"] == "queued"}
        stored = {str(p) for (p,) in target.query(
            "select id from prompts where card = ?", [card])}
        assert prompts <= stored, f"{card}'s accepted prompts without a row"
        counted = target.query("select count(*) from rate_events where card = ? and"
                               " key = 'prompt'", [card])[0][0]
        assert counted >= len(prompts), f"{card}: {counted} counted, {len(prompts)} accepted"
    opened = {str(i) for (i,) in target.query("select id from tool_calls")}
    assert set(answers.tools) <= opened, "tool calls opened without a row"
    granted = bool(target.query("select count(*) from grants where package = 'acme.p'"
                                " and permission = 'clipboard.write'")[0][0])
    done = [i for i, (_verb, code) in enumerate(answers.consent) if code == 200]
    if done and all(code is not None for _verb, code in answers.consent[done[-1] + 1:]):
        assert granted == (answers.consent[done[-1]][0] == "grant"), \
            f"the last answered {answers.consent[done[-1]][0]} does not stand"
