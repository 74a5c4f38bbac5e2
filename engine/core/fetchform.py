"""What a card may put into a ``net.fetch`` request (SPEC §8.1), checked at check 3.

A card chooses the method, headers and body, but never what frames or routes
the request: the engine's HTTP client writes ``Host``, ``Content-Length`` and
the rest itself, and a card-supplied copy is how requests are smuggled. A
header name must be an HTTP token, whole, and a value printable ASCII with
spaces or tabs only between its characters (no CR, LF, NUL or other control
character, nothing the client cannot encode), so nothing a card writes can
end the head early, reach the wire unparsed, or fail only once the request is
under way.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["FETCH_MARK", "FETCH_METHODS", "FRAMING_HEADERS", "URL_CONTROL", "fetch_args_problem"]

#: The methods a card may use; TRACE, CONNECT and anything else are refused.
FETCH_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
#: Headers that frame or route a request (lower-case); ``proxy-*`` too.
FRAMING_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection", "te",
                             "upgrade", "trailer", "keep-alive"})
#: The header (lower-case) the engine's transport puts on every request a card's fetch
#: sends, in place of any the card wrote: a card with ``network.local`` reaches the
#: service's loopback port from the engine's own process, which a person started, so
#: every server refuses a request that carries it (403 ``card-fetch``) before it reads
#: the request's token: a card's fetch acts there as nobody, whatever token it holds.
FETCH_MARK = "arrowgate-fetch"
#: C0 control characters and DEL: no URL a fetch sends (the card's or a redirect's)
#: may hold one. URL parsing drops tabs and line breaks, so the log and the fetch
#: would name different URLs, and the HTTP client refuses the rest.
URL_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Matched with fullmatch: ``$`` would also match before a final newline.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,256}")
_VALUE = re.compile(r"(?:[\x21-\x7e](?:[\t\x20-\x7e]*[\x21-\x7e])?)?")
_MAX_HEADERS = 100
_MAX_VALUE = 16 * 1024


def fetch_args_problem(args: dict[str, Any]) -> tuple[str, str] | None:
    """(argument, why) when a fetch's method or headers may not be sent, else None.

    The argument types are checked before this (``method`` a string,
    ``headers`` an object); this checks what they hold.
    """
    method = args.get("method")
    if method is not None and str(method).upper() not in FETCH_METHODS:
        return "method", f"method must be one of {', '.join(sorted(FETCH_METHODS))}"
    headers = args.get("headers")
    if not headers:
        return None
    if not isinstance(headers, dict):
        return "headers", "headers must be an object of names to strings"
    if len(headers) > _MAX_HEADERS:
        return "headers", f"at most {_MAX_HEADERS} headers"
    seen: set[str] = set()
    for name, value in headers.items():
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            return "headers", "a header name is letters, digits and !#$%&'*+-.^_`|~"
        low = name.lower()
        if low in FRAMING_HEADERS or low.startswith("proxy-"):
            return "headers", (f"header {name!r} frames or routes the request; the engine "
                               "sets it")
        if low in seen:
            return "headers", f"header {name!r} is given twice"
        seen.add(low)
        if not isinstance(value, str):
            return "headers", f"header {name!r} must be a string"
        if len(value) > _MAX_VALUE or not _VALUE.fullmatch(value):
            return "headers", (f"header {name!r} is printable ASCII (spaces and tabs only "
                               f"between characters), at most {_MAX_VALUE} characters")
    return None
