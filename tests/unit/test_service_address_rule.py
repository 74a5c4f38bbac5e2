"""The rule of a service address (`engine.core.serviceaddress`): where a client may send
a service token (SPEC §10.2: "the socket path or ``http://127.0.0.1:PORT``").

Plain http only to this machine's loopback (the token would cross a network in clear);
https to another host where a TLS proxy may stand (``remote_tls``); a user name or
password, a query or a fragment is no part of an address; a socket path is taken as it is.
"""

from __future__ import annotations

import pytest

from engine.core.serviceaddress import AddressRefused, is_loopback_host, service_address


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST", "127.0.0.1", "127.3.4.5",
                                  "127.255.255.254", "::1"])
def test_loopback_hosts_are_this_machine(host: str) -> None:
    """localhost, 127.0.0.0/8 and ::1 are loopback."""
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", ["localhost.", "127.1", "2130706433", "0.0.0.0", "::",
                                  "::ffff:127.0.0.1", "::1%lo", "128.0.0.1", "10.0.0.1",
                                  "example.com", "localhost.example.com", ""])
def test_other_spellings_and_hosts_are_not_loopback(host: str) -> None:
    """What is not written exactly as a loopback address or localhost is not taken."""
    assert not is_loopback_host(host)


@pytest.mark.parametrize("address", [
    "http://127.0.0.1:8123", "http://127.0.0.1:8123/", "http://localhost:8123",
    "http://[::1]:8123", "https://127.0.0.1:8443", "https://example.com",
    "https://arrowgate.example.com:8443/proxy/"])
def test_loopback_http_and_any_https_are_taken(address: str) -> None:
    """http on loopback; https anywhere (a TLS proxy in front of a --listen service)."""
    parsed = service_address(address)
    assert parsed.socket is None and parsed.scheme in ("http", "https")
    assert not parsed.base.endswith("/")


def test_a_path_without_a_scheme_is_a_socket() -> None:
    """An address without ``://`` is a Unix socket's path, taken as it is."""
    parsed = service_address("/run/ag/serve.sock")
    assert parsed.socket == "/run/ag/serve.sock" and parsed.base == "http://arrowgate"


def test_the_base_url_keeps_host_port_and_prefix() -> None:
    """The URL routes are appended to: scheme, host (IPv6 bracketed), port and prefix."""
    assert service_address("http://[::1]:81/").base == "http://[::1]:81"
    assert service_address("https://h.example:8443/ag/").base == "https://h.example:8443/ag"
    assert service_address("http://localhost").base == "http://localhost"


@pytest.mark.parametrize("address,why", [
    ("http://example.com:8000", "plain http to example.com"),
    ("http://10.0.0.1:80", "plain http to 10.0.0.1"),
    ("http://0.0.0.0:8123", "plain http to 0.0.0.0"),
    ("http://[::ffff:127.0.0.1]:8123", "plain http to ::ffff:127.0.0.1"),
    ("http://localhost.:8123", "plain http to localhost."),
    ("http://user:secret@127.0.0.1:8123", "user name or password"),
    ("https://user@example.com", "user name or password"),
    ("http://127.0.0.1:8123/?token=x", "query"),
    ("http://127.0.0.1:8123?", "query"),
    ("http://127.0.0.1:8123/#frag", "fragment"),
    ("ftp://127.0.0.1:21", "scheme 'ftp'"),
    ("ws://127.0.0.1:8123", "scheme 'ws'"),
    ("http://", "no host"),
    ("http://h:99999", "Port out of range"),
    ("http://127.0.0.1:port", "Port could not be cast"),
    ("http://[not-ipv6]:1", "no URL"),
    ("", "empty"),
])
def test_an_address_a_token_must_not_go_to_is_refused_naming_it_and_why(
        address: str, why: str) -> None:
    """Refused with a message naming the address and the reason."""
    with pytest.raises(AddressRefused) as caught:
        service_address(address)
    message = str(caught.value)
    assert repr(address) in message and why in message
    assert isinstance(caught.value, ValueError)


def test_https_off_loopback_is_refused_where_remote_tls_is_not_taken() -> None:
    """``remote_tls=False``: https only on loopback too."""
    assert service_address("https://127.0.0.1:8443", remote_tls=False).scheme == "https"
    with pytest.raises(AddressRefused, match="not this machine's loopback"):
        service_address("https://example.com", remote_tls=False)
