"""Every way an event stream ends lets go of its `Standing`.

A stream watches its token (a future in ``TokenStore._watchers``) while it runs.
FastAPI's route makes its `Standing` at the stream's first step, so a response
never begun (its client gone at once) leaves nothing; the lane's stream and the
route let go when the client leaves mid-stream.
"""


from __future__ import annotations

import gc
import socket
import time
from pathlib import Path

from engine.service.auth import TokenStore
from tests.service.conftest import Running, build_canvas


def _watching() -> int:
    gc.unfreeze()  # `serve` froze what it made at start, the store among it
    gc.collect()
    stores = [o for o in gc.get_objects() if isinstance(o, TokenStore)]
    assert stores
    return sum(len(w) for s in stores for w in s._watchers.values())


def test_a_stream_whose_client_left_at_once_is_not_watched(unix_server: Running,
                                                           tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    token = op.post("/v1/tokens", json={"principal": "card:c1"}).json()["token"]
    # ?card=%63%31 is c1 written so that the lane leaves it to FastAPI's route.
    request = (f"GET /v1/events?card=%63%31 HTTP/1.1\r\nHost: x\r\n"
               f"Authorization: Bearer {token}\r\n\r\n").encode()
    for _ in range(20):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(unix_server.address)
            sock.sendall(request)  # and gone at once
    deadline = time.monotonic() + 5
    while (left := _watching()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == 0, f"{left} Standing future(s) left in TokenStore._watchers " \
                      "after 20 streams whose clients had gone"


def test_streams_whose_clients_leave_mid_stream_are_not_watched(unix_server: Running,
                                                                tmp_path: Path) -> None:
    """On the lane's stream and FastAPI's route, a client gone after its first bytes:
    nothing left in ``_watchers``."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    token = op.post("/v1/tokens", json={"principal": "card:c1"}).json()["token"]
    for query in ("", "?card=%63%31"):
        request = (f"GET /v1/events{query} HTTP/1.1\r\nHost: x\r\n"
                   f"Authorization: Bearer {token}\r\n\r\n").encode()
        for _ in range(10):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(5)
                sock.connect(unix_server.address)
                sock.sendall(request)
                assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        assert op.post("/v1/packages/acme.standup/grant",
                       json={"permission": "clipboard.write"}).status_code == 200
    deadline = time.monotonic() + 5
    while (left := _watching()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == 0, f"{left} Standing future(s) left in TokenStore._watchers"
