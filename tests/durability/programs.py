"""The programs the walk of several programs drives on one store (`tests.durability.walk`):
in-process `Engine`s (an app, a person's TUI), real ``arrowgate serve`` processes reached
over their sockets with tokens (the servers of this and other machines), and the command
line's write verbs, a process each (a script). Each does what the walk asks in its own
way and answers an `Answer`. Not a test.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from engine import Engine, NotFound, file_digests
from engine.core.principal import Principal
from engine.service.auth import TokenStore
from tests.shortdirs import short_dir

PKG = "acme.m"
CARDS = ("c1", "c2")
AGENTS = ("a1", "y1")  #: y1 is in dangerous mode: its prompts are held
PERMS = ("agents.prompt", "clipboard.write")
ROOT = Path(__file__).resolve().parents[2]


def manifest(version: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The package's manifest at ``version`` and its files' digests (each version's
    files differ, so offering it makes the package pending)."""
    raw = {"name": PKG, "version": version,
           "permissions": {"agents.prompt": {}, "clipboard.write": {}},
           "tools": [{"name": "ping", "description": "answers",
                      "input": {"type": "object", "properties": {"n": {"type": "string"}}}}]}
    return raw, file_digests({"manifest.json": json.dumps(raw), "index.js": f"// {version}"})


@dataclass
class Answer:
    """What a program answered, reduced to what the model predicts."""

    outcome: str  #: a Decision's outcome; "gone": not open any more; "401": token refused
    code: str | None = None
    reason: str | None = None
    id: str | None = None  #: the prompt's or tool call's id, when one was made

    @classmethod
    def of(cls, d: Any) -> Answer:
        """From a Decision (or its JSON)."""
        if isinstance(d, dict):
            value = d.get("value") or {}
            made = d.get("prompt") or (value.get("id") if isinstance(value, dict) else None)
            return cls(d["outcome"], d.get("code"), d.get("reason"), made)
        value = d.value if isinstance(d.value, dict) else {}
        return cls(d.outcome, d.code, d.reason, d.prompt or value.get("id"))


class Program:
    """One program on the store: the operations the walk asks of it."""

    name = ""
    #: The operations it can do (its methods' names), None: every one.
    CAN: frozenset[str] | None = None

    def can(self, op: str) -> bool:
        """Whether the walk may ask ``op`` of it."""
        return self.CAN is None or op in self.CAN

    async def call(self, card: str, call: str, target: str | None, text: str) -> Answer:
        raise NotImplementedError

    async def tool(self, agent: str, card: str, n: str) -> Answer:
        raise NotImplementedError

    async def answer_tool(self, call_id: str, card: str) -> Answer:
        raise NotImplementedError

    async def approve(self, prompt_id: str, digest: str) -> Answer:
        raise NotImplementedError

    async def reject(self, prompt_id: str) -> Answer:
        raise NotImplementedError

    async def add_arrow(self, arrow_id: str, card: str, agent: str) -> None:
        raise NotImplementedError

    async def remove_arrow(self, arrow_id: str) -> None:
        raise NotImplementedError

    async def add_card(self, card: str) -> None:
        raise NotImplementedError

    async def remove_card(self, card: str) -> None:
        raise NotImplementedError

    async def grant(self, permission: str) -> None:
        raise NotImplementedError

    async def revoke(self, permission: str) -> None:
        raise NotImplementedError

    async def offer(self, version: str) -> None:
        raise NotImplementedError

    async def approve_update(self) -> None:
        raise NotImplementedError

    async def mint(self, principal: str) -> tuple[str, str]:
        raise NotImplementedError

    async def revoke_token(self, token_id: str) -> None:
        raise NotImplementedError

    async def verify(self) -> bool:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError


def _gone(exc: NotFound) -> Answer:
    return Answer("gone", "NOT_FOUND", exc.reason)


class InProcess(Program):
    """An `Engine` of this process on the store (an app, or a person's TUI)."""

    def __init__(self, name: str, engine: Engine) -> None:
        self.name, self.engine = name, engine
        self.tokens = TokenStore(engine.store.tokens())

    async def call(self, card: str, call: str, target: str | None, text: str) -> Answer:
        return Answer.of(await self.engine.call(card, call, target, {"text": text}))

    async def tool(self, agent: str, card: str, n: str) -> Answer:
        return Answer.of(await self.engine.tool(agent, card, "ping", {"n": n}))

    async def answer_tool(self, call_id: str, card: str) -> Answer:
        try:
            tc = await self.engine.answer_tool(call_id, result={"pong": call_id},
                                               by=Principal.parse(f"card:{card}"))
        except NotFound as exc:
            return _gone(exc)
        return Answer(tc.state, tc.code, tc.reason, tc.id)

    async def approve(self, prompt_id: str, digest: str) -> Answer:
        try:
            return Answer.of(await self.engine.approve_hold(prompt_id, text_sha256=digest))
        except NotFound as exc:
            return _gone(exc)

    async def reject(self, prompt_id: str) -> Answer:
        try:
            return Answer.of(await self.engine.reject_hold(prompt_id))
        except NotFound as exc:
            return _gone(exc)

    async def add_arrow(self, arrow_id: str, card: str, agent: str) -> None:
        await self.engine.add_arrow({"id": arrow_id, "from": card, "to": agent})

    async def remove_arrow(self, arrow_id: str) -> None:
        await self.engine.remove_arrow(arrow_id)

    async def add_card(self, card: str) -> None:
        await self.engine.add_node({"id": card, "type": "card", "package": PKG}, workspace="w1")

    async def remove_card(self, card: str) -> None:
        await self.engine.remove_node(card)

    async def grant(self, permission: str) -> None:
        await self.engine.grant(PKG, permission)

    async def revoke(self, permission: str) -> None:
        await self.engine.revoke(PKG, permission)

    async def offer(self, version: str) -> None:
        raw, digests = manifest(version)
        await self.engine.update(PKG, manifest=raw, digests=digests)

    async def approve_update(self) -> None:
        self.engine.catch_up()  # the version another program offered
        update = self.engine.pending_update(PKG)
        assert update is not None, f"{self.name}: no pending version of {PKG}"
        await self.engine.approve(PKG, review_hash=update.pending_hash)

    async def mint(self, principal: str) -> tuple[str, str]:
        return await self.tokens.mint(principal)

    async def revoke_token(self, token_id: str) -> None:
        assert await self.tokens.revoke(token_id), f"{self.name}: token {token_id} not live"

    async def verify(self) -> bool:
        return bool(self.engine.verify_log().ok)

    async def close(self) -> None:
        self.tokens.close()
        self.engine.close()


class Served(Program):
    """A real ``arrowgate serve`` process on the store, reached over its socket: the
    operator's token for consent, a card's token for its calls and tool answers, an
    agent's for its tool calls (minted by whichever program the walk picks)."""

    def __init__(self, name: str, proc: subprocess.Popen[str], sock: str, token: str) -> None:
        self.name, self.proc, self.sock = name, proc, sock
        self.clients: dict[str, httpx.AsyncClient] = {}
        self.op = self.client(token)
        self.tokens: dict[str, tuple[str, str]] = {}  #: principal -> (id, token) it holds

    def client(self, token: str) -> httpx.AsyncClient:
        """A client sending ``token`` (one per token, kept until `close`)."""
        if token not in self.clients:
            self.clients[token] = httpx.AsyncClient(
                transport=httpx.AsyncHTTPTransport(uds=self.sock), base_url="http://arrowgate",
                timeout=60, headers={"Authorization": f"Bearer {token}"})
        return self.clients[token]

    async def _as(self, principal: str, method: str, path: str, body: Any = None
                  ) -> httpx.Response:
        held = self.tokens.get(principal)
        assert held is not None, f"{self.name} holds no token of {principal}"
        return await self.client(held[1]).request(method, path, json=body)

    @staticmethod
    def _ok(r: httpx.Response) -> Any:
        assert r.status_code in (200, 201, 204), (r.status_code, r.text)
        return r.json() if r.content else None

    @staticmethod
    def _gone_or(r: httpx.Response) -> Answer:
        if r.status_code == 404:
            return Answer("gone", "NOT_FOUND", r.json().get("reason"))
        if r.status_code == 401:
            return Answer("401")
        assert r.status_code == 200, (r.status_code, r.text)
        return Answer.of(r.json())

    async def call(self, card: str, call: str, target: str | None, text: str) -> Answer:
        body = {"card": card, "call": call, "args": {"text": text}}
        if target is not None:
            body["target"] = target
        return self._gone_or(await self._as(f"card:{card}", "POST", "/v1/calls", body))

    async def tool(self, agent: str, card: str, n: str) -> Answer:
        r = await self._as(f"agent:{agent}", "POST", "/v1/tool-calls",
                           {"agent": agent, "card": card, "tool": "ping", "args": {"n": n}})
        if r.status_code == 401:
            return Answer("401")
        return Answer.of(self._ok(r)["decision"])

    async def answer_tool(self, call_id: str, card: str) -> Answer:
        r = await self._as(f"card:{card}", "POST", f"/v1/tool-calls/{call_id}/result",
                           {"result": {"pong": call_id}})
        if r.status_code in (401, 404):
            return self._gone_or(r)
        out = self._ok(r)
        return Answer(out["state"], out.get("code"), out.get("reason"), out["id"])

    async def approve(self, prompt_id: str, digest: str) -> Answer:
        return self._gone_or(await self.op.post(f"/v1/holds/{prompt_id}/approve",
                                                json={"text_sha256": digest}))

    async def reject(self, prompt_id: str) -> Answer:
        return self._gone_or(await self.op.post(f"/v1/holds/{prompt_id}/reject"))

    async def add_arrow(self, arrow_id: str, card: str, agent: str) -> None:
        self._ok(await self.op.post("/v1/workspaces/w1/arrows",
                                    json={"id": arrow_id, "from": card, "to": agent}))

    async def remove_arrow(self, arrow_id: str) -> None:
        self._ok(await self.op.delete(f"/v1/arrows/{arrow_id}"))

    async def add_card(self, card: str) -> None:
        self._ok(await self.op.post("/v1/workspaces/w1/nodes",
                                    json={"id": card, "type": "card", "package": PKG}))

    async def remove_card(self, card: str) -> None:
        self._ok(await self.op.delete(f"/v1/nodes/{card}"))

    async def grant(self, permission: str) -> None:
        self._ok(await self.op.post(f"/v1/packages/{PKG}/grant", json={"permission": permission}))

    async def revoke(self, permission: str) -> None:
        self._ok(await self.op.post(f"/v1/packages/{PKG}/revoke",
                                    json={"permission": permission}))

    async def offer(self, version: str) -> None:
        raw, _digests = manifest(version)
        self._ok(await self.op.post("/v1/packages", json={
            "manifest": raw, "files": {"index.js": f"// {version}"}}))

    async def approve_update(self) -> None:
        diff = self._ok(await self.op.get(f"/v1/packages/{PKG}/diff"))
        self._ok(await self.op.post(f"/v1/packages/{PKG}/approve",
                                    json={"review_hash": diff["pending_hash"]}))

    async def mint(self, principal: str) -> tuple[str, str]:
        out = self._ok(await self.op.post("/v1/tokens", json={"principal": principal}))
        return str(out["id"]), str(out["token"])

    async def revoke_token(self, token_id: str) -> None:
        self._ok(await self.op.delete(f"/v1/tokens/{token_id}"))

    async def verify(self) -> bool:
        return bool(self._ok(await self.op.post("/v1/log/verify"))["ok"])

    async def close(self) -> None:
        for client in self.clients.values():
            await client.aclose()
        if self.proc.poll() is None:
            self.proc.terminate()
        await asyncio.to_thread(self.proc.communicate, timeout=30)


async def close_all(programs: list[Program]) -> None:
    """Close every program, even when one fails to close (a server left running would
    outlive the test); then raise the first failure."""
    failures: list[BaseException] = []
    for program in programs:
        try:
            await program.close()
        except BaseException as exc:  # the others are closed all the same
            failures.append(exc)
    if failures:
        raise failures[0]


def start_serve(name: str, store: str, folder: Path) -> Served:
    """``arrowgate serve`` on ``store`` (a SQLite file or a PostgreSQL URL), importing
    this tree, on a socket of its own; returns once it serves."""
    sock = short_dir("agp") / "s" / "serve.sock"
    token_file = folder / f"{name}.operator-token"
    where = ["--store", store] if store.startswith("postgresql://") else ["--db", store]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # What it says on stderr goes to a file: a pipe nobody reads would fill, and the
    # server would stop answering mid-walk.
    errors = folder / f"{name}.stderr"
    with errors.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "engine.app.cli", "serve", *where,
                                 "--socket", str(sock), "--token-file", str(token_file)],
                                stdout=subprocess.PIPE, stderr=err, text=True,
                                cwd=ROOT, env=env)
    assert proc.stdout is not None
    proc.stdout.readline()
    if proc.stdout.readline().strip() != "ready":
        proc.kill()
        proc.communicate(timeout=30)
        raise AssertionError(f"arrowgate serve did not start: {errors.read_text()}")
    return Served(name, proc, str(sock), token_file.read_text().strip())


#: A write verb as a script runs it, in a process of its own; the operator check that
#: needs a person at a terminal (SPEC §4.5) is told a person operates it, as the write
#: verbs' own tests do (a test has no terminal to give it).
_AS_A_PERSON = (
    "import sys; import engine.app.cli_write as w; "
    "from engine.effects.operator import OperatorCheck; "
    "w.operator_check = lambda: OperatorCheck(True); "
    "from engine.app.cli import main; sys.exit(main(sys.argv[1:]))")


class CommandLine(Program):
    """The command line's write verbs on the SQLite file (``--db``), each a process of
    its own that opens the database, does one thing and closes it (a script)."""

    #: What it can do (no verb answers a tool call or offers a version by manifest).
    CAN = frozenset({"call", "approve", "reject", "add_arrow", "remove_arrow", "add_card",
                     "remove_card", "grant", "revoke", "mint", "revoke_token", "verify"})

    def __init__(self, name: str, db: str, folder: Path) -> None:
        self.name, self.db, self.folder = name, db, folder
        self.minted = 0

    async def _run(self, *argv: str, json_out: bool = True, answer: str | None = None
                   ) -> tuple[int, Any]:
        """The verb's exit code and its JSON answer (its text without ``json_out``);
        ``answer``: what it reads on standard input, a person's answer to its question."""
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        args = [sys.executable, "-c", _AS_A_PERSON, *argv, "--db", self.db]
        if json_out:
            args.append("--json")
        proc = await asyncio.create_subprocess_exec(
            *args, cwd=ROOT, env=env,
            stdin=subprocess.DEVNULL if answer is None else subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = await proc.communicate(None if answer is None else answer.encode())
        text = out.decode().strip() or err.decode().strip()
        try:
            return proc.returncode or 0, json.loads(text) if json_out else text
        except json.JSONDecodeError:
            raise AssertionError(f"{self.name} {argv}: exit {proc.returncode}: "
                                 f"{out.decode()!r} {err.decode()!r}") from None

    def _ok(self, done: tuple[int, Any], argv: tuple[str, ...]) -> Any:
        assert done[0] == 0, f"{self.name} {argv}: exit {done[0]}: {done[1]}"
        return done[1]

    async def call(self, card: str, call: str, target: str | None, text: str) -> Answer:
        argv = ["call", card, call, *([target] if target else []),
                "--args", json.dumps({"text": text})]
        _code, out = await self._run(*argv)
        return Answer.of(out)

    async def _answer_hold(self, argv: list[str]) -> Answer:
        code, out = await self._run(*argv)
        error = out.get("error") or {}  # a refusal's JSON, on stderr
        if code != 0 and error.get("code") == "NOT_FOUND":
            return Answer("gone", "NOT_FOUND", error.get("reason"))
        assert "outcome" in out, f"{self.name} {argv}: exit {code}: {out}"
        return Answer.of(out)

    async def approve(self, prompt_id: str, digest: str) -> Answer:
        return await self._answer_hold(["hold", "approve", prompt_id, "--sha256", digest])

    async def reject(self, prompt_id: str) -> Answer:
        return await self._answer_hold(["hold", "reject", prompt_id])

    async def add_arrow(self, arrow_id: str, card: str, agent: str) -> None:
        argv = ("arrow", "add", "w1", arrow_id, card, agent)
        self._ok(await self._run(*argv), argv)

    async def remove_arrow(self, arrow_id: str) -> None:
        argv = ("arrow", "remove", arrow_id)
        self._ok(await self._run(*argv), argv)

    async def add_card(self, card: str) -> None:
        argv = ("node", "add", "w1", card, "card", "--set", f"package={PKG}")
        self._ok(await self._run(*argv), argv)

    async def remove_card(self, card: str) -> None:
        argv = ("node", "remove", card)
        self._ok(await self._run(*argv), argv)

    async def grant(self, permission: str) -> None:
        argv = ("package", "grant", PKG, permission)
        # It shows the permission and asks; the person says yes.
        self._ok(await self._run(*argv, answer="y\n"), argv)

    async def revoke(self, permission: str) -> None:
        argv = ("package", "revoke", PKG, permission)
        self._ok(await self._run(*argv), argv)

    async def mint(self, principal: str) -> tuple[str, str]:
        self.minted += 1
        out = self.folder / f"{self.name}-{self.minted}.token"
        argv = ("token", "mint", principal, "--out", str(out))
        done = self._ok(await self._run(*argv), argv)
        return str(done["id"]), out.read_text().strip()

    async def revoke_token(self, token_id: str) -> None:
        argv = ("token", "revoke", token_id)
        self._ok(await self._run(*argv), argv)

    async def verify(self) -> bool:
        code, _out = await self._run("log", "verify", json_out=False)
        return code == 0

    async def close(self) -> None:
        return None
