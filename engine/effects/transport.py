"""The real network under the guarded fetch: a resolver and an httpx transport.

The transport connects to the address the guard checked — never resolving
again — by putting that address in the URL while sending the host name as
the Host header and as the TLS server name (httpcore's ``sni_hostname``), so
certificates are verified against the name. Proxies from the environment
are ignored, redirects are left to the guard, and the body is read only up
to the size cap — counted as received and again as decoded: the transport
decodes gzip and deflate itself with a bounded output per step, so a small
compressed body that would expand past the cap (a gzip bomb) stops at the
cap. Every failure below the guard becomes a `FetchFailed` whose message
never quotes the request (its headers may hold a filled-in secret).
Every request carries the engine's mark (`FETCH_MARK`), in place of any copy
the card wrote, by which the service refuses a card's fetch that reaches it.

The body becomes text with the charset the server names only when that is
one of `TEXT_CODECS`, whose decoders take time linear in the body; any other
charset — unknown, or a codec such as ``punycode`` whose decoder is
quadratic — is read as UTF-8 with replacement characters, as a missing one
is. A large body is decoded in a worker thread, so the engine's event loop
(and with it the fetch's own deadline) never waits on it.

Name lookups run in threads of their own (`LOOKUP_THREADS`), never the
loop's default executor: a lookup cannot be cancelled, and one a name server
never answers holds its thread for as long as the system resolver waits,
after the fetch has ended at its deadline. Cards fetching names under such a
domain then use up the lookup threads alone, not the threads the rest of the
engine works in; and they are daemons (`DaemonPool`), never waited for when the
process exits.
"""

from __future__ import annotations

import asyncio
import codecs
import socket
import ssl
import threading
import zlib
from urllib.parse import urlsplit, urlunsplit

from engine.core.fetchform import FETCH_MARK
from engine.effects.netguard import FetchFailed, FetchResponse, FetchTooLarge
from engine.effects.threadwork import DaemonPool

__all__ = ["LOOKUP_THREADS", "TEXT_CODECS", "BodyDecoder", "HttpxTransport", "body_text", "system_resolver",
           "text_codec"]

#: The codecs (Python's canonical names) a response's charset may name: text
#: encodings whose decoders run in time linear in the body, measured. Others
#: Python knows are not all text encodings (``base64``, ``rot-13``) and some
#: decode in quadratic time (``punycode``), which a server could use to hold
#: the engine: those bodies are read as UTF-8 instead.
TEXT_CODECS = frozenset({
    "utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be",
    "utf-32", "utf-32-le", "utf-32-be", "ascii",
    *(f"iso8859-{n}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16)),
    *(f"cp{n}" for n in range(1250, 1259)), "koi8-r", "koi8-u",
    "shift_jis", "cp932", "euc_jp", "gb2312", "gbk", "gb18030", "big5", "euc_kr", "cp949",
})
#: Bodies longer than this are decoded in a worker thread (a few ms on the loop at most).
_DECODE_ON_LOOP = 64 * 1024
#: Threads for name lookups, apart from the loop's default executor (see the module
#: docstring); a lookup waiting for one is dropped when its fetch ends.
LOOKUP_THREADS = 16
_LOOKUPS = DaemonPool(LOOKUP_THREADS, "arrowgate-lookup")


async def system_resolver(host: str) -> list[str]:
    """Every address the system resolver gives for ``host`` (empty when none).

    Looked up in the lookup threads (`LOOKUP_THREADS`), never the default executor.
    """
    try:
        infos = await asyncio.get_running_loop().run_in_executor(
            _LOOKUPS, socket.getaddrinfo, host, None, 0, socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, ValueError, OSError):
        return []
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def text_codec(charset: str | None) -> str:
    """The codec a body with this ``charset`` is decoded with: it, if in `TEXT_CODECS`, else UTF-8."""
    if not charset or len(charset) > 40:
        return "utf-8"
    try:
        name = codecs.lookup(charset).name
    except (LookupError, ValueError):  # a charset Python does not know
        return "utf-8"
    return name if name in TEXT_CODECS else "utf-8"


async def body_text(body: bytes, charset: str | None) -> str:
    """``body`` as text (see `text_codec`), undecodable bytes replaced.

    A large body is decoded in a worker thread: even a linear decode of
    megabytes would hold every other call (and this fetch's deadline) meanwhile.
    """
    codec = text_codec(charset)
    if len(body) <= _DECODE_ON_LOOP:
        return body.decode(codec, errors="replace")
    return await asyncio.to_thread(body.decode, codec, "replace")


class BodyDecoder:
    """Decodes a response body as it arrives, refusing it past ``max_bytes`` decoded.

    Identity, ``gzip`` (``x-gzip``) and ``deflate`` (zlib or raw) are decoded;
    any other coding, or more than one, is refused: the engine cannot bound
    what it cannot decode itself.
    """

    def __init__(self, content_encoding: str, max_bytes: int) -> None:
        codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
            raise FetchFailed("encoding", f"the response is encoded as {content_encoding[:40]!r},"
                                          " which the engine does not decode")
        self.coding = codings[0] if codings else None
        self.max_bytes = max_bytes
        self.size = 0
        #: deflate's first byte, kept until the second tells zlib from raw.
        self._head = b""
        self._z: zlib._Decompress | None = None
        if self.coding in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def _too_large(self) -> FetchTooLarge:
        return FetchTooLarge(f"the response is larger than {self.max_bytes} bytes decoded")

    def feed(self, data: bytes) -> bytes:
        """Decoded bytes for ``data``; raises `FetchFailed` past the cap or on bad data."""
        if self.coding is None:
            out = data
        else:
            if self._z is None:
                # deflate is zlib-wrapped by the standard, raw by some servers: told
                # apart by the first two bytes, which may come in separate pieces
                # (a body of one byte decodes to nothing either way).
                data = self._head + data
                if len(data) < 2:
                    self._head = data
                    return b""
                raw = not (data[0] & 0x0F == 8 and int.from_bytes(data[:2], "big") % 31 == 0)
                self._z = zlib.decompressobj(-zlib.MAX_WBITS if raw else zlib.MAX_WBITS)
            pieces, left = [], self.max_bytes - self.size + 1
            try:
                while data and left > 0:
                    piece = self._z.decompress(data, left)
                    pieces.append(piece)
                    left -= len(piece)
                    data = self._z.unconsumed_tail
                    if not piece and data:
                        break  # no progress (cannot happen with max_length > 0)
            except zlib.error as exc:
                raise FetchFailed("encoding", "the response body is not valid "
                                              f"{self.coding}") from exc
            out = b"".join(pieces)
        self.size += len(out)
        if self.size > self.max_bytes:
            raise self._too_large()
        return out


class HttpxTransport:
    """One request through httpx to an already checked address.

    The TLS context (loading the CA bundle costs tens of milliseconds of CPU)
    is made once, in a worker thread, and shared by every fetch; what each
    fetch builds for itself — an httpx client, and with it a connection pool
    of its own, so no connection is reused for another host's name — costs
    the event loop a fraction of a millisecond.

    Args:
        verify: TLS verification (an ``ssl.SSLContext`` in tests with a local CA).
    """

    def __init__(self, *, verify: bool | ssl.SSLContext = True) -> None:
        self.verify = verify
        self._context: ssl.SSLContext | None = verify if isinstance(verify, ssl.SSLContext) \
            else None
        self._making = threading.Lock()

    def _make_context(self) -> ssl.SSLContext:
        """The shared TLS context, made by the first caller (in a worker thread)."""
        with self._making:
            if self._context is None:
                import httpx

                # As httpx makes it for verify=True with trust_env=False.
                self._context = httpx.create_ssl_context(verify=self.verify, trust_env=False)
            return self._context

    async def tls_context(self) -> ssl.SSLContext:
        """The TLS context every fetch shares; the first call makes it off the loop."""
        if self._context is not None:
            return self._context
        return await asyncio.to_thread(self._make_context)

    async def __call__(self, method: str, url: str, headers: dict[str, str], body: str | None,
                       address: str, *, timeout: float, max_bytes: int) -> FetchResponse:
        # Imported here, not at the top: httpx's __init__ imports its command
        # line, and with it rich, whenever rich is installed (textual brings
        # it), and the engine must stay headless until it really fetches.
        import httpx

        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        literal = f"[{address}]" if ":" in address else address
        target = urlunsplit((parts.scheme, f"{literal}:{port}", parts.path or "/", parts.query, ""))
        default_port = port == (443 if parts.scheme == "https" else 80)
        # The mark last, over any copy the card wrote (`FETCH_MARK`: a server refuses it).
        send_headers = {k: v for k, v in headers.items() if k.lower() not in ("host", FETCH_MARK)}
        # An IPv6 literal keeps its brackets in Host (RFC 3986 §3.2.2): ``::1:8080``
        # is not a host and port, and reads as another address.
        authority = f"[{host}]" if ":" in host else host
        send_headers["Host"] = authority if default_port else f"{authority}:{port}"
        if not any(k.lower() == "accept-encoding" for k in send_headers):
            send_headers["Accept-Encoding"] = "gzip, deflate"
        send_headers[FETCH_MARK] = "card"
        context = await self.tls_context()
        try:
            async with httpx.AsyncClient(trust_env=False, follow_redirects=False,
                                         timeout=timeout, verify=context) as client:
                request = client.build_request(method, target, headers=send_headers,
                                               content=body,
                                               extensions={"sni_hostname": host})
                response = await client.send(request, stream=True)
                try:
                    decoder = BodyDecoder(response.headers.get("content-encoding", ""),
                                          max_bytes)
                    chunks, received = [], 0
                    # Raw bytes, decoded here: httpx's own decoders expand a
                    # chunk without bound before anyone can count it.
                    async for chunk in response.aiter_raw():
                        received += len(chunk)
                        if received > max_bytes:
                            raise FetchTooLarge(f"the response is larger than "
                                                f"{max_bytes} bytes")
                        chunks.append(decoder.feed(chunk))
                finally:
                    await response.aclose()
        except FetchFailed:
            raise
        except httpx.TimeoutException as exc:
            raise FetchFailed("timeout", f"no answer from {host} within {timeout:g} s") from exc
        except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:
            # httpx, h11, ssl and OS errors alike; the exception's own text
            # may quote the request's headers, so only its kind is told.
            raise FetchFailed("connect", f"{host}: the request failed "
                                         f"({type(exc).__name__})") from exc
        text = await body_text(b"".join(chunks), response.charset_encoding)
        location = response.headers.get("location")
        return FetchResponse(response.status_code, text,
                             {"location": location} if location else None)
