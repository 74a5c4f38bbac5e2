"""What the service's routes share: the `Service`, the `Caller`, and a decision's JSON.

Its own module, below `engine.service.app` (which builds the application from
the routes): the route modules and the fast lane import these names, and the
application imports the route modules, so keeping both in one module would
make them import each other. `engine.service.app` re-exports them.

The token decides the principal: a card token acts only as its card, an
agent token only as its agent, and the operator token gives consent only
from a peer that is not inside a coding agent's process tree
(`engine.service.auth.agent_verdict`). An operator token used from such a
peer is passed to the engine as an agent principal without a node, which the
engine refuses (``APPROVAL_REFUSED``) and records in the consent history like
any refused consent attempt.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from fastapi import Request
from starlette.responses import Response

from engine.core.fetchform import FETCH_MARK
from engine.core.principal import OPERATOR, Principal
from engine.core.text import named
from engine.service.auth import Peer, Standing, TokenStore, agent_verdict, peer_of_tcp
from engine.service.events import Feeds
from engine.service.made import Made
from engine.service.problems import ServiceError
from engine.store.ahead import arrowgate_version

if TYPE_CHECKING:
    from starlette.types import Receive

    from engine.core.decision import Decision
    from engine.engine import Engine
    from engine.service.direct import Direct

__all__ = ["API_VERSION", "FETCH_MARK_NAME", "HEALTH", "MAX_BODY", "Caller", "Service", "Shown",
           "Watch", "authenticate", "carries_fetch_mark", "decision_json", "disconnected",
           "json_response", "kind_phrase", "may_act_as_card", "refuse_card_fetch"]

_T = TypeVar("_T")

#: The version of the service's API (the ``/v1`` routes).
API_VERSION = "1.0.0"
#: What ``GET /v1/health`` answers: the API's version, and the build's, which a client
#: cannot tell from it (``arrowgate --version``'s, `engine.store.ahead.arrowgate_version`).
HEALTH = {"status": "ok", "version": API_VERSION, "arrowgate_version": arrowgate_version()}
#: Request bodies larger than this are refused with 413 (a package's files included).
MAX_BODY = 8 * 1024 * 1024


@dataclass
class Service:
    """What the routes share: the engine, the tokens, the card feeds, options.

    Args:
        engine: the one engine this service fronts.
        tokens: the bearer tokens, kept hashed in the engine's store.
        heartbeat: seconds between SSE heartbeat comments.
        max_body: request body limit in bytes.
    """

    engine: Engine
    tokens: TokenStore
    heartbeat: float = 15.0
    max_body: int = MAX_BODY
    #: Set when the server shuts down: streams and waits end early.
    closing: asyncio.Event = field(default_factory=asyncio.Event)
    feeds: Feeds | None = None
    #: Where another process reads the engine's log (its SQLite file, or its
    #: PostgreSQL store's URL): ``POST /v1/log/verify`` verifies there, off the
    #: event loop. None (an engine in memory): verified by the engine itself.
    log_location: str | None = None
    #: Verifications take it one at a time: clients asking at once run one verifier
    #: child, not one each (`engine.app.verifier`).
    verifying: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: Serialises offer and install of one package, so a review checked is the one installed.
    package_locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    #: One engine wait per prompt, shared by every client waiting on it.
    prompt_waits: dict[str, asyncio.Task[Decision]] = field(default_factory=dict)
    #: The waits `unless_closing` cuts short at shutdown, and the one task watching for it.
    _cuts: set[asyncio.Timeout] = field(default_factory=set)
    _cutter: asyncio.Task[None] | None = None
    #: When the node each card or agent token names was made: what it may read
    #: begins then, not with an earlier node given its id (`engine.service.made`).
    made: Made = field(init=False)

    def __post_init__(self) -> None:
        self.made = Made(self.engine)

    def prompt_wait(self, prompt_id: str) -> asyncio.Task[Decision]:
        """The engine's wait for a prompt's answer, started once and shared."""
        task = self.prompt_waits.get(prompt_id)
        if task is None:
            task = asyncio.get_running_loop().create_task(self.engine.wait(prompt_id))
            self.prompt_waits[prompt_id] = task
            task.add_done_callback(lambda _t: self.prompt_waits.pop(prompt_id, None))
        return task

    async def wait_unless_closing(self, waiter: asyncio.Future[Any], timeout: float,
                                  watch: Watch) -> None:
        """Wait for ``waiter`` up to ``timeout`` seconds, until the server shuts down,
        or until the request's `Watch` ends it (its token revoked, its client gone).

        ``waiter`` is cancelled when this returns unfinished (a shutdown must
        not leave waits behind); a finished one keeps its result.
        """
        closer = asyncio.ensure_future(self.closing.wait())
        try:
            await asyncio.wait({waiter, closer, *watch.ends}, timeout=timeout,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            for fut in (waiter, closer):
                fut.cancel()

    async def unless_closing(self, work: Coroutine[Any, Any, _T], watch: Watch) -> _T | None:
        """``work`` awaited in this very task; None when the server shuts down first,
        or the request's `Watch` ends it first (its token revoked, its client
        gone; ``work`` is then cancelled).

        As `wait_unless_closing`, but without a task for the work and a wait on
        both: when the work ends, the caller goes on in the same turn of the
        loop, not two turns later (a tool call's wait is on the agent's critical
        path; issue 17). One task per service watches for the shutdown.
        """
        if self.closing.is_set() or any(end.done() for end in watch.ends):
            work.close()
            return None
        if self._cutter is None:
            self._cutter = asyncio.get_running_loop().create_task(self._cut_at_close())
        cut = asyncio.timeout(None)
        self._cuts.add(cut)
        waiting = True

        def cut_short(_end: asyncio.Future[Any]) -> None:
            # Run a turn after the end came: the wait may have ended meanwhile
            # (a timeout may be rescheduled only while it is entered).
            if waiting and not cut.expired():
                cut.reschedule(asyncio.get_running_loop().time())

        try:
            async with cut:
                for end in watch.ends:
                    end.add_done_callback(cut_short)
                try:
                    return await work
                finally:
                    waiting = False
        except TimeoutError:
            if cut.expired():
                return None
            raise
        finally:
            for end in watch.ends:
                end.remove_done_callback(cut_short)
            self._cuts.discard(cut)

    def watch(self, shown: Shown) -> Watch:
        """What ends the wait of the request that showed ``shown`` (a context manager)."""
        return Watch(self.tokens, shown)

    async def _cut_at_close(self) -> None:
        await self.closing.wait()
        now = asyncio.get_running_loop().time()
        for cut in self._cuts:  # all entered: each is added right before it is entered
            # One its watch cut short may be expiring in this very turn (it leaves
            # the set as its task goes on): it is ending already, and moving it
            # would raise.
            if not cut.expired():
                cut.reschedule(now)

    def node_removed(self, node_id: str, node_type: str) -> None:
        """A node this server removed: its tokens (revoked in the store with it)
        and its card's feed end here at once."""
        if node_type in ("card", "agent"):
            self.tokens.forget(f"{node_type}:{node_id}")
        if node_type == "card" and self.feeds is not None:
            self.feeds.drop(node_id)

    def feed_hub(self) -> Feeds:
        """The card feeds (made on first use, inside the running loop)."""
        if self.feeds is None:
            self.feeds = Feeds(self.engine)
        return self.feeds

    def close(self) -> None:
        """End streams and feeds (the engine is closed by its owner)."""
        self.closing.set()
        for task in list(self.prompt_waits.values()):
            task.cancel()
        if self.feeds is not None:
            self.feeds.close()


@dataclass(frozen=True, slots=True)
class Caller:
    """The principal a request's token names, and where the request came from."""

    principal: Principal
    token_id: str
    request: Request
    #: The token itself (never shown: `Standing` for a stream that outlives the request).
    token: str = field(repr=False, default="")

    @property
    def is_operator(self) -> bool:
        """The operator token (a person's, unless its peer says otherwise)."""
        return self.principal.is_operator

    def shown(self) -> Shown:
        """What this request showed, for a wait to watch (`Service.watch`)."""
        return Shown(self.token, self.token_id, self.request.receive,
                     self.request.scope.get("arrowgate.direct"))

    def peer(self) -> Peer:
        """The calling process, from the socket's credentials or ``/proc/net/tcp``."""
        scope = self.request.scope
        peer = scope.get("arrowgate.peer")
        if isinstance(peer, Peer):
            return peer
        client, server = scope.get("client"), scope.get("server")
        if client and server and isinstance(client[1], int) and isinstance(server[1], int):
            return peer_of_tcp((str(client[0]), client[1]), (str(server[0]), server[1]))
        return Peer(None)

    def by(self) -> Principal:
        """The principal to pass to the engine for a change of consent or canvas.

        An operator token from a peer inside an agent's process tree (or a
        peer that cannot be told) is no person: it goes to the engine as an
        agent principal without a node, which the engine refuses and records.
        """
        if not self.principal.is_operator:
            return self.principal
        why = agent_verdict(self.peer())
        if why is None:
            return OPERATOR
        return Principal("agent", None, f"operator-token from an agent process: {why}")

    def require_operator(self, what: str) -> None:
        """Only the operator token may do ``what`` (403 otherwise)."""
        if not self.principal.is_operator:
            raise ServiceError(403, "APPROVAL_REFUSED",
                               f"{what} needs the operator token, not "
                               f"{self.principal.raw}", reason=self.principal.refusal_reason())

    def require_person(self, what: str) -> None:
        """The operator token from a peer that is a person (403 otherwise)."""
        self.require_operator(what)
        why = agent_verdict(self.peer())
        if why is not None:
            raise ServiceError(403, "APPROVAL_REFUSED",
                               f"{what} needs a person: {why}",
                               reason="from-agent")

    def acts_as_card(self, card: str) -> None:
        """The operator (the canvas app) or that card's own token (403 otherwise)."""
        may_act_as_card(self.principal, card)


def kind_phrase(kind: str) -> str:
    """``a card``, ``an agent``: the article a principal's kind takes."""
    return f"an {kind}" if kind[:1] in ("a", "e", "i", "o", "u") else f"a {kind}"


def may_act_as_card(p: Principal, card: str) -> None:
    """The operator (the canvas app) or that card's own token may act as the card.

    Raises:
        ServiceError: 403 for any other principal.
    """
    if p.is_operator or (p.kind == "card" and p.node == card):
        return
    raise ServiceError(403, "APPROVAL_REFUSED",
                       f"{kind_phrase(p.kind)} token ({p.raw}) may not act as "
                       f"card {named(card)}", reason="wrong-principal")


class Shown(NamedTuple):
    """What a request showed that a wait must keep watching: its token (and the
    token's id), and how to tell that its client has gone — the server's
    `Direct.lost` when it offers one (``scope["arrowgate.direct"]``), else the
    request's ASGI ``receive``."""

    token: str
    token_id: str
    receive: Receive
    direct: Direct | None = None


class Watch:
    """What ends a request's wait before its timeout: its token revoked, its client
    gone (`Service.watch`; a context manager that stops watching at its end).

    A wait must not outlive either: a revoked token is unknown (SPEC §10.1),
    and a wait kept for a client that hung up is a task and its memory held
    for up to `MAX_WAIT`, which a client asking and hanging up in a loop
    would multiply without bound.
    """

    __slots__ = ("_gone", "_shown", "_standing", "_tokens", "_watcher")

    def __init__(self, tokens: TokenStore, shown: Shown) -> None:
        self._tokens, self._shown = tokens, shown
        self._standing: Standing | None = None
        self._gone: asyncio.Future[None] | None = None
        #: The task watching ``receive``, when the server offers no `Direct.lost`.
        self._watcher: asyncio.Future[None] | None = None

    def __enter__(self) -> Watch:
        shown = self._shown
        self._standing = self._tokens.standing(shown.token, shown.token_id)
        if shown.direct is not None:
            # The connection's own future: no task a wait (a tool call's wait is on
            # an agent's critical path), and not ours to cancel.
            self._gone, self._watcher = shown.direct.lost(), None
        else:
            self._gone = self._watcher = asyncio.ensure_future(disconnected(shown.receive))
        return self

    def __exit__(self, *_exc: object) -> None:
        assert self._standing is not None
        self._standing.close()
        if self._watcher is not None:
            self._watcher.cancel()
        elif self._shown.direct is not None:
            self._shown.direct.unwatch()

    @property
    def ends(self) -> tuple[asyncio.Future[None], asyncio.Future[None]]:
        """Done when the token is revoked (here), and when the client has gone."""
        assert self._standing is not None and self._gone is not None, "not entered"
        return self._standing.revoked, self._gone

    def require_standing(self) -> None:
        """After the wait: the token the request showed still stands.

        Raises:
            ServiceError: 401 when it was revoked meanwhile (what the request
                waited for is not handed over: a revoked token is unknown).
        """
        assert self._standing is not None, "not entered"
        if not self._standing.holds():
            raise ServiceError(401, "UNAUTHENTICATED",
                               "the token was revoked while the request waited",
                               reason="unknown-token")


async def disconnected(receive: Receive) -> None:
    """Return once the client has gone (uvicorn says so through ``receive``; what
    else it gives — the rest of a body nobody reads — is dropped)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def authenticate(tokens: TokenStore, token: str | None) -> tuple[str, Principal]:
    """The token's id and principal.

    Raises:
        ServiceError: 401 for no token, or one unknown or revoked.
        StoreFailed: the store cannot tell (a lost connection, a database
            down): answered as a 503 STORE_FAILED problem, never let through.
    """
    if not token:
        raise ServiceError(401, "UNAUTHENTICATED",
                           "send Authorization: Bearer <token>",
                           reason="no-token")
    found = tokens.lookup(token)
    if found is None:
        raise ServiceError(401, "UNAUTHENTICATED",
                           "the token is unknown or revoked",
                           reason="unknown-token")
    return found


def refuse_card_fetch(headers: Iterable[tuple[bytes, bytes]]) -> None:
    """Refuse a request a card's ``net.fetch`` sent (it carries `FETCH_MARK`), before its
    token is read: the engine's own process makes it, which the peer check would take
    for the person who started it, so a card holding a token not its own (the
    operator's) would act with it.

    Raises:
        ServiceError: 403, reason ``card-fetch``.
    """
    if carries_fetch_mark(headers):
        raise ServiceError(403, "APPROVAL_REFUSED", "a card's net.fetch acts on the "
                           "service as nobody, whatever token it carries", reason="card-fetch")


#: `FETCH_MARK` as a header's name reads in a request's scope.
FETCH_MARK_NAME = FETCH_MARK.encode()


def carries_fetch_mark(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether a request's headers carry `FETCH_MARK`: a card's ``net.fetch`` sent it."""
    return any(name == FETCH_MARK_NAME for name, _value in headers)


def decision_json(d: Decision) -> dict[str, Any]:
    """A Decision as the service sends it (SPEC §10.1): every field, null when unset."""
    return d.to_json(nulls=True)


def json_response(data: Any, status: int = 200) -> Response:
    """JSON written directly (the hot routes skip response-model validation)."""
    return Response(json.dumps(data, default=str, separators=(",", ":")), status_code=status,
                    media_type="application/json")
