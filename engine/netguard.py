"""Guarded ``net.fetch`` (SPEC §8.1–§8.2): resolve once, check every address, follow redirects.

For each hop the fetch checks the whole scope again (scheme, host pattern,
port), resolves the host once, refuses when *any* address is refused (see
`engine.addresses`), and hands the checked address to the transport, which
connects to it while keeping the host name for TLS and the Host header.
Redirects are followed here, never by the transport, at most 5 of them.

Secret placeholders ``{{secret:NAME}}`` in header values are filled in only
for a request over https to the one host the operator stored the secret
for, never for this computer; a placeholder that cannot be filled fails the
request. The card never sees a value.
"""

from __future__ import annotations

import inspect
import ipaddress
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from .addresses import METADATA_HOSTS, address_refused
from .checks import LOCAL_HOSTS, Passed, denial, host_scope
from .decision import Decision
from .hosts import normalise_host

if TYPE_CHECKING:
    from .engine import Engine

__all__ = ["FetchFailed", "FetchResponse", "GuardedFetch", "PLACEHOLDER", "normal_url"]

#: ``{{secret:NAME}}`` in a header value.
PLACEHOLDER = re.compile(r"\{\{\s*secret:([A-Za-z0-9_.-]+)\s*\}\}")
_REDIRECTS = (301, 302, 303, 307, 308)


def normal_url(url: str) -> str:
    """The URL with its host lower-cased and a trailing dot dropped, no fragment."""
    parts = urlsplit(url)
    host = normalise_host(parts.hostname or "")
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query, ""))


@dataclass(frozen=True, slots=True)
class FetchResponse:
    """What a transport answered."""

    status: int
    body: str = ""
    headers: dict[str, str] | None = None


class FetchFailed(Exception):
    """A transport could not complete the request; ``reason`` says how."""

    def __init__(self, reason: str, why: str, *, code: str = "FETCH_FAILED") -> None:
        super().__init__(why)
        self.reason = reason
        self.why = why
        self.code = code


#: host -> addresses (empty when it does not resolve); may be async.
Resolver = Callable[[str], "list[str] | Awaitable[list[str]]"]
#: (method, url, headers, body, address, timeout, max_bytes) -> response, connecting to
#: ``address``; may be async.
Transport = Callable[..., "FetchResponse | Awaitable[FetchResponse]"]


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


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

    async def __call__(self, engine: Engine, passed: Passed, args: dict[str, Any]) -> Any:
        settings = engine.state.workspaces[passed.card.workspace].settings
        url = str(args["url"])
        method = str(args.get("method", "GET")).upper()
        raw_headers = {str(k): str(v) for k, v in (args.get("headers") or {}).items()}
        body = args.get("body")
        first_host: str | None = None
        for _hop in range(self.max_redirects + 1):
            # Every hop gets the whole scope check again (host, scheme, port).
            refused = host_scope(engine.state, passed.card, passed.package, url)
            if refused is not None:
                return self._refuse(passed, *refused)
            url = normal_url(url)
            parts = urlsplit(url)
            host = normalise_host(parts.hostname or "")
            if first_host is None:
                first_host = host
            elif host != first_host:
                # Like a browser: credentials do not follow a redirect to another host.
                raw_headers = {k: v for k, v in raw_headers.items()
                               if not PLACEHOLDER.search(v)
                               and k.lower() not in ("authorization", "cookie")}
                first_host = host
            headers = self._fill(engine, passed, raw_headers, parts.scheme, host)
            if isinstance(headers, Decision):
                return headers
            addresses = await self._addresses(host)
            if isinstance(addresses, str):
                if not addresses:
                    return self._refuse(passed, "unresolved", f"{host} does not resolve")
                return self._refuse(passed, "private-address", addresses)
            try:
                response = await _maybe_await(self.transport(
                    method, url, headers, body, addresses[0], timeout=settings.fetch_timeout,
                    max_bytes=settings.fetch_max_bytes))
            except FetchFailed as exc:
                return self._refuse(passed, exc.reason, exc.why, exc.code)
            location = (response.headers or {}).get("location")
            if response.status in _REDIRECTS and location:
                url = urljoin(url, location)
                if response.status == 303 or (response.status in (301, 302) and method == "POST"):
                    method, body = "GET", None
                continue
            return {"status": response.status, "body": response.body}
        return self._refuse(passed, "too-many-redirects",
                            f"more than {self.max_redirects} redirects")

    def _fill(self, engine: Engine, passed: Passed, headers: dict[str, str], scheme: str,
              host: str) -> dict[str, str] | Decision:
        """Fill secret placeholders for this host, or refuse the request."""
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
                elif secret[0] != host:
                    problem = f"secret {name} is for {secret[0]}, not {host}"
                elif scheme != "https":
                    problem = f"secret {name} is sent over https only"
                else:
                    return secret[1]
                return ""

            filled = PLACEHOLDER.sub(fill, value)
            if problem is not None:
                return self._refuse(passed, "secret-placeholder",
                                    f"header {key!r}: {problem}; the request was not sent")
            out[key] = filled
        return out
