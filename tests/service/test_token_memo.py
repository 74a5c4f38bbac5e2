"""A connection's memo of its token (`TokenStore.recall`) never outlives what `lookup` says."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path

import pytest

from engine import Engine, World
from engine.service import auth
from engine.service.auth import TokenMemo, TokenStore
from tests.conftest import polls
from tests.service.conftest import Running, build_canvas


async def test_recall_answers_only_when_lookup_would_from_its_cache(tmp_path: Path) -> None:
    """A hit only for the same header, its entry still cached and fresh; a revocation
    here, one elsewhere seen after the cache's seconds, and a changed header all miss."""
    Engine.open(tmp_path / "a.db", world=World(net=None, fs=None)).close()  # the tables
    now = [1000.0]
    tokens = TokenStore(tmp_path / "a.db", clock=lambda: now[0])
    other = TokenStore(tmp_path / "a.db")  # another server on the same store
    try:
        token_id, token = await tokens.mint("card:c1")
        header = b"Bearer " + token.encode()
        memo = TokenMemo()
        assert tokens.recall(header, memo) is None  # nothing remembered yet
        found = tokens.lookup(token)
        assert found is not None and found[0] == token_id
        tokens.remember(header, token, memo)
        assert tokens.recall(header, memo) == found
        # Another header (another token, or the same one spelled otherwise) is not it.
        assert tokens.recall(b"Bearer " + token.encode()[:-1] + b"x", memo) is None
        assert tokens.recall(b"bearer " + token.encode(), memo) is None
        # Stale: `lookup` would ask the store again, so the memo does not answer.
        now[0] += auth.CACHE_SECONDS
        assert tokens.recall(header, memo) is None
        assert tokens.lookup(token) == found  # looked up again: a new cache entry...
        assert tokens.recall(header, memo) is None  # ...that the memo did not see
        tokens.remember(header, token, memo)
        assert tokens.recall(header, memo) == found
        # Revoked on another server: seen once the cache's seconds are over.
        assert await other.revoke(token_id)
        assert tokens.recall(header, memo) == found  # as lookup: cached, not yet seen
        now[0] += auth.CACHE_SECONDS
        assert tokens.recall(header, memo) is None
        assert tokens.lookup(token) is None
        # Revoked here: at once.
        token_id, token = await tokens.mint("card:c2")
        header = b"Bearer " + token.encode()
        assert tokens.lookup(token) is not None
        tokens.remember(header, token, memo)
        assert tokens.recall(header, memo) is not None
        assert await tokens.revoke(token_id)
        assert tokens.recall(header, memo) is None
        # Remembering an unknown token remembers nothing that could answer.
        tokens.remember(b"Bearer nope", "nope", memo)
        assert tokens.recall(b"Bearer nope", memo) is None
    finally:
        tokens.close()
        other.close()


def _request(sock: socket.socket, token: str, body: dict[str, object]) -> tuple[int, bytes]:
    """One ``POST /v1/calls`` on a keep-alive connection: (status, body)."""
    data = json.dumps(body).encode()
    sock.sendall(b"POST /v1/calls HTTP/1.1\r\nHost: ag\r\nAuthorization: Bearer %b\r\n"
                 b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%b"
                 % (token.encode(), len(data), data))
    reader = sock.makefile("rb")
    status = int(reader.readline().split()[1])
    length = 0
    while (line := reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return status, reader.read(length)


CALL = {"card": "c1", "call": "agents.prompt", "target": "a1", "args": {"text": "hi"}}


def test_one_connection_sees_a_revocation_and_a_new_token(unix_server: Running, tmp_path,
                                                          monkeypatch) -> None:
    """On one keep-alive connection: a token revoked through the service is refused at
    its next call, one revoked by another server once the cache's seconds are over, and
    a different token sent on the same connection is judged as itself."""
    monkeypatch.setattr(auth, "CACHE_SECONDS", 0.3)
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    minted = op.post("/v1/tokens", json={"principal": "card:c1"}).json()
    card = minted["token"]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(unix_server.address)
    try:
        assert _request(sock, card, CALL)[0] == 200
        assert _request(sock, card, CALL)[0] == 200  # the memo's answer
        # Another card's token on the same connection may not act as c1.
        minted2 = op.post("/v1/tokens", json={"principal": "card:c2"}).json()
        other = minted2["token"]
        status, answer = _request(sock, other, CALL)
        assert status == 403 and json.loads(answer)["reason"] == "wrong-principal"
        assert _request(sock, card, CALL)[0] == 200
        assert op.delete(f"/v1/tokens/{minted['id']}").status_code == 204
        status, answer = _request(sock, card, CALL)
        assert status == 401 and json.loads(answer)["reason"] == "unknown-token"
        # Revoked by another server on the same store: seen after CACHE_SECONDS.
        assert _request(sock, other, {**CALL, "card": "c2"})[0] == 200
        elsewhere = TokenStore(unix_server.db)
        try:
            assert asyncio.run(elsewhere.revoke(minted2["id"]))
        finally:
            elsewhere.close()
        for _ in polls():
            status, _answer = _request(sock, other, {**CALL, "card": "c2"})
            if status == 401:
                break
            time.sleep(0.05)
        assert status == 401
        # No token, or not a bearer one, on the same connection: as before.
        status, answer = _request(sock, "", CALL)
        assert status == 401 and json.loads(answer)["reason"] == "no-token"
    finally:
        sock.close()


@pytest.mark.parametrize("header", [b"Basic abc", b"Bearer"])
def test_not_a_bearer_token_is_no_token(unix_server: Running, header: bytes) -> None:
    """An ``Authorization`` header without a bearer token is refused as no token."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(unix_server.address)
    try:
        data = json.dumps(CALL).encode()
        sock.sendall(b"POST /v1/calls HTTP/1.1\r\nHost: ag\r\nAuthorization: %b\r\n"
                     b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%b"
                     % (header, len(data), data))
        reader = sock.makefile("rb")
        assert int(reader.readline().split()[1]) == 401
    finally:
        sock.close()
