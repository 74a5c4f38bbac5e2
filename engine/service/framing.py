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

import json
from collections.abc import Iterable

from engine.core.errors import with_code

__all__ = ["CODING_FIELDS", "Refusal", "answer", "host_refusal", "refusal"]

#: The header fields (lowercase, as the protocol keeps them) `refusal` reads.
CODING_FIELDS = frozenset({b"transfer-encoding", b"content-encoding", b"expect"})

#: A refused request: its status, the problem's ``reason``, and what was wrong.
Refusal = tuple[int, str, str]

_TITLES = {400: "Bad Request", 415: "Unsupported Media Type", 417: "Expectation Failed",
           431: "Request Header Fields Too Large", 501: "Not Implemented"}


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
