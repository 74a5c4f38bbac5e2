"""Guarded ``net.fetch`` (SPEC §8.1–§8.2): resolve once, check every address, follow redirects.

For each hop the fetch checks the whole scope again (scheme, host pattern,
port), resolves the host once, refuses when *any* address is refused (see
`engine.core.addresses`), and hands the checked address to the transport, which
connects to it while keeping the host name for TLS and the Host header.
Redirects are followed here, never by the transport, at most 5 of them.

Secret placeholders ``{{secret:NAME}}`` in header values are filled in only
for a request over https to the one host the operator stored the secret
for, never for this computer; a placeholder that cannot be filled fails the
request. The card never sees a value, nor the host a secret belongs to: a
refusal says only whether the secret is set, and never quotes a value a
server put into a URL it redirected to.

The whole fetch — resolution, every hop and every byte — has one deadline,
the workspace's ``fetch_timeout``. While it is in flight the fetch is
re-checked against the card's consent (checks 1–8 of SPEC §5, for the hop
being fetched now: a redirect may lead onto the other fetch permission) whenever that
may have changed — one watch per engine looks every `RECHECK` seconds whether
the state's consent key (`State.consent_key`, which every change of grants,
packages, settings or the canvas moves on) moved, and wakes the engine's
fetches only then — and once more when it ends, after catching up with
what other engines on the store committed: when the permission was
revoked, or the card or its workspace removed, meanwhile, the fetch is
abandoned and its result never reaches the card (logged ``cancelled``). A
fetch in flight thus costs nothing while consent stands still, however many
there are. No failure of a resolver or transport escapes as an exception:
each ends as a refusal, ``FETCH_FAILED``.
"""

from __future__ import annotations

import asyncio
import inspect
import ipaddress
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from engine.core.addresses import METADATA_HOSTS, address_refused
from engine.core.checks import LOCAL_HOSTS, Passed, decide, denial, host_scope
from engine.core.decision import Decision
from engine.core.fetchform import URL_CONTROL, fetch_args_problem
from engine.core.hosts import normalise_host

if TYPE_CHECKING:
    from engine.core.state import State
    from engine.effects.host import ScopeHost

__all__ = ["RECHECK", "FetchFailed", "FetchResponse", "FetchTooLarge", "GuardedFetch", "PLACEHOLDER",
           "normal_url"]

#: Seconds between looks at the consent key while fetches are in flight.
RECHECK = 0.05

#: ``{{secret:NAME}}`` in a header value.
PLACEHOLDER = re.compile(r"\{\{\s*secret:([A-Za-z0-9_.-]+)\s*\}\}")
_REDIRECTS = (301, 302, 303, 307, 308)


def normal_url(url: str) -> str:
    """The URL with its host lower-cased and a trailing dot dropped, no fragment.

    The port is kept unless it is the scheme's default; a port the URL names
    is never dropped otherwise (``:0`` is refused by the scope check before).
    """
    parts = urlsplit(url)
    host = normalise_host(parts.hostname or "")
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    default = 443 if parts.scheme.lower() == "https" else 80
    netloc = host + (f":{port}" if port is not None and port != default else "")
    return urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query, ""))


@dataclass(frozen=True, slots=True)
class FetchResponse:
    """What a transport answered."""

    status: int
    body: str = ""
    headers: dict[str, str] | None = None


class FetchFailed(Exception):
    """A transport could not complete the request; ``reason`` says how.

    The fetch is refused with the class's ``code`` (FETCH_FAILED), ``reason``
    and ``why``.
    """

    code = "FETCH_FAILED"

    def __init__(self, reason: str, why: str) -> None:
        super().__init__(why)
        self.reason = reason
        self.why = why


class FetchTooLarge(FetchFailed):
    """The response passed the size cap: refused by scope (SCOPE_REFUSED, ``too-large``)."""

    code = "SCOPE_REFUSED"

    def __init__(self, why: str) -> None:
        super().__init__("too-large", why)


#: host -> addresses (empty when it does not resolve); may be async.
Resolver = Callable[[str], "list[str] | Awaitable[list[str]]"]
#: (method, url, headers, body, address, timeout, max_bytes) -> response, connecting to
#: ``address``; may be async.
Transport = Callable[..., "FetchResponse | Awaitable[FetchResponse]"]


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


@dataclass(slots=True)
class _Flight:
    """A fetch in flight: the URL of the hop being fetched now, for its re-checks."""

    url: str
    #: The fetch's own arguments with ``url`` set to the hop's.
    args: dict[str, Any]

    def at(self, url: str, args: dict[str, Any]) -> None:
        """The fetch moved on to ``url`` (it passed its scope check)."""
        self.url = url
        self.args = {**args, "url": url}


class _ConsentWatch:
    """Wakes an engine's fetches in flight when its consent may have changed.

    One per engine while it has fetches in flight: a single task compares the
    state (and its consent key) every `RECHECK` seconds, where each fetch
    deciding again on its own timer cost the loop a decision per fetch per
    tick. `moved` completes, and is replaced, when they changed.
    """

    def __init__(self, host: ScopeHost) -> None:
        self.host = host
        self.users = 0
        self.state, self.key = self._now()
        self.moved: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.task = asyncio.ensure_future(self._run())

    def _now(self) -> tuple[State, tuple[int, int]]:
        state = self.host.state
        return state, state.consent_key()

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(RECHECK)
            state, key = self._now()
            # By identity: the engine may load a new state (equal is not the same).
            if state is not self.state or key != self.key:
                self.state, self.key = state, key
                moved, self.moved = self.moved, asyncio.get_running_loop().create_future()
                moved.set_result(None)


class GuardedFetch:
    """The ``net.fetch`` scope handler.

    Args:
        resolver: resolves a host name once per hop.
        transport: performs one request against the checked address.
        max_redirects: redirects followed, each checked again from the start.
    """

    def __init__(self, resolver: Resolver, transport: Transport, *,
                 max_redirects: int = 5) -> None:
        self.resolver = resolver
        self.transport = transport
        self.max_redirects = max_redirects
        #: The consent watch of each engine with fetches in flight, by ``id(engine)``.
        self._watches: dict[int, _ConsentWatch] = {}

    @staticmethod
    def _refuse(passed: Passed, reason: str, why: str, code: str = "SCOPE_REFUSED") -> Decision:
        return denial("net.fetch", passed.card.id, code, package=passed.package.name,
                      permission=passed.permission, reason=reason, why=why)

    async def _addresses(self, host: str) -> list[str] | str:
        """The checked addresses of a host, or why none may be used."""
        if host in METADATA_HOSTS:
            return f"{host} is a cloud metadata name"
        if host in LOCAL_HOSTS:
            return ["::1" if host == "::1" else "127.0.0.1"]
        try:
            ipaddress.ip_address(host)
            addresses = [host]
        except ValueError:
            addresses = list(await _maybe_await(self.resolver(host)))
        if not addresses:
            return ""
        bad = [a for a in addresses if address_refused(a)]
        if bad:
            return f"{host} resolves to {bad[0]}, which is not a public address"
        return addresses

    async def __call__(self, engine: ScopeHost, passed: Passed, args: dict[str, Any]) -> Any:
        """Perform the fetch: its value, or a refusing Decision (never an exception)."""
        problem = fetch_args_problem(args)
        if problem is not None:
            # Checked at check 3 already; again here for handlers used directly.
            return self._refuse(passed, problem[0], problem[1], "INVALID_ARGUMENT")
        secrets: list[str] = []
        result = await self._perform(engine, passed, args, secrets)
        if secrets and isinstance(result, Decision):
            # A refusal may quote a URL or host a server chose (a redirect), and a
            # server may put there a secret it was sent: no refusal repeats one.
            return result.with_(message=_redact(result.message, secrets))
        return result

    async def _perform(self, engine: ScopeHost, passed: Passed, args: dict[str, Any],
                       secrets: list[str]) -> Any:
        """The fetch, re-checked while in flight; ``secrets`` gets each value filled in."""
        settings = engine.state.workspaces[passed.card.workspace].settings
        watch = self._watch(engine)
        work: asyncio.Future[Any] | None = None
        flight = _Flight(str(args["url"]), args)
        try:
            # Consent may have moved between the engine's decision and the
            # watch's first look: decided once here, then on every move.
            withdrawn = self._withdrawn(engine, passed, flight)
            if withdrawn is not None:
                return withdrawn
            work = asyncio.ensure_future(self._hops(engine, passed, args, flight,
                                                    settings.fetch_timeout,
                                                    settings.fetch_max_bytes, secrets))
            while True:
                await asyncio.wait({work, watch.moved}, return_when=asyncio.FIRST_COMPLETED)
                if _answered(work):
                    # The last decision reads what the store holds now: another
                    # engine's revoke reaches this one's state only at its next
                    # operation, and the body must not slip through meanwhile.
                    try:
                        engine.sync()
                    except Exception:
                        return self._refuse(passed, "store", "consent could not be read "
                                            "again before the answer was given; it was withheld",
                                            "FETCH_FAILED")
                withdrawn = self._withdrawn(engine, passed, flight)
                if withdrawn is not None:
                    return withdrawn
                if work.done():
                    break
        finally:
            self._unwatch(engine, watch)
            if work is not None and not work.done():
                work.cancel()
                # Wait for it to unwind (its sockets closed); asyncio.wait
                # neither raises its error nor swallows our own cancellation.
                await asyncio.wait({work})
        try:
            return work.result()
        except Exception as exc:  # a resolver or transport bug: still a refusal
            return self._refuse(passed, "transport",
                                _redact(f"the request failed ({type(exc).__name__})", secrets),
                                "FETCH_FAILED")

    def _watch(self, engine: ScopeHost) -> _ConsentWatch:
        """The engine's consent watch, started for its first fetch in flight."""
        watch = self._watches.get(id(engine))
        if watch is None:
            watch = self._watches[id(engine)] = _ConsentWatch(engine)
        watch.users += 1
        return watch

    def _unwatch(self, engine: ScopeHost, watch: _ConsentWatch) -> None:
        """One fetch fewer in flight; the watch stops with the engine's last one."""
        watch.users -= 1
        if watch.users == 0:
            watch.task.cancel()
            watch.moved.cancel()
            if self._watches.get(id(engine)) is watch:
                del self._watches[id(engine)]

    def _withdrawn(self, engine: ScopeHost, passed: Passed,
                   flight: _Flight) -> Decision | None:
        """The refusal the fetch would get now, when consent went away while it ran.

        Decided for the hop in flight, not the card's first URL: a fetch that
        began at a declared host and was redirected to this computer is
        withdrawn when network.local is revoked.
        """
        card = passed.card
        state = engine.state
        now = state.canvas.node(card.id)
        if card.workspace not in state.workspaces:
            refusal: Decision | None = self._refuse(passed, "not-connected",
                                                    f"workspace {card.workspace} was removed",
                                                    "PERMISSION_DENIED")
        elif now is not None and (now.workspace != card.workspace
                                  or now.data.get("package") != passed.package.name):
            # The id names another card now (removed, then used again): deciding for
            # it would judge that card's package, not the one whose fetch this is.
            refusal = self._refuse(passed, "not-connected", f"card {card.id} was removed",
                                   "PERMISSION_DENIED")
        else:
            result = decide(state, card.id, "net.fetch", None, flight.args, now=engine.now(),
                            count_limits=False)
            refusal = result if isinstance(result, Decision) else None
            if refusal is not None and refusal.code == "CARD_UNKNOWN":
                refusal = self._refuse(passed, "not-connected", f"card {card.id} was removed",
                                       "PERMISSION_DENIED")
            elif refusal is not None and refusal.code == "SCOPE_REFUSED":
                refusal = self._hop_withdrawn(state, passed, flight.url,
                                              refusal.reason or "scope")
            elif refusal is not None and refusal.code == "INVALID_ARGUMENT":
                # The hop's URL is the server's (a redirect), not the card's: its bounds
                # were the card's to meet when it called (SPEC §8.1 abandons a fetch only
                # for a revoke or a removal). Check 3 comes before the grant, so consent
                # is judged here on its own.
                refusal = self._consent_withdrawn(state, passed, flight.url)
        if refusal is None:
            return None
        return refusal.with_(message=refusal.message + " (the fetch in flight was abandoned)",
                             extra={**refusal.extra, "logged": "cancelled"})

    def _consent_withdrawn(self, state: State, passed: Passed, url: str) -> Decision | None:
        """Whether consent for the hop at ``url`` went away, judged without its arguments.

        For a hop check 3 cannot pass (a redirect past the card's bounds): the
        package installed and not pending, the hop's permission granted, the
        hop within the granted scope — what checks 2, 4–5 and the scope decide.
        """
        package = state.packages.get(passed.package.name)
        if package is None or not package.installed or package.pending_hash is not None:
            return self._refuse(passed, "not-installed",
                                f"{passed.package.name} was removed or changed while the "
                                "fetch was in flight", "PERMISSION_DENIED")
        card = state.canvas.node(passed.card.id)
        host = normalise_host(urlsplit(url).hostname or "")
        permission = "network.local" if host in LOCAL_HOSTS else "network"
        if (card is not None and state.granted(package.name, permission)
                and host_scope(state, card, package, url) is None):
            return None
        return self._hop_withdrawn(state, passed, url, "scope")

    def _hop_withdrawn(self, state: State, passed: Passed, url: str,
                       fallback: str) -> Decision:
        """The hop in flight passed its scope check when it began and fails it now.

        What changed since is consent — the hop's permission revoked, a port
        reserved — so the fetch is withdrawn as SPEC §8.1 says, with
        PERMISSION_DENIED, naming the hop's own permission.
        """
        host = normalise_host(urlsplit(url).hostname or "")
        permission = "network.local" if host in LOCAL_HOSTS else "network"
        if not state.granted(passed.package.name, permission):
            reason, why = "not-granted", (f"{permission} was revoked while the fetch was at "
                                          f"{host}")
        else:
            card, package = state.canvas.node(passed.card.id), state.packages.get(
                passed.package.name)
            scope = (host_scope(state, card, package, url)
                     if card is not None and package is not None else None)
            reason, why = scope or (fallback, "the hop is out of scope")
        return denial("net.fetch", passed.card.id, "PERMISSION_DENIED",
                      package=passed.package.name, permission=permission, reason=reason,
                      why=why)

    async def _hops(self, engine: ScopeHost, passed: Passed, args: dict[str, Any],
                    flight: _Flight, timeout: float, max_bytes: int, secrets: list[str]) -> Any:
        """Every hop under one deadline."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            async with asyncio.timeout_at(deadline):
                return await self._follow(engine, passed, args, flight, deadline, max_bytes,
                                          secrets)
        except TimeoutError:
            return self._refuse(passed, "timeout",
                                f"the fetch did not complete within {timeout:g} s",
                                "FETCH_FAILED")

    async def _follow(self, engine: ScopeHost, passed: Passed, args: dict[str, Any],
                      flight: _Flight, deadline: float, max_bytes: int,
                      secrets: list[str]) -> Any:
        url = str(args["url"])
        method = str(args.get("method", "GET")).upper()
        raw_headers = {str(k): str(v) for k, v in (args.get("headers") or {}).items()}
        body = args.get("body")
        first_host: str | None = None
        loop = asyncio.get_running_loop()
        for _hop in range(self.max_redirects + 1):
            # Every hop gets the whole scope check again (host, scheme, port).
            refused = host_scope(engine.state, passed.card, passed.package, url)
            if refused is not None:
                return self._refuse(passed, *refused)
            try:
                url = normal_url(url)
                parts = urlsplit(url)
            except ValueError:
                return self._refuse(passed, "bad-url", "the URL is not a valid URL")
            flight.at(url, args)  # re-checked from now on for this hop
            host = normalise_host(parts.hostname or "")
            if first_host is None:
                first_host = host
            elif host != first_host:
                # Like a browser: credentials do not follow a redirect to another host.
                raw_headers = {k: v for k, v in raw_headers.items()
                               if not PLACEHOLDER.search(v)
                               and k.lower() not in ("authorization", "cookie")}
                first_host = host
            headers = self._fill(engine, passed, raw_headers, parts.scheme, host, secrets)
            if isinstance(headers, Decision):
                return headers
            try:
                addresses = await self._addresses(host)
            except Exception:  # a resolver that fails is a host that does not resolve
                addresses = ""
            if isinstance(addresses, str):
                if not addresses:
                    return self._refuse(passed, "unresolved", f"{host} does not resolve")
                return self._refuse(passed, "private-address", addresses)
            try:
                response = await _maybe_await(self.transport(
                    method, url, headers, body, addresses[0],
                    timeout=max(deadline - loop.time(), 0.001), max_bytes=max_bytes))
            except FetchFailed as exc:
                return self._refuse(passed, exc.reason, _redact(exc.why, secrets), exc.code)
            except (asyncio.CancelledError, TimeoutError):
                raise
            except Exception as exc:
                return self._refuse(passed, "transport",
                                    _redact(f"{host}: the request failed "
                                            f"({type(exc).__name__})", secrets),
                                    "FETCH_FAILED")
            location = (response.headers or {}).get("location")
            if response.status in _REDIRECTS and location:
                if URL_CONTROL.search(location):
                    # Joining would drop tabs and line breaks before the scope check.
                    return self._refuse(passed, "bad-url",
                                        "a redirect's location holds control characters")
                try:
                    url = urljoin(url, location)
                except ValueError:
                    return self._refuse(passed, "bad-url", "a redirect's location is not a URL")
                if response.status == 303 or (response.status in (301, 302) and method == "POST"):
                    method, body = "GET", None
                continue
            return {"status": response.status, "body": response.body}
        return self._refuse(passed, "too-many-redirects",
                            f"more than {self.max_redirects} redirects")

    def _fill(self, engine: ScopeHost, passed: Passed, headers: dict[str, str], scheme: str,
              host: str, secrets: list[str]) -> dict[str, str] | Decision:
        """Fill secret placeholders for this host, or refuse the request.

        A refusal names the placeholder, never the secret's host or value:
        the card may learn only whether a secret is set. Filled values are
        added to ``secrets`` so that no later message can repeat them.
        """
        out = {}
        for key, value in headers.items():
            problem: str | None = None

            def fill(match: re.Match[str]) -> str:
                nonlocal problem
                name = match.group(1)
                secret = engine.secrets.lookup(name)
                if host in LOCAL_HOSTS:
                    problem = f"secrets are never sent to this computer ({name})"
                elif secret is None:
                    problem = f"secret {name} is not set"
                elif secret[0] != normalise_host(host):
                    problem = f"secret {name} is not for this host"
                elif scheme != "https":
                    problem = f"secret {name} is sent over https only"
                else:
                    secrets.append(secret[1])
                    return secret[1]
                return ""

            filled = PLACEHOLDER.sub(fill, value)
            if problem is not None:
                return self._refuse(passed, "secret-placeholder",
                                    f"header {key!r}: {problem}; the request was not sent")
            out[key] = filled
        return out


def _answered(work: asyncio.Future[Any]) -> bool:
    """The fetch ended with a value for the card (not a refusal, nor an error)."""
    return (work.done() and not work.cancelled() and work.exception() is None
            and not isinstance(work.result(), Decision))


def _redact(text: str, secrets: list[str]) -> str:
    """``text`` with every filled secret value blanked (error texts may quote headers)."""
    for value in secrets:
        if value:
            text = text.replace(value, "[secret]")
    return text
