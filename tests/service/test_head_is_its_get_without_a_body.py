"""``HEAD`` of a GET route is answered as its GET is, with no body; ``OPTIONS *`` says
which methods the server serves (RFC 9110 §9.1, §9.3.2, §9.3.7).

(Issue 16, round 34: ``HEAD`` of every GET route was 405 ``Allow: GET``, though a
general-purpose server MUST support HEAD, and ``OPTIONS *`` was a 404.) The HEAD is
carried out as its GET — the same lane or route, token, decision, status and header
fields — and its answer is complete once its head is sent: an events stream is not
left open, the next request on the connection is answered next.
"""

from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path

import pytest

from tests.service.conftest import Running, build_canvas, mint, snapshot
from tests.service.rawhttp import FOLLOW, connect, exchange

DOC = json.loads((Path(__file__).resolve().parents[2] / "openapi.json").read_text())

#: Each GET path of the document, with ids of the canvas `build_canvas` makes.
IDS = {"ws": "w1", "name": "acme.standup", "card": "c1", "agent": "a1"}
GETS = [re.sub(r"\{([^}]+)\}", lambda m: IDS.get(m[1], "c1"), path)
        + ("?card=c1" if path == "/v1/events" else "")
        for path, operations in DOC["paths"].items() if "get" in operations]
#: The field of the head that may differ between two answers: when. (Round 35: how a body
#: is framed was left out, and the events stream's HEAD lacked its GET's
#: Transfer-Encoding: chunked.)
_VARY = {"date"}


def _head(server: Running, target: str, token: str | None
          ) -> tuple[int, dict[str, str], bytes, bool]:
    """``HEAD target`` and a health check after it, on one connection: the HEAD's status
    and fields, the bytes after its head (the health answer, read whole however long the
    HEAD's GET took), and whether the server then closed the connection (a close comes
    at once: a tenth of a second is waited for one)."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    request = f"HEAD {target} HTTP/1.1\r\nHost: x\r\n{auth}\r\n".encode() + FOLLOW
    with connect(server) as sock:
        sock.sendall(request)
        received, closed = b"", False
        while b'{"status":"ok"' not in received:
            chunk = sock.recv(65536)
            if not chunk:
                closed = True  # ended before the health check's answer
                break
            received += chunk
        closed = closed or _closed(sock)
    head, _, rest = received.partition(b"\r\n\r\n")
    assert head, "no answer"
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip()
               for name, _, value in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, rest, closed


def _closed(sock: socket.socket) -> bool:
    """Whether the server has ended the connection (EOF or reset within 0.1 s)."""
    sock.settimeout(0.1)
    try:
        return sock.recv(65536) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def _get_head(server: Running, target: str, token: str | None) -> tuple[int, dict[str, str]]:
    """The status and header fields of ``GET target`` (its body left unread)."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    with connect(server) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\n{auth}\r\n".encode())
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            assert chunk, received
            received += chunk
    lines = received.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    return int(lines[0].split()[1]), {
        name.strip().lower(): value.strip()
        for name, _, value in (line.partition(":") for line in lines[1:])}


@pytest.mark.parametrize("token", ["operator", "card", None])
def test_head_of_every_get_route_is_its_get_without_a_body(unix_server: Running,
                                                           tmp_path: Path,
                                                           token: str | None) -> None:
    """The GET's status and fields, no body (the next answer follows the head at once),
    the connection kept; as the operator, as a card, with no token (401 as GET's)."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    bearer = {"operator": unix_server.token, "card": mint(op, "card:c1"), None: None}[token]
    before = snapshot(unix_server.db)
    wrong = []
    for target in GETS:
        status, headers, rest, closed = _head(unix_server, target, bearer)
        get_status, get_headers = _get_head(unix_server, target, bearer)
        same = {k: v for k, v in headers.items() if k not in _VARY} == \
            {k: v for k, v in get_headers.items() if k not in _VARY}
        if status != get_status or not same or closed or \
                not rest.startswith(b"HTTP/1.1 200 OK\r\n") or b'{"status":"ok"' not in rest:
            wrong.append((target, status, get_status, headers, get_headers, rest[:80], closed))
    assert wrong == []
    assert snapshot(unix_server.db) == before  # a HEAD, like its GET, changed nothing


def test_head_of_health_over_tcp(server: Running) -> None:
    """The plainest HEAD, over either transport: 200, the health answer's length, no body."""
    status, headers, rest, closed = _head(server, "/v1/health", None)
    assert status == 200 and int(headers["content-length"]) > 0 and "date" in headers
    assert rest.startswith(b"HTTP/1.1 200 OK\r\n") and not closed


def test_head_where_no_get_is_405_naming_the_methods(unix_server: Running) -> None:
    """HEAD of a path without GET is refused as any unlisted method: Allow without HEAD."""
    status, headers, _rest, _closed = _head(unix_server, "/v1/calls", unix_server.token)
    assert status == 405 and headers["allow"] == "POST"


def test_options_asterisk_names_the_methods_served(server: Running) -> None:
    """200, no body (Content-Length 0), Allow every method some path serves with HEAD and
    OPTIONS; no token asked; the connection kept."""
    served = {method.upper() for operations in DOC["paths"].values() for method in operations}
    request = b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n" + FOLLOW
    status, headers, rest, closed = exchange(server, request, 1)
    assert status == 200 and headers["content-length"] == "0" and "date" in headers
    assert set(headers["allow"].split(", ")) == served | {"HEAD", "OPTIONS"}
    assert rest.startswith(b"HTTP/1.1 200 OK\r\n") and not closed


def test_options_of_a_path_is_still_405(unix_server: Running) -> None:
    """OPTIONS of a resource: no route answers it, so 405 naming its methods, HEAD too."""
    r = unix_server.client().options("/v1/health")
    assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD"


def test_head_of_a_wait_waits_as_its_get(unix_server: Running, tmp_path: Path) -> None:
    """A held prompt's wait: the HEAD waits its timeout as the GET does, then answers the
    GET's status and length, no body; nothing is decided by asking."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    card = unix_server.client(mint(op, "card:c1"))
    # y1 is dangerous: the prompt is held, so its wait lasts the whole timeout (a1's
    # prompt is delivered at once, and its wait answers at once).
    made = card.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                        "args": {"text": "hi"}}).json()
    assert made["outcome"] == "held", made
    target = f"/v1/prompts/{made['prompt']}/wait?timeout=0.6"
    request = (f"HEAD {target} HTTP/1.1\r\nHost: x\r\n"
               f"Authorization: Bearer {unix_server.token}\r\n\r\n").encode() + FOLLOW
    with connect(unix_server) as sock:
        sock.settimeout(5)
        started = time.monotonic()
        sock.sendall(request)
        received = b""
        while b"\r\n\r\n" not in received:
            received += sock.recv(65536)
        waited = time.monotonic() - started  # when the HEAD's head came
        while b'{"status":"ok"' not in received:  # the health check's answer after it
            chunk = sock.recv(65536)
            assert chunk, received
            received += chunk
    head, _, rest = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next(int(line.partition(":")[2]) for line in lines
                  if line.lower().startswith("content-length:"))
    get = op.get(target)
    assert int(lines[0].split()[1]) == get.status_code == 200 and waited >= 0.6
    assert length == len(get.content)
    assert rest.startswith(b"HTTP/1.1 200 OK\r\n")  # no body between the two answers
    assert get.json()["outcome"] == made["outcome"] == "held"  # still held: nothing decided
