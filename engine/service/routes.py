"""The routes of SPEC §10.1, by area; each a thin translation to the engine.

No route holds a database lock while it waits: waits are on the engine's
in-memory state (``Engine.wait``), bounded by ``timeout``.

A route that reads the engine's state catches up with the store first
(`Engine.catch_up`), as every operation does: what another server on the
same store committed is answered about at once (SPEC §10), not after this
server's next timer tick. ``POST /v1/calls`` needs no such step: it is an
operation.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Depends, FastAPI, Header, Query, Request
from starlette.responses import Response, StreamingResponse

from engine.app.times import TIME_HELP, parse_time
from engine.app.verifier import verify_in_a_process
from engine.core.manifest import file_digests, package_name_problem, refuse_unreadable_manifest
from engine.core.text import named
from engine.core.uniquekeys import loads_unique
from engine.service.bodyvalues import BoundedRoute
from engine.service.context import (
    HEALTH,
    Caller,
    Service,
    decision_json,
    json_response,
)
from engine.service.events import MAX_STREAMS
from engine.service.fastlane import decide_batch, decide_call
from engine.service.logpage import MAX_ROWS, log_page
from engine.service.minting import mint_node_token
from engine.service.models import (
    ApproveBody,
    ArrowBody,
    ArrowOut,
    BatchBody,
    BatchResult,
    CallBody,
    DecisionOut,
    DeclineBody,
    DiffOut,
    EmitBody,
    EmitResult,
    GrantBody,
    GrantsOut,
    HealthOut,
    HistoryOut,
    HoldApproveBody,
    HoldOut,
    InstallBody,
    InstallOut,
    LogOut,
    NoBody,
    NodeBody,
    NodeOut,
    NodePatch,
    OfferBody,
    PackageOut,
    PromptOut,
    ReachOut,
    ReviewOut,
    RevokeBody,
    RevokeOut,
    TokenBody,
    TokenOut,
    VerifyOut,
    WorkspaceBody,
    WorkspaceOut,
)
from engine.service.problems import PROBLEM, ServiceError
from engine.service.queryparams import DECIMAL_HELP
from engine.service.readiness import Readiness
from engine.store.logfilter import LOG_OUTCOMES

if TYPE_CHECKING:
    from engine.core.prompts import Prompt
    from engine.core.review import Diff
    from engine.engine import Engine

__all__ = ["register"]

CallerDep = Callable[..., Coroutine[Any, Any, Caller]]
#: The longest a client may ask ``/wait`` to wait, in seconds.
MAX_WAIT = 300.0
#: About how many bytes of an export's lines are sent at once.
_EXPORT_CHUNK = 256 * 1024


def _not_found(what: str, reason: str, *, package: str | None = None) -> ServiceError:
    # ``reason`` names what is missing as the engine's own NOT_FOUND does
    # (``missing-node``, ``missing-package``, ``nothing-pending``): a client
    # gets one reason for one thing through the service and the Python API;
    # and ``package`` when the engine's names it too.
    if package is None:
        return ServiceError(404, "NOT_FOUND", what, reason=reason)
    return ServiceError(404, "NOT_FOUND", what, reason=reason, package=package)


def _crowded(card: str, heartbeat: float) -> ServiceError:
    """The 429 for a token that holds `MAX_STREAMS` event streams of ``card`` open.

    Its ``Retry-After`` is the heartbeat: within one, every open stream is written
    to (a ping, when no event came), and a stream whose client is gone without a
    close (a reset, a crashed process's host still answering) is found by that
    write and closed, making room. A client that closes one of its own makes room
    at once; one whose streams are all read is refused again, no sooner than a
    heartbeat apart."""
    return ServiceError(429, "RATE_LIMITED", f"this token holds {MAX_STREAMS} event streams "
                        f"of card {named(card)!r} open, the most one token may: close one "
                        "(a client reconnecting closes its last first) before opening "
                        f"another; a stream whose client is gone is closed within "
                        f"{heartbeat:g} s, at its next heartbeat", reason="too-many-streams",
                        retry_after=heartbeat)


def _diff_body(name: str, pending_hash: str, diff: Diff) -> dict[str, Any]:
    """A pending version's diff as `DiffOut` (the update's and the approval's answer)."""
    return {"package": name, "pending_hash": pending_hash, **diff.to_json(),
            "changed": list(diff.changed), "lines": diff.lines}


def _prompt_json(engine: Engine, p: Prompt) -> dict[str, Any]:
    return {"id": p.id, "card": p.card, "package": p.package, "agent": p.agent,
            "arrow": p.arrow, "state": p.state, "text_sha256": p.text_sha256,
            "deadline": _deadline(engine, p), "code": p.code, "reason": p.reason,
            "message": p.message}


def _deadline(engine: Engine, p: Prompt) -> float | None:
    """A prompt's deadline as shown: a held one's when it really expires by the clock
    (`Engine.hold_ends`: the engine's time may stand still ahead of it, SPEC §6)."""
    return engine.hold_ends(p.id) if p.state == "held" else p.deadline


def register(app: FastAPI, service: Service, caller: CallerDep) -> None:
    """Add every router to ``app``."""
    engine = service.engine
    Who = Depends(caller)

    # ------------------------------------------------------------ health, tokens
    r = APIRouter(tags=["service"], route_class=BoundedRoute)

    readiness = Readiness(engine.catch_up)

    @r.get("/v1/health", response_model=HealthOut)
    async def health(ready: bool = Query(False, description=(
            "also ask the store (at most once a second, however many ask): 503 "
            "STORE_FAILED, saying why, when it cannot be read now"))) -> Response:
        """The service is up (no token needed); with ``ready=true``, its store answers too."""
        if not ready:
            return json_response(HEALTH)
        readiness.check()
        return json_response({**HEALTH, "store": "ok"})

    @r.get("/openapi.json", response_model=dict[str, Any])
    async def openapi_json(_who: Caller = Who) -> Response:
        """This document: the OpenAPI 3.1 description of every route (any token)."""
        return json_response(app.openapi())

    @r.post("/v1/tokens", status_code=201, response_model=TokenOut)
    async def mint_token(body: TokenBody, who: Caller = Who) -> Response:
        """Mint a card or agent token (operator, from a person's process)."""
        who.require_person("minting a token")
        kind, _, node_id = body.principal.partition(":")
        # The node on a canvas now, and still once the token is written (else revoked).
        token_id, token = await mint_node_token(engine, service.tokens, service.made, kind,
                                                node_id)
        return json_response({"id": token_id, "token": token, "principal": body.principal}, 201)

    @r.delete("/v1/tokens/{token_id}", status_code=204)
    async def revoke_token(token_id: str, who: Caller = Who,
                           body: NoBody | None = None) -> Response:
        """Revoke a token (the operator, or the token's own holder)."""
        if not who.is_operator and who.token_id != token_id:
            who.require_operator("revoking another principal's token")
        if not await service.tokens.revoke(token_id):
            raise _not_found(f"no live token {named(token_id)!r}", "missing-token")
        return Response(status_code=204)

    app.include_router(r)

    # ------------------------------------------------------------ canvas
    r = APIRouter(tags=["canvas"], route_class=BoundedRoute)

    def _workspace_json(ws_id: str) -> dict[str, Any]:
        ws = engine.state.workspaces.get(ws_id)
        if ws is None:
            raise _not_found(f"no workspace {named(ws_id)!r}", "missing-workspace")
        return {"id": ws.id, "folder": ws.folder, "settings": ws.settings.to_dict()}

    def _in_workspace(who: Caller, ws_id: str) -> None:
        if who.is_operator:
            return
        node = engine.state.canvas.node(who.principal.node or "")
        if node is None or node.workspace != ws_id:
            raise _not_found(f"no workspace {named(ws_id)!r}", "missing-workspace")

    @r.post("/v1/workspaces", status_code=201, response_model=WorkspaceOut)
    async def create_workspace(body: WorkspaceBody, who: Caller = Who) -> Response:
        """Create a workspace with its project folder (operator)."""
        await engine.create_workspace(body.id, body.folder, settings=body.settings,
                                      by=who.by())
        return json_response(_workspace_json(body.id), 201)

    @r.get("/v1/workspaces/{ws}", response_model=WorkspaceOut)
    async def get_workspace(ws: str, who: Caller = Who) -> Response:
        """A workspace (the operator, or a card or agent on it)."""
        engine.catch_up()
        _in_workspace(who, ws)
        return json_response(_workspace_json(ws))

    @r.post("/v1/workspaces/{ws}/nodes", status_code=201, response_model=NodeOut)
    async def add_node(ws: str, body: NodeBody, who: Caller = Who) -> Response:
        """Put a node on the canvas (operator)."""
        # Who asks, before anything is looked up (here and in every route that
        # changes the canvas): a card or agent is refused the same whatever
        # exists elsewhere, and learns nothing of other canvases (SPEC §5).
        principal = who.by()
        if principal.is_operator:
            engine.catch_up()
            _workspace_json(ws)
        node = await engine.add_node(body.model_dump(exclude_none=True), workspace=ws,
                                     by=principal)
        return json_response(node.to_dict(), 201)

    @r.get("/v1/workspaces/{ws}/nodes", response_model=list[NodeOut])
    async def list_nodes(ws: str, who: Caller = Who) -> Response:
        """The nodes of a canvas (operator)."""
        who.require_operator("listing the canvas")
        engine.catch_up()
        _workspace_json(ws)
        return json_response([n.to_dict() for n in engine.state.canvas.nodes(ws)])

    @r.get("/v1/nodes/{node_id}", response_model=NodeOut)
    async def get_node(node_id: str, who: Caller = Who) -> Response:
        """A node, as the canvas's list gives it (operator): what a change of it is judged
        against (``arrowgate node set`` judges its fields so before sending them)."""
        who.require_operator("reading a node")
        engine.catch_up()
        node = engine.state.canvas.node(node_id)
        if node is None:
            raise _not_found(f"no node {named(node_id)!r}", "missing-node")
        return json_response(node.to_dict())

    @r.patch("/v1/nodes/{node_id}", response_model=NodeOut)
    async def patch_node(node_id: str, body: NodePatch, who: Caller = Who) -> Response:
        """Change fields of a node (operator)."""
        principal = who.by()
        fields = body.model_dump(exclude_unset=True)
        if principal.is_operator:
            engine.catch_up()
            if engine.state.canvas.node(node_id) is None:
                raise _not_found(f"no node {named(node_id)!r}", "missing-node")
            if not fields:
                raise ServiceError(400, "INVALID_ARGUMENT", "no field to change",
                                   reason="empty")
        node = await engine.set_node(node_id, fields, by=principal)
        return json_response(node.to_dict())

    @r.delete("/v1/nodes/{node_id}", status_code=204)
    async def delete_node(node_id: str, who: Caller = Who,
                          body: NoBody | None = None) -> Response:
        """Remove a node and its arrows (operator)."""
        principal = who.by()
        engine.catch_up()
        node = engine.state.canvas.node(node_id)
        if principal.is_operator and node is None:
            raise _not_found(f"no node {named(node_id)!r}", "missing-node")
        await engine.remove_node(node_id, by=principal)
        if node is not None:
            service.node_removed(node_id, node.type)
        return Response(status_code=204)

    @r.post("/v1/workspaces/{ws}/arrows", status_code=201, response_model=ArrowOut)
    async def add_arrow(ws: str, body: ArrowBody, who: Caller = Who) -> Response:
        """Draw an arrow (operator): consent for data."""
        principal = who.by()
        if principal.is_operator:
            engine.catch_up()
            _workspace_json(ws)
            src = engine.state.canvas.node(body.from_)
            if src is not None and src.workspace != ws:
                # The canvas model's reason, as the Python API and `--db` say it.
                raise ServiceError(400, "INVALID_ARROW",
                                   f"node {body.from_} is not in workspace {ws}",
                                   reason="cross-workspace")
        raw = body.model_dump(by_alias=True, exclude_none=True)
        arrow = await engine.add_arrow(raw, by=principal)
        return json_response(arrow.to_dict(), 201)

    @r.get("/v1/workspaces/{ws}/arrows", response_model=list[ArrowOut])
    async def list_arrows(ws: str, who: Caller = Who) -> Response:
        """The arrows of a canvas (operator)."""
        who.require_operator("listing the canvas")
        engine.catch_up()
        _workspace_json(ws)
        return json_response([a.to_dict() for a in engine.state.canvas.arrows(ws)])

    @r.delete("/v1/arrows/{arrow_id}", status_code=204)
    async def delete_arrow(arrow_id: str, who: Caller = Who,
                           body: NoBody | None = None) -> Response:
        """Remove an arrow (narrowing: operator, or a node on that canvas)."""
        principal = who.by()
        if principal.is_operator:
            engine.catch_up()
        if principal.is_operator and engine.state.canvas.arrow(arrow_id) is None:
            raise _not_found(f"no arrow {named(arrow_id)!r}", "missing-arrow")
        await engine.remove_arrow(arrow_id, by=principal)
        return Response(status_code=204)

    app.include_router(r)

    # ------------------------------------------------------------ packages
    r = APIRouter(tags=["packages"], route_class=BoundedRoute)

    def _lock(name: str) -> asyncio.Lock:
        return service.package_locks.setdefault(name, asyncio.Lock())

    @r.post("/v1/packages", status_code=201, response_model=PackageOut)
    async def offer(body: OfferBody, who: Caller = Who) -> Response:
        """Offer a package (operator); a new version of an installed one becomes pending."""
        who.require_operator("offering a package")
        name = body.manifest.get("name")
        if not isinstance(name, str) or not name:
            raise ServiceError(400, "MANIFEST_INVALID", "$.name: a package "
                               "needs a name", reason="name")
        # The package is offered under its manifest's name, so a name the engine
        # refuses (SPEC §2's pattern) is a problem of the manifest here.
        problem = package_name_problem(name)
        if problem:
            raise ServiceError(400, "MANIFEST_INVALID", f"$.name: {problem}", reason="name")
        files: dict[str, str | bytes] = dict(body.files)
        if "manifest.json" in files:
            # Its size and values first, as the engine's reading of a manifest tells
            # them (MANIFEST_INVALID, unread): the file's text is one string of the
            # body, which the body's own bounds let through up to `--max-body`.
            refuse_unreadable_manifest(body.files["manifest.json"])
            try:
                # Each key once, as the command line reads a manifest: the file's text
                # is what a reader of the package sees and what the hash covers.
                same = loads_unique(body.files["manifest.json"]) == body.manifest
            except (ValueError, RecursionError):  # not JSON, a key twice, nested past the limit
                same = False
            if not same:
                raise ServiceError(400, "INVALID_ARGUMENT", "files."
                                   "manifest.json is not the manifest sent", reason="manifest")
        # The engine hashes the manifest itself (offer and update alike), as for the
        # Python API: the file's text when one is sent (checked above to be the
        # manifest sent), else the manifest sent as its canonical JSON.
        manifest: dict[str, Any] | str = body.files["manifest.json"] \
            if "manifest.json" in body.files else body.manifest
        digests = file_digests(files)
        async with _lock(name):
            engine.catch_up()  # installed through another server: an update, not an offer
            pkg = engine.state.packages.get(name)
            if pkg is not None and pkg.installed:
                update = await engine.update(name, manifest=manifest, digests=digests)
                # The installed version's own files again: nothing waits for approval
                # (the engine drops a pending version then), so not "pending". Told by
                # the update, not the state after it: another server's change may be
                # caught up by then (the package removed: no KeyError, no other answer).
                state = "pending" if update.waiting else "installed"
                digest = update.pending_hash
            else:
                # Its own hash: read back after the await, another operation's withdrawal
                # was a KeyError (a 500) and its new offer the wrong hash.
                state, digest = "available", await engine.offer(name, manifest, digests)
        return json_response({"package": name, "state": state, "hash": digest}, 201)

    @r.get("/v1/packages/{name}/review", response_model=ReviewOut)
    async def review(name: str, who: Caller = Who) -> Response:
        """The install review a person is shown; its ``hash`` is what install names."""
        who.require_operator("reading a review")
        rv = await engine.review(name)
        return json_response({**rv.to_json(), "lines": list(rv.lines), "text": rv.text})

    @r.post("/v1/packages/{name}/install", response_model=InstallOut)
    async def install(name: str, body: InstallBody, who: Caller = Who) -> Response:
        """Install: all required permissions, or nothing (operator, from a person)."""
        principal = who.by()
        async with _lock(name):
            # The engine compares the hash in the install itself, after the
            # principal (anyone but a person is refused, and recorded, whatever
            # the hash): a 409 ``stale`` when another package was offered since.
            rv = await engine.install(name, grant=body.grant, review_hash=body.review_hash,
                                      by=principal)
        return json_response({**rv.to_json(), "installed": True,
                              "granted": sorted(engine.state.grants.get(name, set()))})

    @r.post("/v1/packages/{name}/decline", response_model=InstallOut)
    async def decline(name: str, who: Caller = Who, body: DeclineBody | None = None
                      ) -> Response:
        """The person said no (operator): to an install, and nothing is installed; or to
        an installed package's pending update, which is discarded, and the approved
        version holds again (its review and grants are answered, ``installed`` true).
        An installed package with no version pending is 404 ``nothing-pending``; one whose
        pending version is not the body's ``pending_hash`` (the one the person saw) is 409
        ``stale``."""
        principal = who.by()
        async with _lock(name):
            engine.catch_up()  # installed through another server: its update is declined
            pkg = engine.state.packages.get(name)
            if pkg is None or not pkg.installed:
                rv = await engine.install(name, accept=False, by=principal)
                return json_response({**rv.to_json(), "installed": False})
            await engine.decline_update(
                name, pending_hash=body.pending_hash if body is not None else None,
                by=principal)
            rv = await engine.review(name)
        return json_response({**rv.to_json(), "installed": True,
                              "granted": sorted(engine.state.grants.get(name, set()))})

    @r.post("/v1/packages/{name}/grant", response_model=GrantsOut)
    async def grant(name: str, body: GrantBody, who: Caller = Who) -> Response:
        """Grant one declared permission (operator), for the version ``review_hash``
        names when given (409 ``stale`` when another is installed now)."""
        await engine.grant(name, body.permission, review_hash=body.review_hash, by=who.by())
        return json_response({"package": name,
                              "granted": sorted(engine.state.grants.get(name, set()))})

    @r.post("/v1/packages/{name}/revoke", response_model=RevokeOut)
    async def revoke(name: str, body: RevokeBody, who: Caller = Who) -> Response:
        """Revoke a permission (narrowing); ``revoked`` is false when it was not granted."""
        revoked = await engine.revoke(name, body.permission, by=who.by())
        return json_response({"package": name, "revoked": revoked,
                              "granted": sorted(engine.state.grants.get(name, set()))})

    @r.get("/v1/packages/{name}/diff", response_model=DiffOut)
    async def diff(name: str, who: Caller = Who) -> Response:
        """The pending version's diff, and the hash an approval must name."""
        who.require_operator("reading a diff")
        engine.catch_up()
        update = engine.pending_update(name)
        if update is None:
            raise _not_found(f"{name} has no version waiting for approval", "nothing-pending",
                             package=name)
        return json_response(_diff_body(name, update.pending_hash, update.diff))

    @r.post("/v1/packages/{name}/approve", response_model=DiffOut)
    async def approve(name: str, body: ApproveBody, who: Caller = Who) -> Response:
        """Approve the pending version whose review the person saw (409 when stale)."""
        d = await engine.approve(name, review_hash=body.review_hash, by=who.by())
        return json_response(_diff_body(name, body.review_hash, d))

    app.include_router(r)

    # ------------------------------------------------------------ calls
    r = APIRouter(tags=["calls"], route_class=BoundedRoute)

    @r.post("/v1/calls", response_model=DecisionOut)
    async def call(body: CallBody, who: Caller = Who) -> Response:
        """A card's call: the Decision (a refusal is a 200 too)."""
        return json_response(await decide_call(engine, who.principal, body))

    @r.post("/v1/calls:batch", response_model=BatchResult)
    async def call_batch(body: BatchBody, who: Caller = Who) -> Response:
        """Many calls in one round trip, decided in order; every one durable on return."""
        return json_response(await decide_batch(engine, who.principal, body))

    @r.post("/v1/emit", response_model=EmitResult)
    async def emit(body: EmitBody, who: Caller = Who) -> Response:
        """A card puts data on an output port: a decision per port arrow."""
        who.acts_as_card(body.card)
        out = await engine.emit(body.card, body.port, body.data, context=body.context)
        return json_response({"decisions": {k: decision_json(d) for k, d in out.items()}})

    app.include_router(r)

    # ------------------------------------------------------------ prompts and holds
    r = APIRouter(tags=["holds"], route_class=BoundedRoute)

    def _visible_prompt(prompt_id: str, who: Caller) -> Prompt:
        # Made, or answered, through another server on the store: known here at once.
        engine.catch_up()
        prompt = engine.prompt(prompt_id)
        p = who.principal
        if prompt is None or not (p.is_operator or (
                ((p.kind == "card" and p.node == prompt.card)
                 or (p.kind == "agent" and _in_its_tool_call(prompt, p.node)))
                # Not one of an earlier node given the token's node's id.
                and not service.made.predates(p.node or "", prompt.t))):
            raise _not_found(f"no prompt {named(prompt_id)!r}", "missing-prompt")
        return prompt

    def _in_its_tool_call(prompt: Prompt, agent: str | None) -> bool:
        """Whether ``agent`` called a tool of the card that made ``prompt``, in the
        prompt's causal chain (arrowgate__prompt_status, SPEC §10.2): the chain
        has the agent right before that card. Not merely the chain's first agent,
        which may be hops away and not connected to the card. Or whether it was made
        while the agent has a tool call open to the card's package
        (`Engine.tells_agent`: one naming no context carries another call's chain)."""
        chain, card = prompt.chain, prompt.card
        return any(chain[i] == agent and chain[i + 1] == card
                   for i in range(len(chain) - 1)) or (
            agent is not None and engine.tells_agent(prompt, agent))

    @r.get("/v1/prompts/{prompt_id}", response_model=PromptOut)
    async def get_prompt(prompt_id: str, who: Caller = Who) -> Response:
        """A prompt and its state (the operator, the card that made it, or the agent whose
        tool call it was made in)."""
        return json_response(_prompt_json(engine, _visible_prompt(prompt_id, who)))

    @r.get("/v1/prompts/{prompt_id}/wait", response_model=DecisionOut)
    async def wait_prompt(prompt_id: str, who: Caller = Who,
                          timeout: float = Query(30.0, ge=0, le=MAX_WAIT, description=(
                              f"How many seconds to wait, {DECIMAL_HELP}."))) -> Response:
        """Wait up to ``timeout`` seconds for a held prompt's answer; its decision now."""
        _visible_prompt(prompt_id, who)
        with service.watch(who.shown()) as watch:
            # However many clients wait on one prompt, the engine is asked once.
            await service.wait_unless_closing(asyncio.shield(service.prompt_wait(prompt_id)),
                                              timeout, watch)
            watch.require_standing()
        return json_response(decision_json(engine.outcome(prompt_id)))

    @r.get("/v1/holds", response_model=list[HoldOut])
    async def holds(who: Caller = Who) -> Response:
        """Held prompts with their whole text (the operator: all; a card: its own)."""
        if who.principal.kind == "agent":
            who.require_operator("listing holds")
        mine = None if who.is_operator else who.principal.node
        engine.catch_up()
        return json_response([
            {"id": p.id, "card": p.card, "package": p.package, "arrow": p.arrow,
             "agent": p.agent, "text": p.text, "text_sha256": p.text_sha256,
             "deadline": _deadline(engine, p)}
            for p in engine.prompts(state="held") if mine is None or p.card == mine])

    @r.post("/v1/holds/{prompt_id}/approve", response_model=DecisionOut)
    async def approve_hold(prompt_id: str, body: HoldApproveBody,
                           who: Caller = Who) -> Response:
        """A person approves the held text whose SHA-256 they name (409 when stale)."""
        d = await engine.approve_hold(prompt_id, text_sha256=body.text_sha256, by=who.by())
        return json_response(decision_json(d))

    @r.post("/v1/holds/{prompt_id}/reject", response_model=DecisionOut)
    async def reject_hold(prompt_id: str, who: Caller = Who,
                          body: NoBody | None = None) -> Response:
        """A person rejects a held prompt."""
        d = await engine.reject_hold(prompt_id, by=who.by())
        return json_response(decision_json(d))

    app.include_router(r)

    # ------------------------------------------------------------ events
    r = APIRouter(tags=["events"], route_class=BoundedRoute)

    @r.get("/v1/events", response_class=StreamingResponse,
           responses={200: {"content": {"text/event-stream": {"schema": {"type": "string"}}},
                            "description": "Server-Sent Events: id = sequence number, "
                                           "event = type, data = {type, data}: a CardEvent "
                                           "(x-message-schema)"},
                      429: {"content": {PROBLEM: {"schema": {
                          "$ref": "#/components/schemas/Problem"}}},
                            "description": f"this token holds {MAX_STREAMS} event streams of "
                                           "the card open already (RATE_LIMITED, reason "
                                           "too-many-streams): close one first; "
                                           "Retry-After the heartbeat, within which a "
                                           "stream whose client is gone is closed"}})
    async def events(request: Request, who: Caller = Who,
                     card: str | None = Query(None, max_length=256),
                     last_event_id: str | None = Header(None, max_length=40)) -> Response:
        """The token's card's events, gated when sent; ``Last-Event-ID`` resumes."""
        p = who.principal
        if p.kind == "card":
            if card is not None and card != p.node:
                who.acts_as_card(card)
            card = p.node
        elif not p.is_operator:
            who.require_operator("reading a card's events")
        if not card:
            raise ServiceError(400, "INVALID_ARGUMENT", "card: the "
                               "operator names the card (?card=ID)", reason="card")
        last: int | None = None
        if last_event_id is not None:
            try:
                last = int(last_event_id)
            except ValueError:
                raise ServiceError(400, "INVALID_ARGUMENT", "Last-Event-ID "
                                   "is an event's sequence number", reason="last-event-id")
        feed = service.feed_hub().get(card)
        if feed.crowded(who.token_id):
            raise _crowded(card, service.heartbeat)

        async def stream() -> AsyncIterator[bytes]:
            # Watched from the stream's first step: a response never begun (its
            # client gone at once) leaves nothing behind; a token revoked meanwhile
            # is seen by `Standing.stands` (asked now: nothing confirmed it yet), and a
            # store that cannot tell ends the stream quietly, as it does later.
            standing = service.tokens.standing(who.token, who.token_id)
            try:
                if not standing.stands():
                    return
                async for chunk in feed.stream(last, heartbeat=service.heartbeat,
                                               closing=service.closing, standing=standing):
                    yield chunk
            finally:
                standing.close()

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store",
                                          "X-Accel-Buffering": "no"})

    app.include_router(r)

    # ------------------------------------------------------------ log, reach, history
    r = APIRouter(tags=["log"], route_class=BoundedRoute)

    @r.get("/v1/log", response_model=LogOut)
    async def log(who: Caller = Who,
                  arrow: str | None = Query(None, max_length=256),
                  card: str | None = Query(None, max_length=256),
                  package: str | None = Query(None, max_length=256),
                  outcome: str | None = Query(None, max_length=32,
                                              description="one of " + ", ".join(LOG_OUTCOMES)),
                  call: str | None = Query(None, max_length=128),
                  since: str | None = Query(None, max_length=64, description=TIME_HELP),
                  until: str | None = Query(None, max_length=64, description=TIME_HELP),
                  after: int | None = Query(None, ge=0, le=2**63 - 1, description=(
                      "only rows numbered above this sequence number: the `next` of "
                      "the page before")),
                  limit: int = Query(MAX_ROWS, ge=1, le=MAX_ROWS, description=(
                      f"the most rows in this page (at most {MAX_ROWS})"))) -> Response:
        """Arrow log rows in order, filtered as ``arrowgate log show`` (a card: its own):
        the same outcomes, and the same times (an ISO time without an offset is UTC).

        One page at a time: at most 1,000 rows (``limit``), and fewer when their
        payloads pass 4 MiB, so that no reader holds up the service. The answer's
        ``next`` is the ``after`` of the following page while more rows may follow,
        null once the page reached the log's end."""
        if outcome is not None and outcome not in LOG_OUTCOMES:
            # A typo must not read as an empty log.
            raise ServiceError(400, "INVALID_ARGUMENT",
                               f"outcome {outcome!r}: one of {', '.join(LOG_OUTCOMES)}",
                               reason="outcome")
        now = time.time()
        since_t, until_t = (None if v is None else _log_time(name, v, now)
                            for name, v in (("since", since), ("until", until)))
        p = who.principal
        if p.kind == "card":
            if card is not None and card != p.node:
                who.acts_as_card(card)
            card = p.node
            # Its own rows: none of an earlier card given its id (the history as the
            # store has it now: a hand edit of it is seen by catching up).
            engine.catch_up()
            made = service.made.since(card or "")
            if made is not None and (since_t is None or since_t < made):
                since_t = made
        elif not p.is_operator:
            who.require_operator("reading the log")
        rows, following = log_page(engine.log_rows, after=after, limit=limit, arrow=arrow,
                                   card=card, package=package, outcome=outcome, call=call,
                                   since=since_t, until=until_t)
        return json_response({"rows": rows, "next": following})

    def _log_time(name: str, value: str, now: float) -> float:
        try:
            return parse_time(value, now)
        except ValueError as exc:
            raise ServiceError(400, "INVALID_ARGUMENT", f"{name}: {exc}", reason=name) from exc

    @r.get("/v1/log/export", response_class=StreamingResponse,
           responses={200: {"content": {"application/jsonl": {"schema": {"type": "string"}}},
                            "description": "one decision record per line"}})
    async def log_export(who: Caller = Who) -> Response:
        """The whole log as JSON Lines, one decision record per row (operator).

        Streamed a page of rows at a time (read by sequence number after the
        last page's end), up to the newest row when the export began: the
        service holds one page, never the log, and answers other requests
        between pages."""
        who.require_operator("exporting the log")
        from engine.app.export import record_pages

        pages = record_pages(engine.log_rows, upto=engine.log_end())

        async def lines() -> AsyncIterator[bytes]:
            for records in pages:
                # Sent in chunks of about _EXPORT_CHUNK bytes: joining a whole page
                # would hold it a second and a third time (as text, then as bytes).
                chunk: list[bytes] = []
                size = 0
                for record in records:
                    line = (json.dumps(record, sort_keys=True, separators=(",", ":"))
                            + "\n").encode()
                    chunk.append(line)
                    size += len(line)
                    if size >= _EXPORT_CHUNK:
                        yield b"".join(chunk)
                        chunk, size = [], 0
                if chunk:
                    yield b"".join(chunk)
                del records, chunk  # before the next page is read
                # Each page is read on the loop: let other requests run before the next.
                await asyncio.sleep(0)

        return StreamingResponse(lines(), media_type="application/jsonl")

    @r.post("/v1/log/verify", response_model=VerifyOut)
    async def log_verify(who: Caller = Who, body: NoBody | None = None) -> Response:
        """Check the log's hash chain and anchor (operator)."""
        who.require_operator("verifying the log")
        if service.log_location is None:  # an engine in memory: no other process reads it
            return json_response(engine.verify_log().to_json())
        # Seconds of hashing for a big log: in a process of its own, the loop answering
        # every other client meanwhile (what the TUI does); one at a time, bounded.
        found = await verify_in_a_process(service.log_location, turn=service.verifying)
        return json_response(found.to_json())

    @r.get("/v1/reach/{card}", response_model=ReachOut)
    async def reach(card: str, who: Caller = Who) -> Response:
        """What a card can cause, directly and transitively (the operator, or the card)."""
        who.acts_as_card(card)
        from engine.app.reach import analyse

        engine.catch_up()
        try:
            result = analyse(engine.state, card)
        except KeyError:
            raise _not_found(f"no custom card {named(card)!r} on any canvas",
                                 "missing-card") from None
        return json_response(result.to_json())

    @r.get("/v1/history", response_model=HistoryOut)
    async def history(who: Caller = Who,
                      package: str | None = Query(None, max_length=256),
                      after: int | None = Query(None, ge=0, le=2**63 - 1, description=(
                          "only entries numbered above this sequence number: the `next` "
                          "of the page before")),
                      limit: int = Query(MAX_ROWS, ge=1, le=MAX_ROWS, description=(
                          f"the most entries in this page (at most {MAX_ROWS})"))
                      ) -> Response:
        """The consent history: who changed consent, or tried to (operator).

        One page at a time, as the log: at most 1,000 entries (``limit``); the
        answer's ``next`` is the ``after`` of the following page while more entries
        may follow, null once the page reached the history's end."""
        # Refused attempts of cards and agents are kept in it, 120 a minute each: the
        # whole history in one answer held the service for seconds.
        who.require_operator("reading the consent history")
        # One more than the page, to tell whether another page follows.
        entries = engine.history.entries(package=package, after=after or 0, limit=limit + 1)
        following = entries[limit - 1]["seq"] if len(entries) > limit else None
        return json_response({"entries": entries[:limit], "next": following})

    app.include_router(r)
