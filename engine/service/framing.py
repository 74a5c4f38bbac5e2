"""How a request's body is framed and coded, what it expects, and the answer the
parser itself gives.

The server reads a body sent as it is, with a ``Content-Length`` or plain
``chunked`` (RFC 9112 §6), and undoes no content coding. llhttp, its parser,
reads ``Transfer-Encoding: gzip, chunked`` as chunked and ignores
``Content-Encoding``, so a body coded some other way would be read as the JSON
it is not (or, worse, as JSON it happens to be). Of expectations it meets only
``100-continue`` (RFC 9110 §10.1.1); a client expecting anything else would
wait on what never comes, or take an answer for a promise kept. `refusal` says,
from a head's coding fields and ``Expect``, what to answer instead; `answer`
writes the whole answer of a
request the server stops reading at (it closes the connection after it), as
problem+json like every error the service gives (SPEC §10.1).
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterable

from engine.core.errors import with_code

__all__ = ["CODING_FIELDS", "VERSIONS", "Refusal", "answer", "host_ok", "host_refusal",
           "host_value_refusal",
           "origin_form", "refusal", "version_refusal"]

#: The header fields (lowercase, as the protocol keeps them) `refusal` reads.
CODING_FIELDS = frozenset({b"transfer-encoding", b"content-encoding", b"expect"})

#: A refused request: its status, the problem's ``reason``, and what was wrong.
Refusal = tuple[int, str, str]

_TITLES = {400: "Bad Request", 415: "Unsupported Media Type", 417: "Expectation Failed",
           431: "Request Header Fields Too Large", 501: "Not Implemented",
           505: "HTTP Version Not Supported"}

#: The HTTP versions the server reads (as llhttp gives them); any other is 505.
VERSIONS = frozenset({"1.1", "1.0"})

#: A ``Host`` field value's form, and an absolute-form target's authority: host [":"
#: port] (RFC 9112 §3.2, RFC 3986 §3.2.2-3): an IP literal in brackets (its inside
#: judged by `_literal_fault`), or a reg-name (IPv4 addresses are of its characters),
#: which may be empty (RFC 9110 §7.2: a client with no authority sends an empty Host);
#: the port, digits (`host_ok` bounds it). No user information (``user@``), no path, no
#: space or control character. The reg-name one character (or escape) a step: a run
#: repeated inside a repeat is tried every way it can be split when the value does not
#: match (``Host: aaaa…a@``, 2ⁿ ways), on the event loop, before any token is asked.
_HOST = re.compile(rb"(?:\[([^\]]*)\]|(?:[-A-Za-z0-9._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)"
                   rb"(?::([0-9]*))?")

#: An absolute-form request target (RFC 9112 §3.2.2): scheme, authority, path, query.
_ABSOLUTE = re.compile(rb"([A-Za-z][-A-Za-z0-9+.]*)://([^/?#]*)([^?#]*)(\?[^#]*)?(?:#.*)?",
                       re.DOTALL)


def _codings(values: list[bytes]) -> list[str]:
    """The codings a field's values list, in order, lowercase (empty list items dropped)."""
    return [c for value in values for c in
            (part.strip().lower() for part in value.decode("latin-1").split(",")) if c]


def _said(values: list[bytes]) -> str:
    shown = ", ".join(v.decode("latin-1") for v in values)
    return repr(shown if len(shown) <= 100 else shown[:100] + "…")


def refusal(fields: Iterable[tuple[bytes, bytes]]) -> Refusal | None:
    """What to answer a request whose head has these fields (`CODING_FIELDS`, lowercase
    names), or None when it is read as sent.

    A transfer coding other than one plain ``chunked`` is not one the server
    reads: 501 when ``chunked`` ends the list once (RFC 9112 §6.1: a coding not
    understood), else 400 (§6.3: the body's end is unknown). A content coding
    other than ``identity`` is 415 (RFC 9110 §15.5.16): nothing decodes it. An
    ``Expect`` naming anything but ``100-continue`` is 417 (RFC 9110 §10.1.1), the
    request not carried out (its body, if any, never asked for).
    """
    transfer = [v for name, v in fields if name == b"transfer-encoding"]
    content = [v for name, v in fields if name == b"content-encoding"]
    expect = [v for name, v in fields if name == b"expect"]
    if transfer:
        codings = _codings(transfer)
        if codings != ["chunked"]:
            if codings[-1:] == ["chunked"] and codings.count("chunked") == 1:
                return (501, "transfer-coding",
                        f"Transfer-Encoding {_said(transfer)} is not read by this server: "
                        "send the body as it is, with a Content-Length or chunked and no "
                        "other transfer coding")
            return (400, "transfer-coding",
                    f"Transfer-Encoding {_said(transfer)} leaves the body's end unknown: "
                    "chunked must be its last coding, and given once (RFC 9112 §6.3)")
    if expect and any(e != "100-continue" for e in _codings(expect)):
        return (417, "expectation",
                f"Expect {_said(expect)} is not met by this server: 100-continue is the only "
                "expectation it meets (RFC 9110 §10.1.1); send the request without it")
    if content and any(c != "identity" for c in _codings(content)):
        return (415, "content-coding",
                f"Content-Encoding {_said(content)} is not decoded by this server: send the "
                "body as it is (no Content-Encoding)")
    return None


def host_refusal(hosts: int, http_version: str) -> Refusal | None:
    """What to answer a request whose head has ``hosts`` ``Host`` fields, or None when
    it is read as sent.

    RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request without
    ``Host`` and to any request with more than one. An HTTP/1.0 request without
    one is read: the RFC asks the field of HTTP/1.1 alone, and HTTP/1.0 clients
    (``curl -0``, old health checkers) may leave it out; the service serves
    one origin, so nothing is read from it anyway.
    """
    if hosts > 1:
        return (400, "host", f"the request has {hosts:,} Host header fields: a request "
                "names its host once (RFC 9112 §3.2); nothing more is read on this "
                "connection")
    if hosts == 0 and http_version != "1.0":
        return (400, "host", f"the request has no Host header field: an HTTP/{http_version} "
                "request must name its host (RFC 9112 §3.2); nothing more is read on this "
                "connection")
    return None


def host_ok(value: bytes) -> bool:
    """Whether ``value`` is a valid ``Host`` field value: host[:port] (`_HOST`), an IP
    literal an IPv6 address (`_literal_fault`), the port a TCP one (at most 65535:
    more names no port anything listens on)."""
    form = _HOST.fullmatch(value)
    if form is None or (form[1] is not None and _literal_fault(form[1]) is not None):
        return False
    port = (form[2] or b"").lstrip(b"0")
    # Its length bounded first: int() refuses digits past 4,300 (an error, not False).
    return len(port) <= 5 and (not port or int(port) <= 65535)


def _literal_fault(literal: bytes) -> str | None:
    """What is wrong with the inside of an IP literal (``[...]``), or None when it is an
    IPv6 address (RFC 3986 §3.2.2's IP-literal, read by `ipaddress`).

    The two other forms a client may write there are refused by name. An IPv6
    zone id (``fe80::1%25eth0``, RFC 6874) names an interface of the client's own
    host, which means nothing to this server: RFC 6874 §4 has a client remove it
    from any URI it sends (`ipaddress` would read it as the address's scope). An
    IPvFuture literal (``v1.x``) is of an address version no RFC defines, so it
    names no host this server is.
    """
    text = literal.decode("latin-1")
    if "%" in text:
        return ("an IPv6 zone id (the part after %), which names an interface of the "
                "client's own host and is never sent (RFC 6874 §4)")
    if text[:1] in ("v", "V"):
        return ("an IPvFuture literal ([v...], RFC 3986 §3.2.2), of an address version "
                "no RFC defines")
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return "an IP literal that is not an IPv6 address (RFC 3986 §3.2.2)"
    return None


def _host_fault(value: bytes) -> str:
    """What is wrong with ``value``, a host[:port] `host_ok` refused."""
    form = _HOST.fullmatch(value)
    fault = None if form is None or form[1] is None else _literal_fault(form[1])
    if fault is not None:
        return f"has {fault}"
    return ("is not a host[:port] (no user name, path, space or control character; the "
            "port in digits, at most 65535)")


def host_value_refusal(value: bytes) -> Refusal:
    """The answer to a request whose ``Host`` field has ``value``, not a valid host[:port]
    (`host_ok`): RFC 9112 §3.2, a server MUST answer it 400."""
    return (400, "host", f"the request's Host header field {_shown(value)} "
            f"{_host_fault(value)} (RFC 9112 §3.2); nothing more is read on this connection")


def version_refusal(version: str) -> Refusal:
    """The answer to a request of HTTP ``version`` (major.minor), not one of `VERSIONS`."""
    return (505, "version", f"the request is HTTP/{version}, which this server does not "
            "read: it speaks HTTP/1.1 (and HTTP/1.0) (RFC 9110 §15.6.6); nothing more is "
            "read on this connection")


def origin_form(target: bytes, method: str) -> bytes | Refusal:
    """The origin-form (path and query) of a request ``target`` that does not begin with
    ``/``, or the answer refusing it.

    RFC 9112 §3.2.2: a server MUST accept the absolute-form
    (``http://host/v1/health``): it is read as its path and query, so it reaches
    what the origin-form would and nothing else, and is authenticated the same.
    Its scheme must be ``http`` or ``https`` (the only resources here), and its
    authority a host[:port] as a ``Host`` field's, not empty (RFC 9110 §4.2.1: a
    recipient MUST reject an http URI with an empty host). The asterisk-form
    (``*``) is OPTIONS's alone (§3.2.4), and the authority-form (``host:port``)
    CONNECT's (§3.2.3), asking a proxy's tunnel, which this server is not: both
    400, as is any other target.
    """
    absolute = _ABSOLUTE.fullmatch(target)
    if absolute is None:
        if target == b"*" and method == "OPTIONS":
            return target  # read as sent: no route has it
        what = ("the asterisk-form (*), which only OPTIONS may use (RFC 9112 §3.2.4)"
                if target == b"*" else
                "a path (/...) or an absolute http URI (RFC 9112 §3.2); this server is "
                "no proxy, so it opens no tunnel (CONNECT)")
        return (400, "target", f"the request target {_shown(target)} of {method} is not "
                f"{what}; nothing more is read on this connection")
    scheme, authority, path, query = absolute.groups()
    if scheme.lower() not in (b"http", b"https"):
        return (400, "target", f"the request target {_shown(target)} is not an http or "
                "https URI: this server serves nothing else (RFC 9112 §3.2.2); nothing "
                "more is read on this connection")
    if not authority or not host_ok(authority):
        why = ("it is empty (an http URI's host may not be, RFC 9110 §4.2.1)" if not authority
               else f"its authority {_shown(authority)} {_host_fault(authority)}")
        return (400, "target", f"the request target {_shown(target)} does not name a "
                f"host[:port]: {why} (RFC 9112 §3.2.2); nothing more is read on this "
                "connection")
    return (path or b"/") + (query or b"")


def _shown(value: bytes) -> str:
    text = value.decode("latin-1")
    return repr(text if len(text) <= 100 else text[:100] + "…")


def answer(status_line: bytes, default_headers: Iterable[tuple[bytes, bytes]],
           status: int, reason: str, text: str) -> bytes:
    """The whole answer refusing a request the server reads no further: problem+json
    (``INVALID_ARGUMENT``, ``reason``), ``Connection: close``."""
    message = with_code("INVALID_ARGUMENT", text)
    body = json.dumps({"type": "urn:arrowgate:problem:invalid_argument",
                       "title": _TITLES.get(status, "Error"), "status": status,
                       "detail": message, "code": "INVALID_ARGUMENT", "reason": reason,
                       "permission": None, "message": message}).encode()
    parts = [status_line]
    for name, value in default_headers:  # the date, as uvicorn sends it
        parts += (name, b": ", value, b"\r\n")
    if status == 415:
        parts.append(b"accept-encoding: identity\r\n")  # RFC 9110 §12.5.3
    parts += (b"content-type: application/problem+json\r\n",
              b"content-length: %d\r\n" % len(body), b"connection: close\r\n\r\n", body)
    return b"".join(parts)
