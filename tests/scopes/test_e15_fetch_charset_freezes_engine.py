"""A response's charset can freeze the whole engine past ``fetch_timeout`` (e15).

The transport turns the body into text with the charset the *server* names
(``response.encoding``: any codec Python knows), synchronously, on the engine's
event loop (engine/effects/transport.py, the ``.decode(response.encoding ...)``
after the body is read). ``charset=punycode`` is such a codec, and its decoder is
quadratic: half a megabyte of ``a`` — well under ``fetch_max_bytes`` — takes
seconds of CPU during which no other call, health check or the fetch's own
deadline runs. A card needs only a server it may fetch from (its own declared
host with ``network``, or any local port with ``network.local``).
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import httpx

from .e15serve import start

BODY = b"-" + b"a" * 500_000


def _punycode_server() -> tuple[socket.socket, int]:
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(8)

    def loop() -> None:
        while True:
            try:
                conn, _ = ls.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                buf = b""
                while b"\r\n\r\n" not in buf:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    buf += chunk
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=punycode\r\n"
                             b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(BODY) + BODY)

    threading.Thread(target=loop, daemon=True).start()
    return ls, ls.getsockname()[1]


def test_a_fetched_body_never_stalls_the_engine(tmp_path: Path) -> None:
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
