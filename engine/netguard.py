"""Guarded ``net.fetch`` (SPEC §8.1–§8.2): resolve once, check every address, follow redirects.

The address policy is an explicit list of refused networks rather than
``ipaddress.is_global``/``is_private``, which misclassify several of these
on Python 3.11. The fetch resolves the host once, refuses when *any* address
is refused, hands the checked address to the transport (which connects to
it while keeping the host name for TLS and the Host header), and checks each
redirect again from the start.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from .checks import LOCAL_HOSTS, Passed, denial, host_scope
from .decision import Decision
from .hosts import normalise_host

if TYPE_CHECKING:
    from .engine import Engine

__all__ = ["REFUSED_NETWORKS", "FetchResponse", "GuardedFetch", "address_refused", "normal_url"]

_V4 = [
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
    "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    "255.255.255.255/32",
]
_V6 = [
    "::/128", "::1/128", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8", "2001:db8::/32",
    "100::/64", "2001::/23",
]
#: Every network a card's fetch may never reach.
REFUSED_NETWORKS = tuple(ipaddress.ip_network(n) for n in _V4 + _V6)
#: Cloud metadata addresses and names, refused whatever they resolve to.
METADATA_ADDRESSES = frozenset({"169.254.169.254", "fd00:ec2::254", "100.100.100.200"})
METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "instance-data"})


def _embedded_v4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses an IPv6 address carries: mapped, compatible, NAT64, 6to4, Teredo."""
    out = []
    if ip.ipv4_mapped is not None:
        out.append(ip.ipv4_mapped)
    packed = int(ip)
    if packed >> 32 == 0 and packed > 1:  # IPv4-compatible ::a.b.c.d
        out.append(ipaddress.IPv4Address(packed & 0xFFFFFFFF))
    if ip in ipaddress.ip_network("64:ff9b::/96") or ip in ipaddress.ip_network("64:ff9b:1::/48"):
        out.append(ipaddress.IPv4Address(packed & 0xFFFFFFFF))
    if ip.sixtofour is not None:
        out.append(ip.sixtofour)
    if ip.teredo is not None:
        out.extend(ip.teredo)
    return out


def address_refused(address: str) -> bool:
    """True when a fetch may not connect to this address."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return True  # not an address: fail closed
    if str(ip) in METADATA_ADDRESSES:
        return True
    if any(ip in net for net in REFUSED_NETWORKS if net.version == ip.version):
        return True
    if isinstance(ip, ipaddress.IPv6Address):
        return any(address_refused(str(v4)) for v4 in _embedded_v4(ip))
    return False


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


#: host -> addresses (empty when it does not resolve)
Resolver = Callable[[str], list[str]]
#: (method, url, headers, body, address) -> response; connects to ``address``.
Transport = Callable[[str, str, dict[str, str], str | None, str], FetchResponse]


class GuardedFetch:
    """The ``net.fetch`` scope handler.

    Args:
        resolver: resolves a host name once per request.
        transport: performs the request against the checked address.
        max_redirects: redirects followed, each checked again from the start.
    """

    def __init__(self, resolver: Resolver, transport: Transport, *, max_redirects: int = 5) -> None:
        self.resolver = resolver
        self.transport = transport
        self.max_redirects = max_redirects

    def _refuse(self, passed: Passed, reason: str, why: str) -> Decision:
        return denial("net.fetch", passed.card.id, "SCOPE_REFUSED", package=passed.package.name,
                      permission=passed.permission, reason=reason, why=why)

    def __call__(self, engine: Engine, passed: Passed, args: dict[str, Any]) -> Any:
        url = str(args["url"])
        method = str(args.get("method", "GET")).upper()
        headers = {str(k): str(v) for k, v in (args.get("headers") or {}).items()}
        body = args.get("body")
        for _hop in range(self.max_redirects + 1):
            # Every hop gets the whole scope check again (host, scheme, port).
            refused = host_scope(engine.state, passed.card, passed.package, url)
            if refused is not None:
                return self._refuse(passed, *refused)
            url = normal_url(url)
            host = normalise_host(urlsplit(url).hostname or "")
            if host in METADATA_HOSTS:
                return self._refuse(passed, "private-address", f"{host} is a cloud metadata name")
            if host in LOCAL_HOSTS:
                addresses = ["::1" if host == "::1" else "127.0.0.1"]
            else:
                try:
                    ipaddress.ip_address(host)
                    addresses = [host]
                except ValueError:
                    addresses = list(self.resolver(host))
                if not addresses:
                    return self._refuse(passed, "unresolved", f"{host} does not resolve")
                bad = [a for a in addresses if address_refused(a)]
                if bad:
                    return self._refuse(passed, "private-address",
                                        f"{host} resolves to {bad[0]}, which is not public")
            response = self.transport(method, url, headers, body, addresses[0])
            location = (response.headers or {}).get("location")
            if response.status in (301, 302, 303, 307, 308) and location:
                url = urljoin(url, location)
                if response.status == 303 or (response.status in (301, 302) and method == "POST"):
                    method, body = "GET", None
                continue
            return {"status": response.status, "body": response.body}
        return self._refuse(passed, "too-many-redirects",
                            f"more than {self.max_redirects} redirects")
