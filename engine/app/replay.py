"""``arrowgate replay``: conformance cases (FORMAT.md) played on a virtual clock.

A case sets up a canvas in a fresh temporary folder and SQLite file, then
plays its steps against a real `Engine` whose clock only moves when a step
says so; agents and terminals are the engine's simulated ones. ``restart``
closes the engine and opens a new one on the same file.

The whole case is validated first (`engine.app.casefile`): an invalid case is
reported with the file, the step and the field, nothing is created for it,
and the other cases of the run are still played. A step may ``bind`` its
value to a name; ``"$NAME"`` and ``"$NAME.key"`` in later steps are replaced
by it just before the step runs, and the step is checked again after that.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from engine.app.casefile import (
    BIND_REF,
    NOT_BOUND,
    CaseFiles,
    load_case,
    step_problems,
    write_files,
)
from engine.core.decision import Decision
from engine.core.errors import CaseInvalid, ConsentError, StoreFailed
from engine.core.hosts import normalise_host
from engine.core.manifest import file_digests
from engine.core.text import inert_lines, visible
from engine.core.tools import ToolCall
from engine.effects.files import ConfinedFiles
from engine.effects.netguard import (
    FetchFailed,
    FetchResponse,
    FetchTooLarge,
    GuardedFetch,
    normal_url,
)
from engine.effects.world import ScopeHandler, World
from engine.engine import Engine
from engine.services.subscriptions import Subscription

__all__ = ["CaseResult", "StepResult", "VirtualClock", "load_case", "run_case", "run_files"]


class VirtualClock:
    """A clock that moves only when told to."""

    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@dataclass
class StepResult:
    """One step: what was expected, what happened, and whether they agree."""

    index: int
    do: str
    passed: bool
    expected: Any
    got: dict[str, Any]
    problem: str = ""

    def to_json(self, case: str) -> dict[str, Any]:
        """The ``--json`` line for this step."""
        return {"case": case, "step": self.index, "do": self.do, "passed": self.passed,
                "expected": self.expected, "got": self.got, "problem": self.problem}


@dataclass
class CaseResult:
    """A whole case."""

    path: str
    name: str
    steps: list[StepResult] = field(default_factory=list)
    error: str = ""
    #: The case file itself is not valid (FORMAT.md): nothing was played or written.
    invalid: bool = False

    @property
    def passed(self) -> bool:
        """True when every step passed and the case was valid."""
        return not self.error and all(s.passed for s in self.steps)


def _outcome_of(decision: Decision, engine: Engine) -> dict[str, Any]:
    got: dict[str, Any] = {"outcome": decision.outcome}
    if decision.outcome in ("ok", "queued"):
        got["ok"] = True
    elif decision.outcome == "held":
        got["held"] = True
    else:
        got["error"] = decision.code
        got["reason"] = decision.reason
        got["permission"] = decision.permission
        got["message"] = decision.message
        if decision.retry_after is not None:
            got["retry_after"] = decision.retry_after
    if decision.prompt:
        prompt = engine.prompt(decision.prompt)
        got["state"] = prompt.state if prompt else None
    if "error" not in got:
        # A refused call has no value: no ``result`` for an expectation to match.
        got["result"] = decision.value
    return got


#: What a refusal says, as `_outcome_of` and `_error_of` put it in ``got``.
_REFUSAL_KEYS = ("error", "reason", "permission", "message", "retry_after")


def _emit_outcome(deliveries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """An emit's outcome (or an ``await`` on it) from each port arrow's: its first refusal,
    else held when any prompt waits for a person, else ok. The value is each arrow's, by
    arrow id; the state is each arrow's own, in ``deliveries`` (there is no one state)."""
    got: dict[str, Any] = {"deliveries": deliveries,
                           "result": {a: d.get("result") for a, d in deliveries.items()}}
    failed = [d for d in deliveries.values() if "error" in d]
    if failed:
        # The step's refusal is its first refused delivery's, whole (retry_after too).
        got.update({k: failed[0][k] for k in _REFUSAL_KEYS if k in failed[0]})
    elif any(d.get("held") for d in deliveries.values()):
        got["held"] = True  # waits for a person: not (yet) accepted
    else:
        got["ok"] = True
    return got


def _error_of(exc: ConsentError) -> dict[str, Any]:
    got = {"error": exc.code, "reason": exc.reason, "permission": exc.permission,
           "message": exc.message}
    retry_after = exc.details.get("retry_after")
    if retry_after is not None:
        got["retry_after"] = retry_after
    return got


def matches(expected: Any, actual: Any) -> bool:
    """FORMAT.md matching: objects on the keys given, lists element by element."""
    if isinstance(expected, dict):
        if set(expected) == {"$contains"}:
            return isinstance(actual, str) and expected["$contains"] in actual
        if set(expected) == {"$len"}:
            return isinstance(actual, list) and json_equal(expected["$len"], len(actual))
        return isinstance(actual, dict) and all(
            k in actual and matches(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(
            matches(e, a) for e, a in zip(expected, actual))
    return json_equal(expected, actual)


def json_equal(expected: Any, actual: Any) -> bool:
    """JSON equality of two plain values: ``true`` is not ``1`` nor ``false`` ``0`` (a
    bool equals only a bool), and numbers compare exactly (Python compares an int
    with a float exactly, so an int beyond 2**53 is not rounded through ``float``)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected is actual
    return bool(expected == actual)


def _inert(value: object) -> str:
    """A case-supplied value as report text: its control characters shown, not obeyed
    (a case is shared; ESC or CR in it must not repaint the report)."""
    return visible(str(value))


def _report(text: str) -> str:
    """The report's lines with any control character left in them shown inert, and each
    line bounded (an expectation of megabytes is the case's, not the report's): the
    last guard, after each case-supplied value was made inert where it was put."""
    return inert_lines(text)


def _covered(expect: dict[str, Any], got: dict[str, Any], key: str) -> bool:
    """True when the expectation names, in ``deliveries``, every port arrow whose outcome
    has ``key`` (an emit's refused or held deliveries), each then checked on its own."""
    wanted, deliveries = expect.get("deliveries"), got.get("deliveries")
    if not isinstance(wanted, dict) or not isinstance(deliveries, dict):
        return False
    arrows = [arrow for arrow, outcome in deliveries.items() if outcome.get(key)]
    return bool(arrows) and all(arrow in wanted for arrow in arrows)


def _unexpected_refusal(expect: dict[str, Any], got: dict[str, Any]) -> str:
    """Why a refused step fails an expectation that does not expect a refusal; else empty.

    A step is expected to succeed unless its expectation names an ``error``, says
    ``{"ok": false}``, or (an emit) names each refused port arrow in ``deliveries``.
    Anything else (``{}``, ``{"result": ...}``, ``{"held": false}``, ``deliveries`` of
    other arrows) fails on a refusal, as no ``expect`` at all does.
    """
    if "error" not in got or "error" in expect or expect.get("ok") is False \
            or _covered(expect, got, "error"):
        return ""
    return f"expected success, got {_inert(got['error'])}"


def _unexpected_hold(expect: dict[str, Any], got: dict[str, Any]) -> str:
    """Why a held step fails an expectation that does not expect a hold; else empty.

    Held is not success (FORMAT.md: ``ok`` is "a prompt was accepted: queued or
    delivered"): a hold is expected by ``{"held": true}``, ``{"state": "held"}``,
    ``{"ok": false}``, or (an emit) by naming each held port arrow in ``deliveries``.
    """
    if not got.get("held") or expect.get("held") is True or expect.get("state") == "held" \
            or expect.get("ok") is False or _covered(expect, got, "held"):
        return ""
    return 'expected success, the prompt is held (a hold is expected by {"held": true})'


def check_expectation(expect: dict[str, Any] | None, got: dict[str, Any]) -> str:
    """Empty when ``got`` meets ``expect`` (None: the step must succeed); else what differs."""
    expect = expect or {}
    unexpected = _unexpected_refusal(expect, got) or _unexpected_hold(expect, got)
    problems = [unexpected] if unexpected else []
    if "ok" in expect and not unexpected and bool(got.get("ok")) != bool(expect["ok"]):
        problems.append(f"expected ok={_inert(expect['ok'])}")
    if "error" in expect:
        if got.get("error") != expect["error"]:
            problems.append(f"expected error {_inert(expect['error'])}, "
                            f"got {_inert(got.get('error') or 'none')}")
    # Checked whenever given (FORMAT.md), with or without ``error`` beside them.
    for key in ("reason", "permission"):
        if key in expect and got.get(key) != expect[key]:
            problems.append(f"expected {key} {_inert(repr(expect[key]))}, "
                            f"got {_inert(repr(got.get(key)))}")
    if "held" in expect and bool(got.get("held")) != bool(expect["held"]):
        problems.append(f"expected held={_inert(expect['held'])}")
    if "state" in expect and "state" not in got and "deliveries" in got:
        problems.append(f"expected state {_inert(repr(expect['state']))}, but an emit has a "
                        "state per port arrow: expect it in deliveries")
    elif "state" in expect and got.get("state") != expect["state"]:
        problems.append(f"expected state {_inert(repr(expect['state']))}, "
                        f"got {_inert(repr(got.get('state')))}")
    # A refused call has no value (`_outcome_of`); an emit refused on some of its port
    # arrows still has one, each arrow's (FORMAT.md), beside its first refusal.
    if "result" in expect and "result" not in got and "error" in got:
        problems.append("a refused step has no value to match result")
    elif "result" in expect and not matches(expect["result"], got.get("result")):
        problems.append("result does not match")
    if "deliveries" in expect:
        deliveries = got.get("deliveries") or {}
        for arrow, sub in expect["deliveries"].items():
            if arrow not in deliveries:
                problems.append(f"no delivery on {_inert(arrow)}")
                continue
            problem = check_expectation(sub, deliveries[arrow])
            if problem:
                problems.append(f"delivery on {_inert(arrow)}: {problem}")
    if "count" in expect and got.get("count") != expect["count"]:
        problems.append(f"expected {_inert(expect['count'])} rows, got {got.get('count')}")
    if "outcomes" in expect and got.get("outcomes") != expect["outcomes"]:
        problems.append(f"expected outcomes {_inert(expect['outcomes'])}, "
                        f"got {_inert(got.get('outcomes'))}")
    if "retry_after" in expect:
        wanted, actual = float(expect["retry_after"]), got.get("retry_after")
        if not isinstance(actual, (int, float)) or abs(float(actual) - wanted) > 0.001:
            problems.append(f"expected retry_after {wanted:g} (within 0.001 s), got "
                            f"{actual if actual is not None else 'none'}")
    return "; ".join(problems)


def _case_fetch(case: dict[str, Any]) -> GuardedFetch:
    """The guarded fetch with the case's resolver and answers: no real network."""
    dns = {normalise_host(h): list(a) for h, a in (case.get("dns") or {}).items()}
    answers = {normal_url(u): r for u, r in (case.get("http") or {}).items()}

    def transport(method: str, url: str, headers: dict[str, str], body: str | None,
                  address: str, *, timeout: float, max_bytes: int,
                  **_more: Any) -> FetchResponse:
        answer = answers.get(normal_url(url))
        if answer is None:
            return FetchResponse(404, "not found")
        # The workspace's fetch_timeout and fetch_max_bytes, as the real
        # transport applies them: an answer slower than the deadline, or
        # larger than the cap, never reaches the card.
        if float(answer.get("delay", 0)) > timeout:
            raise FetchFailed("timeout", f"no answer within {timeout:g} s")
        text = str(answer.get("body", ""))
        if len(text.encode("utf-8")) > max_bytes:
            raise FetchTooLarge(f"the response is larger than {max_bytes} bytes")
        location = answer.get("location")
        return FetchResponse(int(answer.get("status", 200)), text,
                             {"location": location} if location else None)

    return GuardedFetch(lambda host: dns.get(host, []), transport)


class _NoValue(Exception):
    """A ``$NAME`` use that cannot be filled in when its step runs."""


#: What a name is bound to when the step that binds it failed.
_FAILED = object()


class _Runner:
    def __init__(self, case: dict[str, Any], files: CaseFiles, folder: Path,
                 net: ScopeHandler | None, fs: ScopeHandler | None,
                 store: str | None = None) -> None:
        self.case = case
        self.files = files
        self.folder = folder
        self.clock = VirtualClock()
        self.db_path = folder / "arrowgate.db"
        #: A PostgreSQL URL to play on (in a schema of this case's own), or None.
        self.store = store
        self.schema: str | None = None
        self.workspace = folder / "workspace"
        self.trash = folder / "trash"
        self.world = World(net=net or _case_fetch(case),
                           fs=fs or ConfinedFiles(data_dir=folder / "data", trash=self.trash))
        self.engine = self._open()
        self.step_prompts: dict[str, list[str]] = {}
        #: Each ``emit`` step's prompts by port arrow (``await`` judges every one).
        self.emit_prompts: dict[str, dict[str, str]] = {}
        self.step_values: dict[str, Any] = {}
        #: Ids of ``tool`` steps that opened a tool call (``await`` reads its answer).
        self.step_tools: set[str] = set()
        self.update_hashes: dict[str, tuple[str, str]] = {}
        self.package_files: dict[str, dict[str, str]] = {}
        #: Bound values by name, and the index of the step that bound each.
        self.binds: dict[str, tuple[Any, int]] = {}
        #: Every card's events, subscribed when the card appears (FORMAT.md ``events``).
        self.subs: dict[str, Subscription] = {}
        #: The consent history as ``history`` steps have read it, and its newest entry's
        #: number: each step reads only what came after (its cost is not the history's).
        self.history: list[dict[str, Any]] = []
        self.history_seen = 0

    async def setup(self) -> None:
        self.workspace.mkdir()
        write_files(self.workspace, self.files)
        engine = self.engine
        await engine.create_workspace("w1", self.workspace, settings=self.case.get("settings"))
        for name, spec in (self.case.get("packages") or {}).items():
            files = dict(spec.get("files") or {})
            files["manifest.json"] = json.dumps(spec.get("manifest"), sort_keys=True)
            digests = file_digests(files)
            self.package_files[name] = digests
            await engine.offer(name, spec.get("manifest"), digests)
            if "grant" in spec:
                await engine.install(name, grant=spec["grant"])
        for node in self.case.get("nodes") or []:
            await engine.add_node(node, workspace="w1")
        self._subscribe_cards()
        for arrow in self.case.get("arrows") or []:
            await engine.add_arrow(arrow)

    def _subscribe_cards(self) -> None:
        """Subscribe every card not yet subscribed (set up, added or spawned)."""
        for node in self.engine.state.canvas.nodes(type="card"):
            if node.id not in self.subs:
                self.subs[node.id] = self.engine.subscribe(node.id)

    def _fill(self, value: Any) -> Any:
        """``value`` with every ``"$NAME"`` / ``"$NAME.key"`` string replaced by its value."""
        if isinstance(value, str):
            match = BIND_REF.fullmatch(value)
            if match is None:
                return value
            name, key = match.group(1), match.group(2)
            bound, index = self.binds[name]  # load_case checked the name is bound earlier
            if bound is _FAILED:
                raise _NoValue(f"${name} has no value: step {index}, which binds it, failed")
            if key is None:
                return bound
            if not isinstance(bound, dict) or key not in bound:
                have = ", ".join(map(str, bound)) if isinstance(bound, dict) else \
                    f"a {type(bound).__name__}, not an object"
                raise _NoValue(f"${name}.{key}: the value of ${name} (step {index}) has no "
                               f"key {key!r} ({have or 'no keys'})")
            return bound[key]
        if isinstance(value, dict):
            return {k: self._fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._fill(v) for v in value]
        return value

    def _bound(self, step: dict[str, Any]) -> dict[str, Any]:
        """The step with bound values filled in (its naming fields left as written)."""
        keep = set(NOT_BOUND)
        if step["do"] not in ("node.remove", "node.set", "arrow.remove"):
            keep.add("id")
        return {k: v if k in keep else self._fill(v) for k, v in step.items()}

    async def step(self, index: int, written: dict[str, Any]) -> StepResult:
        do = written["do"]
        if "t" in written:
            self.clock.t = float(written["t"])
        got: dict[str, Any] = {}
        try:
            step = self._bound(written)
        except _NoValue as exc:
            step, problem = written, str(exc)
        else:
            wrong = step_problems(do, step) if step != written else []
            # A value filled in must still fit the step (a string where one is due).
            problem = (f"after filling in bound values, field {wrong[0][0]!r} {wrong[0][1]}"
                       if wrong else "")
        if not problem:
            got, problem = await self._play(step)
        if "bind" in written:
            # A step that did not run, or ended in an error, has no value to keep.
            self.binds[written["bind"]] = (_FAILED if not got or "error" in got
                                           else got.get("result"), index)
        try:
            self._subscribe_cards()
        except ConsentError:
            pass  # a card that cannot be subscribed takes no events
        return StepResult(index, do, not problem, step.get("expect"), got, problem)

    async def _play(self, step: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """Carry out a step; (what happened, how it differs from ``expect``)."""
        try:
            got = await self._do(step)
        except ConsentError as exc:
            got = _error_of(exc)
        except Exception as exc:  # an engine bug: this step fails, the run goes on
            got = {"error": "REPLAY_ERROR", "reason": type(exc).__name__,
                   "message": f"the engine raised {type(exc).__name__}: {exc}"}
        problem = check_expectation(step.get("expect"), got)
        if got.get("error") == "REPLAY_ERROR":
            problem = "; ".join(p for p in (got["message"], problem) if p)
        if step["do"] == "await" and "held" in got and not problem:
            problem = "the prompt is still held"
        if step["do"] == "await" and got.get("state") == "open" and not problem \
                and (step.get("expect") or {}).get("state") != "open":
            # Only a step that expects the call still open may find it so.
            problem = "the tool call is still open"
        return got, problem

    async def _do(self, step: dict[str, Any]) -> dict[str, Any]:
        engine = self.engine
        do = step["do"]
        by = step.get("by", "operator")
        sid = step.get("id")
        if do == "call":
            context = self.step_values.get(step["context"]) if "context" in step else None
            decision = await engine.call(step["card"], step["call"], step.get("target"),
                                         step.get("args"), context=context)
            if decision.prompt and sid:
                self.step_prompts[sid] = [decision.prompt]
            return _outcome_of(decision, engine)
        if do == "emit":
            context = self.step_values.get(step["context"]) if "context" in step else None
            results = await engine.emit(step["card"], step["port"], step["data"],
                                        context=context)
            if sid:
                self.emit_prompts[sid] = {a: d.prompt for a, d in results.items() if d.prompt}
                self.step_prompts[sid] = list(self.emit_prompts[sid].values())
            return _emit_outcome({a: _outcome_of(d, engine) for a, d in results.items()})
        if do == "tool":
            decision = await engine.tool(step["agent"], step["card"], step["tool"],
                                         step.get("args"))
            if sid and decision.allowed:
                self.step_values[sid] = decision.value["id"]
                self.step_tools.add(sid)
            return _outcome_of(decision, engine)
        if do == "tool.answer":
            call_id = self.step_values.get(step["call"])
            if call_id is None:
                return {"error": "NOT_FOUND", "reason": "no-tool-call",
                        "message": f"step {step['call']!r} opened no tool call"}
            tc = engine.tool_call(call_id)
            answer = {"error": step["error"]} if "error" in step else {"result": step["result"]}
            await engine.answer_tool(call_id, **answer,
                                     by=step.get("by") or f"card:{tc.card if tc else '?'}")
            return {"ok": True}
        if do == "events":
            card = step["card"]
            sub = self.subs.get(card)
            if sub is None:
                sub = self.subs[card] = engine.subscribe(card)  # CARD_UNKNOWN if no card
            events = [{"type": e.type, **e.data} for e in sub.ready()]
            return {"ok": True, "result": events}
        if do == "history":
            # Only the entries recorded since the last read: the history only grows (a
            # write rolled back never showed its entries), so the older ones are kept.
            for e in engine.history.entries(after=self.history_seen):
                self.history.append({"principal": e["principal"], "action": e["action"],
                                     "accepted": e["accepted"], "reason": e["reason"],
                                     "code": e["code"], "subject": e["subject"], "t": e["t"]})
                self.history_seen = int(e["seq"])
            # A copy (of references, not entries): a later step must not grow this one's.
            entries = list(self.history)
            return {"ok": True, "result": entries, "count": len(entries)}
        if do == "install":
            review = await engine.install(step["package"], grant=step.get("grant", "required"),
                                          accept=step.get("accept", True), by=by)
            return {"ok": True, "result": review.to_json()}
        if do == "review":
            return {"ok": True, "result": (await engine.review(step["package"])).to_json()}
        if do == "grant":
            await engine.grant(step["package"], step["permission"], by=by)
            return {"ok": True}
        if do == "revoke":
            await engine.revoke(step["package"], step["permission"], by=by)
            return {"ok": True}
        if do == "request":
            granted = await engine.request(step["card"], step["permission"],
                                           answer=step["answer"] == "allow", by=by)
            return {"ok": True, "result": granted}
        if do == "update":
            name = step["package"]
            digests = file_digests(dict(step.get("files") or {}))
            update = await engine.update(name, manifest=step.get("manifest"), digests=digests)
            if sid:
                self.update_hashes[sid] = (name, update.pending_hash)
            self.update_hashes["$latest:" + name] = (name, update.pending_hash)
            return {"ok": True, "result": update.diff.to_json()}
        if do == "approve":
            name = step["package"]
            ref = step.get("review")
            if ref is not None:
                review_hash = self.update_hashes.get(ref, (name, ""))[1]
            else:
                pkg = engine.state.packages.get(name)
                review_hash = self.update_hashes.get("$latest:" + name, (name, ""))[1] or (
                    pkg.pending_hash if pkg and pkg.pending_hash else "")
            diff = await engine.approve(name, review_hash=review_hash, by=by)
            return {"ok": True, "result": diff.to_json()}
        if do == "arrow.add":
            await engine.add_arrow(step["arrow"], by=by)
            return {"ok": True}
        if do == "arrow.remove":
            await engine.remove_arrow(step["id"], by=by)
            return {"ok": True}
        if do == "node.add":
            await engine.add_node(step["node"], workspace="w1", by=by)
            return {"ok": True}
        if do == "node.remove":
            await engine.remove_node(step["id"], by=by)
            return {"ok": True}
        if do == "node.set":
            await engine.set_node(step["id"], step["fields"], by=by)
            return {"ok": True}
        if do in ("hold.approve", "hold.reject"):
            prompts = self.step_prompts.get(step["hold"], [])
            if not prompts:
                return {"error": "NOT_FOUND", "reason": "no-prompt",
                        "message": f"step {step['hold']!r} made no prompt"}
            held = [p for p in prompts if getattr(engine.prompt(p), "state", None) == "held"]
            # None held: the engine still answers (its principal check first, then
            # NOT_FOUND naming the prompt's state), not a verdict of the replay's own.
            for prompt_id in held or prompts[:1]:
                if do == "hold.approve":
                    # The person saw the held text: the replay approves exactly it.
                    shown = engine.prompt(prompt_id)
                    await engine.approve_hold(prompt_id, by=by, text_sha256=(
                        shown.text_sha256 if shown is not None else ""))
                else:
                    await engine.reject_hold(prompt_id, by=by)
            return {"ok": True}
        if do == "agent.reply":
            await engine.agent_replied(step["agent"], step["text"])
            return {"ok": True}
        if do == "terminal.output":
            await engine.terminal_output(step["terminal"], step["text"], exit=step.get("exit"))
            return {"ok": True}
        if do == "await":
            await engine.expire_due()
            if step["step"] in self.step_tools:
                return _tool_outcome(await engine.wait_tool(self.step_values[step["step"]],
                                                            timeout=0))
            prompts = self.step_prompts.get(step["step"], [])
            if not prompts:
                return {"error": "NOT_FOUND", "reason": "no-prompt",
                        "message": f"step {step['step']!r} made no prompt"}
            if step["step"] in self.emit_prompts:
                # Every prompt the emit made, judged as the emit was: one refused
                # refuses the step, one still held holds it.
                return _emit_outcome({arrow: _outcome_of(engine.outcome(prompt), engine)
                                      for arrow, prompt in self.emit_prompts[step["step"]]
                                      .items()})
            return _outcome_of(engine.outcome(prompts[0]), engine)
        if do == "log":
            rows = engine.log_rows(arrow=step.get("arrow"), card=step.get("card"))
            return {"ok": True, "result": rows, "count": len(rows),
                    "outcomes": [r["outcome"] for r in rows]}
        if do == "log.verify":
            verification = engine.verify_log()
            got: dict[str, Any] = {"result": verification.to_json()}
            if verification.ok:
                got["ok"] = True
            else:
                got.update(error="LOG_INVALID", reason=verification.problem)
            return got
        if do == "restart":
            self._close_subs()
            engine.close()
            self.engine = self._open()
            # Tool-call contexts live as long as the tool call; a restart ends them.
            # Events not yet taken are lost with the engine that sent them.
            self._subscribe_cards()
            return {"ok": True}
        raise AssertionError(do)  # load_case refused every other do

    def _open(self) -> Engine:
        """The engine on the case's database: its SQLite file, or its PostgreSQL schema."""
        if self.store is None:
            return Engine.open(self.db_path, clock=self.clock, world=self.world)
        from engine.store.pg.store import PGStore, create_schema

        if self.schema is None:
            self.schema = create_schema(self.store, prefix="arrowgate_replay")
        return Engine(PGStore.open(self.store, schema=self.schema), clock=self.clock,
                      world=self.world)

    def _close_subs(self) -> None:
        for sub in self.subs.values():
            sub.close()
        self.subs.clear()

    def close(self) -> None:
        self._close_subs()
        try:
            self.engine.close()
        finally:
            if self.store is not None and self.schema is not None:
                from engine.store.pg.store import drop_schema

                drop_schema(self.store, self.schema)


async def run_case(path: str | Path, *, net: ScopeHandler | None = None,
                   fs: ScopeHandler | None = None, store: str | None = None,
                   on_step: Callable[[StepResult], None] | None = None) -> CaseResult:
    """Load, validate and play one case file; never raises for a bad case.

    An invalid case gives a result with ``invalid`` set and its problems in
    ``error``; nothing is created for it (not even its temporary folder).

    With ``on_step``, each step's result is handed to it as it is made and only
    failed steps are kept in the result: what a passed step got (a ``history``
    step's whole consent history) is not held for the rest of the case, so a
    long case's memory grows with its steps, not their square.
    """
    try:
        case, files = load_case(path)
    except CaseInvalid as exc:
        return CaseResult(str(path), str(path), error=exc.message, invalid=True)
    result = CaseResult(str(path), str(case.get("name") or path))
    try:
        with tempfile.TemporaryDirectory(prefix="arrowgate-replay-") as tmp:
            runner = _Runner(case, files, Path(tmp), net, fs, store)
            try:
                try:
                    await runner.setup()
                except (ConsentError, OSError) as exc:
                    what = exc.message if isinstance(exc, ConsentError) else str(exc)
                    result.error = f"{path}: setup: {what}"
                    return result
                for i, step in enumerate(case["steps"]):
                    played = await runner.step(i, step)
                    if on_step is not None:
                        on_step(played)
                    if on_step is None or not played.passed:
                        result.steps.append(played)
            finally:
                runner.close()
    except Exception as exc:  # never a traceback, and the other cases still play
        result.error = f"{path}: the replay failed: {type(exc).__name__}: {exc}"
    return result


def _store_problem(store: str) -> str | None:
    """Why ``--store`` cannot be used, naming the store without a password; None when it can.

    Connects once (and lets go), so that an unreachable server is one clear
    error rather than a failure in every case.
    """
    try:
        parts = urlsplit(store)
        shown = store if parts.password is None else urlunsplit(parts._replace(
            netloc=parts.netloc.replace(f":{parts.password}@", ":***@")))
    except ValueError:
        parts, shown = None, store
    if parts is None or parts.scheme not in ("postgresql", "postgres"):
        return (f"arrowgate replay: --store {shown}: not a PostgreSQL URL "
                "(postgresql://user@host/database)")
    from engine.store.pg.store import create_schema, drop_schema

    try:
        drop_schema(store, create_schema(store, prefix="arrowgate_replay_check"))
    except StoreFailed as exc:
        return f"arrowgate replay: --store {shown}: {exc.message}"
    return None


def run_files(paths: list[str], *, as_json: bool = False, store: str | None = None) -> int:
    """Play every case, print failures (or JSON lines) and the closing line (with
    ``as_json``, the object ``{"passed", "failed", "invalid"}``).

    Returns:
        The exit code: 0 all passed; 1 a case failed; 2 a case file was not
        valid (the other cases are still played and reported) or ``store``
        cannot be used (nothing is played).
    """
    if store is not None:
        problem = _store_problem(store)
        if problem is not None:
            print(json.dumps({"error": {"message": problem}}) if as_json else problem,
                  file=sys.stderr)
            return 2
    passed = failed = invalid = 0
    for path in paths:

        def printed(step: StepResult, path: str = path) -> None:
            print(json.dumps(step.to_json(path), default=str), flush=True)

        # Steps are printed as they are played (--json) and only failed ones kept.
        result = asyncio.run(run_case(path, store=store,
                                      on_step=printed if as_json else lambda _step: None))
        if result.invalid:
            invalid += 1
            # An invalid case is an error about the input: on stderr, also with --json
            # (then as JSON, as every verb's error under --json), and counted on stdout.
            if as_json:
                print(json.dumps({"error": {"message": result.error, "case": path}}),
                      file=sys.stderr)
                print(json.dumps({"case": path, "invalid": True, "error": result.error}))
            else:
                print(_report(result.error), file=sys.stderr)
        elif as_json:
            if result.error:
                print(json.dumps({"case": path, "error": result.error}))
        elif result.error:
            print(_report(f"{path}: {result.error}" if not result.error.startswith(path)
                          else result.error))
        else:
            for step in result.steps:
                if not step.passed:
                    got = {k: v for k, v in step.got.items() if k != "result" or
                           "result" in (step.expected or {})}
                    print(_report(f"{path}: step {step.index} ({_inert(step.do)}): "
                                  f"{step.problem}\n"
                                  f"  expected: {json.dumps(step.expected)}\n"
                                  f"  got:      {json.dumps(got, default=str)[:600]}"))
        if result.passed:
            passed += 1
        else:
            failed += 1
    if as_json:  # JSON Lines to the end: a script reads every line as JSON
        print(json.dumps({"passed": passed, "failed": failed, "invalid": invalid}))
    else:
        # The invalid are among the failed, as in the JSON object: said, so a count of
        # failures is not read as cases the engine got wrong.
        print(f"replay: {passed} passed, {failed} failed"
              + (f" ({invalid} of them not played: an invalid case file)" if invalid else ""))
    return 2 if invalid else 0 if failed == 0 else 1


def _tool_outcome(tc: ToolCall) -> dict[str, Any]:
    """An ``await`` on a ``tool`` step: the card's result, or the error that ended the call."""
    if tc.state == "answered":
        return {"ok": True, "result": tc.result, "state": tc.state}
    if tc.state == "open":
        return {"state": "open"}
    return {"error": tc.code, "reason": tc.reason, "message": tc.message, "state": tc.state}
