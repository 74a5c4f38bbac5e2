"""Where a client may send a service token: the rule of a ``--service`` address.

SPEC §10.2 names the service's address as "the socket path or
``http://127.0.0.1:PORT``"; the bearer token goes with every request, so an
address decides who may read it. `service_address` reads an address and
refuses, before anything connects:

- plain ``http://`` to a host that is not this machine's loopback
  (``127.0.0.0/8``, ``::1``, ``localhost``): the token would cross a network in
  clear. Written as an explicit list, not ``ipaddress.is_loopback`` (on 3.11 it
  calls no IPv4-mapped form loopback, but the rule should not depend on a
  version's answer), and a name other than ``localhost`` is never resolved to
  see where it leads: what the name means now is not what it may mean at the
  next request;
- a URL with a user name or password, a query or a fragment: none is part of
  an address (the token comes from a file; anything else would be dropped or,
  as a user name, sent);
- a scheme other than http and https, a URL with no host, a port that is no port.

``https://`` to another host (a TLS proxy in front of an ``arrowgate serve
--listen``) is taken when ``remote_tls`` is allowed: the token is encrypted to a
verified certificate. An address without ``://`` is a Unix socket's path.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["LOOPBACK_HOSTS", "AddressRefused", "ServiceAddress", "is_loopback_host",
           "service_address"]

#: The host names taken as this machine's loopback besides the addresses.
LOOPBACK_HOSTS = frozenset({"localhost"})
_LOOPBACK_V4 = ipaddress.ip_network("127.0.0.0/8")
_LOOPBACK_V6 = ipaddress.ip_address("::1")

#: What a service address may be, said in every refusal.
_TAKEN = "give the service's socket path or http://127.0.0.1:PORT"


class AddressRefused(ValueError):
    """A service address that is refused; the message names it and why."""

    def __init__(self, address: str, why: str, *, remote_tls: bool) -> None:
        taken = _TAKEN + (" (or https:// to a TLS proxy in front of it)" if remote_tls else "")
        super().__init__(f"the service address {address!r}: {why}; {taken}")
        self.address = address  #: the address as given
        self.why = why  #: why it is refused


@dataclass(frozen=True, slots=True)
class ServiceAddress:
    """A service address that may be given a token: a socket path, or an http(s) URL."""

    #: The Unix socket's path, or None for a URL.
    socket: str | None = None
    #: ``http`` or ``https`` (empty for a socket).
    scheme: str = ""
    #: The host as written, without brackets (lower case).
    host: str = ""
    #: The port written, or None for the scheme's own.
    port: int | None = None
    #: A path the service is reached under (a proxy's prefix), without a trailing slash.
    path: str = ""

    @property
    def base(self) -> str:
        """The URL the routes are appended to (``http://arrowgate`` for a socket)."""
        if self.socket is not None:
            return "http://arrowgate"
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port is None else f":{self.port}"
        return f"{self.scheme}://{host}{port}{self.path}"


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and the loopback addresses (``127.0.0.0/8``, ``::1``).

    Compared exactly: ``localhost.``, ``127.1``, a zone (``::1%lo``) or an IPv4-mapped
    ``::ffff:127.0.0.1`` are not taken (fail closed: each is a spelling of an address
    the rule would otherwise have to resolve or interpret).
    """
    if host.lower() in LOOPBACK_HOSTS:
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv4Address):
        return ip in _LOOPBACK_V4
    return ip == _LOOPBACK_V6 and ip.scope_id is None


def service_address(address: str, *, remote_tls: bool = True) -> ServiceAddress:
    """Read a service address, refusing one a token must not be sent to.

    Args:
        address: a Unix socket's path, or an ``http://`` or ``https://`` URL.
        remote_tls: take ``https://`` to any host (else http(s) on loopback only).

    Raises:
        AddressRefused: naming the address and why (nothing has connected).
    """
    if not address:
        raise AddressRefused(address, "it is empty", remote_tls=remote_tls)
    if "://" not in address:
        return ServiceAddress(socket=address)

    def refused(why: str) -> AddressRefused:
        return AddressRefused(address, why, remote_tls=remote_tls)

    try:
        parts = urlsplit(address)
    except ValueError as exc:  # a bracketed host that is no IPv6 address, ...
        raise refused(f"it is no URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise refused(f"its scheme {parts.scheme!r} is neither http nor https")
    if "@" in parts.netloc:
        raise refused("it holds a user name or password (…@host), which is not part of "
                      "an address (the token is read from --token-file)")
    if "?" in address:
        raise refused("it has a query (?…), which is not part of an address")
    if "#" in address:
        raise refused("it has a fragment (#…), which is not part of an address")
    host = parts.hostname
    if not host:
        raise refused("no host in it")
    try:
        port = parts.port
    except ValueError as exc:  # "Port out of range 0-65535", "Port could not be cast ..."
        raise refused(str(exc)) from None
    loopback = is_loopback_host(host)
    if parts.scheme == "http" and not loopback:
        raise refused(f"plain http to {host}, which is not this machine's loopback "
                      "(127.0.0.0/8, ::1, localhost): the token would cross the network "
                      "in clear")
    if parts.scheme == "https" and not loopback and not remote_tls:
        raise refused(f"{host} is not this machine's loopback (127.0.0.0/8, ::1, "
                      "localhost)")
    return ServiceAddress(scheme=parts.scheme, host=host, port=port,
                          path=parts.path.rstrip("/"))
