"""A fetched body is decoded only with a linear text codec, and never holds the engine's loop.

The charset a server names is used only when it is one of the transport's
``TEXT_CODECS`` (UTF-8/16/32, ASCII, ISO-8859-*, cp125x, KOI8, the common CJK
codecs: decoders linear in the body); anything else is read as UTF-8 with
replacement characters, as an unknown charset always was. A large body is
decoded in a worker thread, so other calls, health checks and the fetch's own
``fetch_timeout`` run meanwhile (SPEC §8.1: one deadline for the whole fetch).

(Found by a helper: ``charset=punycode``, whose decoder is quadratic, made half
a megabyte of body take seconds of CPU on the event loop, freezing the whole
service past ``fetch_timeout``.)
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import httpx

from engine.effects.transport import text_codec

from .served import serve_canned, start

BODY = b"-" + b"a" * 500_000


def _punycode_server() -> tuple[socket.socket, int]:
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    serve_canned(ls, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=punycode\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(BODY) + BODY)
    return ls, ls.getsockname()[1]


def test_a_quadratic_charset_never_stalls_the_engine(tmp_path: Path) -> None:
    served = start(tmp_path, settings={"fetch_timeout": 2})
    ls, port = _punycode_server()
    try:
        result: dict = {}

        def fetch() -> None:
            t0 = time.monotonic()
            result["decision"] = served.call("net.fetch", {"url": f"http://127.0.0.1:{port}/"},
                                             timeout=120)
            result["took"] = time.monotonic() - t0

        worker = threading.Thread(target=fetch)
        worker.start()
        worst = 0.0
        with httpx.Client(base_url=served.address, timeout=120) as probe:
            while worker.is_alive():
                t0 = time.monotonic()
                assert probe.get("/v1/health").status_code == 200
                worst = max(worst, time.monotonic() - t0)
                time.sleep(0.1)
        worker.join()
        # One deadline for the whole fetch (SPEC §8.1), and the service answers meanwhile.
        d = result["decision"]
        assert result["took"] < 2 + 1.5 and worst < 1.0, (
            f"the fetch took {result['took']:.1f} s with fetch_timeout 2 s ({d['message']}); "
            f"GET /v1/health waited up to {worst:.1f} s meanwhile")
    finally:
        ls.close()
        served.stop()


def test_only_linear_text_codecs_decode_a_body() -> None:
    """A server's charset picks the codec only from the allow-list; else UTF-8."""
    assert text_codec("ISO-8859-1") == "iso8859-1"
    assert text_codec("windows-1252") == "cp1252"
    assert text_codec("UTF-16LE") == "utf-16-le"
    assert text_codec("Shift_JIS") == "shift_jis"
    for charset in ("punycode", "idna", "utf-7", "base64", "rot13", "unicode_escape",
                    "no-such-charset", "", None, "x" * 500):
        assert text_codec(charset) == "utf-8", charset
