"""``arrowgate replay``: conformance cases (FORMAT.md) played on a virtual clock.

A case sets up a canvas in a fresh temporary folder and SQLite file, then
plays its steps against a real `Engine` whose clock only moves when a step
says so; agents and terminals are the engine's simulated ones. ``restart``
closes the engine and opens a new one on the same file.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .decision import Decision
from .engine import Engine
from .errors import CaseInvalid, ConsentError
from .files import ConfinedFiles
from .hosts import normalise_host
from .manifest import file_digests
from .netguard import FetchResponse, GuardedFetch, normal_url
from .world import ScopeHandler, World

__all__ = ["CaseResult", "StepResult", "VirtualClock", "load_case", "run_case", "run_files"]

# Fields each step kind takes (beyond do, t, id, by, expect), required ones first.
STEP_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "call": (("card", "call"), ("target", "args", "context")),
    "emit": (("card", "port", "data"), ("context",)),
    "tool": (("agent", "card", "tool"), ()),
    "install": (("package",), ("grant", "accept")),
    "review": (("package",), ()),
    "grant": (("package", "permission"), ()),
    "revoke": (("package", "permission"), ()),
    "request": (("card", "permission", "answer"), ()),
    "update": (("package",), ("manifest", "files")),
    "approve": (("package",), ("review",)),
    "arrow.add": (("arrow",), ()),
    "arrow.remove": (("id",), ()),
    "node.add": (("node",), ()),
    "node.remove": (("id",), ()),
    "node.set": (("id", "fields"), ()),
    "hold.approve": (("hold",), ()),
    "hold.reject": (("hold",), ()),
    "agent.reply": (("agent", "text"), ()),
    "terminal.output": (("terminal", "text"), ("exit",)),
    "await": (("step",), ()),
    "log": ((), ("arrow", "card")),
    "log.verify": ((), ()),
    "restart": ((), ()),
}
_COMMON = {"do", "t", "id", "by", "expect"}
_EXPECT_KEYS = {"ok", "error", "reason", "permission", "held", "state", "result", "deliveries",
                "count", "outcomes"}
_TOP_KEYS = {"name", "about", "settings", "files", "dns", "http", "packages", "nodes", "arrows",
             "steps"}


class VirtualClock:
    """A clock that moves only when told to."""

    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _bad(path: str, where: str, problem: str) -> CaseInvalid:
    return CaseInvalid(f"{path}: {where}: {problem}")


def load_case(path: str | Path) -> dict[str, Any]:
    """Read and validate a case file.

    Raises:
        CaseInvalid: naming the file, the step and the field that is wrong.
    """
    name = str(path)
    try:
        case = json.loads(Path(path).read_text())
    except OSError as exc:
        raise _bad(name, "file", f"cannot be read: {exc}") from exc
    except ValueError as exc:
        raise _bad(name, "file", f"is not valid JSON: {exc}") from exc
    if not isinstance(case, dict):
        raise _bad(name, "file", "a case is a JSON object")
    for key in case:
        if key not in _TOP_KEYS:
            raise _bad(name, f"field {key!r}", "is not a field of a case")
    for key, kind in (("settings", dict), ("files", dict), ("dns", dict), ("http", dict),
                      ("packages", dict), ("nodes", list), ("arrows", list), ("steps", list)):
        if key in case and not isinstance(case[key], kind):
            raise _bad(name, f"field {key!r}", f"must be a JSON {kind.__name__}")
    steps = case.get("steps")
    if not isinstance(steps, list):
        raise _bad(name, "field 'steps'", "is required: a list of steps")
    ids: dict[str, int] = {}
    last_t = 0.0
    for i, step in enumerate(steps):
        where = f"step {i}"
        if not isinstance(step, dict):
            raise _bad(name, where, "a step is a JSON object")
        do = step.get("do")
        if do not in STEP_FIELDS:
            raise _bad(name, f"{where} field 'do'", f"unknown do {do!r}")
        required, optional = STEP_FIELDS[do]
        for key in required:
            if key not in step:
                raise _bad(name, f"{where} ({do}) field {key!r}", "is required")
        for key in step:
            if key not in _COMMON and key not in required and key not in optional:
                raise _bad(name, f"{where} ({do}) field {key!r}", f"is not a field of {do}")
        if "t" in step:
            t = step["t"]
            if not isinstance(t, (int, float)) or isinstance(t, bool):
                raise _bad(name, f"{where} field 't'", "must be a number of seconds")
            if t < last_t:
                raise _bad(name, f"{where} field 't'", f"time goes backwards ({t} < {last_t})")
            last_t = float(t)
        if "expect" in step:
            expect = step["expect"]
            if not isinstance(expect, dict):
                raise _bad(name, f"{where} field 'expect'", "must be an object")
            unknown = sorted(set(expect) - _EXPECT_KEYS)
            if unknown:
                raise _bad(name, f"{where} field 'expect'", f"unknown expectation {unknown[0]!r}")
        for key in ("step", "hold", "context", "review"):
            if key in step:
                ref = step[key]
                if not isinstance(ref, str) or ref not in ids:
                    raise _bad(name, f"{where} ({do}) field {key!r}",
                               f"refers to {ref!r}, which no earlier step has as its id")
        if "id" in step:
            if not isinstance(step["id"], str) or step["id"] in ids:
                raise _bad(name, f"{where} field 'id'", "must be a string no earlier step uses")
            ids[step["id"]] = i
    return case


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
    if decision.prompt:
        prompt = engine.prompt(decision.prompt)
        got["state"] = prompt.state if prompt else None
    got["result"] = decision.value
    return got


def _error_of(exc: ConsentError) -> dict[str, Any]:
    return {"error": exc.code, "reason": exc.reason, "permission": exc.permission,
            "message": exc.message}


def matches(expected: Any, actual: Any) -> bool:
    """FORMAT.md matching: objects on the keys given, lists element by element."""
    if isinstance(expected, dict):
        if set(expected) == {"$contains"}:
            return isinstance(actual, str) and expected["$contains"] in actual
        if set(expected) == {"$len"}:
            return isinstance(actual, list) and len(actual) == expected["$len"]
        return isinstance(actual, dict) and all(
            k in actual and matches(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(
            matches(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) \
            and not isinstance(expected, bool) and not isinstance(actual, bool):
        return float(expected) == float(actual)
    return bool(expected == actual)


def check_expectation(expect: dict[str, Any] | None, got: dict[str, Any]) -> str:
    """Empty when ``got`` meets ``expect``; else what differs."""
    if expect is None:
        return "" if "error" not in got else f"expected success, got {got['error']}"
    problems = []
    if "ok" in expect and bool(got.get("ok")) != bool(expect["ok"]):
        problems.append(f"expected ok={expect['ok']}")
    if "error" in expect:
        if got.get("error") != expect["error"]:
            problems.append(f"expected error {expect['error']}, got {got.get('error') or 'none'}")
        for key in ("reason", "permission"):
            if key in expect and got.get(key) != expect[key]:
                problems.append(f"expected {key} {expect[key]!r}, got {got.get(key)!r}")
    if "held" in expect and bool(got.get("held")) != bool(expect["held"]):
        problems.append(f"expected held={expect['held']}")
    if "state" in expect and got.get("state") != expect["state"]:
        problems.append(f"expected state {expect['state']!r}, got {got.get('state')!r}")
    if "result" in expect and not matches(expect["result"], got.get("result")):
        problems.append("result does not match")
    if "deliveries" in expect:
        deliveries = got.get("deliveries") or {}
        for arrow, sub in expect["deliveries"].items():
            if arrow not in deliveries:
                problems.append(f"no delivery on {arrow}")
                continue
            problem = check_expectation(sub, deliveries[arrow])
            if problem:
                problems.append(f"delivery on {arrow}: {problem}")
    if "count" in expect and got.get("count") != expect["count"]:
        problems.append(f"expected {expect['count']} rows, got {got.get('count')}")
    if "outcomes" in expect and got.get("outcomes") != expect["outcomes"]:
        problems.append(f"expected outcomes {expect['outcomes']}, got {got.get('outcomes')}")
    return "; ".join(problems)


def _case_fetch(case: dict[str, Any]) -> GuardedFetch:
    """The guarded fetch with the case's resolver and answers: no real network."""
    dns = {normalise_host(h): list(a) for h, a in (case.get("dns") or {}).items()}
    answers = {normal_url(u): r for u, r in (case.get("http") or {}).items()}

    def transport(method: str, url: str, headers: dict[str, str], body: str | None,
                  address: str, **_limits: Any) -> FetchResponse:
        answer = answers.get(normal_url(url))
        if answer is None:
            return FetchResponse(404, "not found")
        location = answer.get("location")
        return FetchResponse(int(answer.get("status", 200)), str(answer.get("body", "")),
                             {"location": location} if location else None)

    return GuardedFetch(lambda host: dns.get(host, []), transport)


class _Runner:
    def __init__(self, case: dict[str, Any], folder: Path, net: ScopeHandler | None,
                 fs: ScopeHandler | None) -> None:
        self.case = case
        self.folder = folder
        self.clock = VirtualClock()
        self.db_path = folder / "arrowgate.db"
        self.workspace = folder / "workspace"
        self.trash = folder / "trash"
        self.world = World(net=net or _case_fetch(case),
                           fs=fs or ConfinedFiles(data_dir=folder / "data", trash=self.trash))
        self.engine = Engine.open(self.db_path, clock=self.clock, world=self.world)
        self.step_prompts: dict[str, list[str]] = {}
        self.step_values: dict[str, Any] = {}
        self.update_hashes: dict[str, tuple[str, str]] = {}
        self.package_files: dict[str, dict[str, str]] = {}

    async def setup(self) -> None:
        self.workspace.mkdir()
        for rel, content in (self.case.get("files") or {}).items():
            path = self.workspace / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, dict) and "symlink" in content:
                os.symlink(content["symlink"], path)
            else:
                path.write_text(str(content))
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
        for arrow in self.case.get("arrows") or []:
            await engine.add_arrow(arrow)

    async def step(self, index: int, step: dict[str, Any]) -> StepResult:
        if "t" in step:
            self.clock.t = float(step["t"])
        try:
            got = await self._do(step)
        except ConsentError as exc:
            got = _error_of(exc)
        problem = check_expectation(step.get("expect"), got)
        if step.get("do") == "await" and "held" in got and not problem:
            problem = "the prompt is still held"
        return StepResult(index, step["do"], not problem, step.get("expect"), got, problem)

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
            deliveries = {a: _outcome_of(d, engine) for a, d in results.items()}
            if sid:
                self.step_prompts[sid] = [d.prompt for d in results.values() if d.prompt]
            failed = [d for d in deliveries.values() if "error" in d]
            got: dict[str, Any] = {"deliveries": deliveries}
            if failed:
                got.update(error=failed[0]["error"], reason=failed[0].get("reason"),
                           permission=failed[0].get("permission"))
            else:
                got["ok"] = True
                if any(d.get("held") for d in deliveries.values()):
                    got["held"] = True
            return got
        if do == "tool":
            decision = await engine.tool(step["agent"], step["card"], step["tool"])
            if sid and decision.allowed:
                self.step_values[sid] = decision.value
            return _outcome_of(decision, engine)
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
            held = [p for p in prompts if (engine.prompt(p) or None) and
                    engine.prompt(p).state == "held"]  # type: ignore[union-attr]
            if not held:
                return {"error": "NOT_FOUND", "reason": "not-held",
                        "message": f"step {step['hold']!r} has no held prompt"}
            for prompt_id in held:
                if do == "hold.approve":
                    # The person saw the held text: the replay approves exactly it.
                    shown = engine.prompt(prompt_id)
                    assert shown is not None
                    await engine.approve_hold(prompt_id, text_sha256=shown.text_sha256, by=by)
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
            prompts = self.step_prompts.get(step["step"], [])
            if not prompts:
                return {"error": "NOT_FOUND", "reason": "no-prompt",
                        "message": f"step {step['step']!r} made no prompt"}
            return _outcome_of(engine.outcome(prompts[0]), engine)
        if do == "log":
            rows = engine.log_rows(arrow=step.get("arrow"), card=step.get("card"))
            return {"ok": True, "result": rows, "count": len(rows),
                    "outcomes": [r["outcome"] for r in rows]}
        if do == "log.verify":
            verification = engine.verify_log()
            got = {"result": verification.to_json()}
            if verification.ok:
                got["ok"] = True
            else:
                got.update(error="LOG_INVALID", reason=verification.problem)
            return got
        if do == "restart":
            engine.close()
            self.engine = Engine.open(self.db_path, clock=self.clock, world=self.world)
            # Tool-call contexts live as long as the tool call; a restart ends them.
            return {"ok": True}
        raise AssertionError(do)  # load_case refused every other do

    def close(self) -> None:
        self.engine.close()


async def run_case(path: str | Path, *, net: ScopeHandler | None = None,
                   fs: ScopeHandler | None = None) -> CaseResult:
    """Load and play one case file."""
    try:
        case = load_case(path)
    except CaseInvalid as exc:
        return CaseResult(str(path), str(path), error=exc.message)
    result = CaseResult(str(path), str(case.get("name", path)))
    with tempfile.TemporaryDirectory(prefix="arrowgate-replay-") as tmp:
        runner = _Runner(case, Path(tmp), net, fs)
        try:
            try:
                await runner.setup()
            except ConsentError as exc:
                result.error = f"{path}: setup: {exc.message}"
                return result
            for i, step in enumerate(case["steps"]):
                result.steps.append(await runner.step(i, step))
        finally:
            runner.close()
    return result


def run_files(paths: list[str], *, as_json: bool = False) -> int:
    """Play every case, print failures (or JSON lines) and the closing line; exit code."""
    passed = failed = 0
    for path in paths:
        result = asyncio.run(run_case(path))
        if as_json:
            if result.error:
                print(json.dumps({"case": path, "error": result.error}))
            for step in result.steps:
                print(json.dumps(step.to_json(path), default=str))
        elif result.error:
            print(f"{path}: {result.error}" if not result.error.startswith(path)
                  else result.error)
        else:
            for step in result.steps:
                if not step.passed:
                    got = {k: v for k, v in step.got.items() if k != "result" or
                           "result" in (step.expected or {})}
                    print(f"{path}: step {step.index} ({step.do}): {step.problem}\n"
                          f"  expected: {json.dumps(step.expected)}\n"
                          f"  got:      {json.dumps(got, default=str)[:600]}")
        if result.passed:
            passed += 1
        else:
            failed += 1
    print(f"replay: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1

