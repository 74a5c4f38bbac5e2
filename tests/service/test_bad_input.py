"""Bad requests are 400/413 problems and change nothing (SPEC §10.1)."""

from __future__ import annotations

import pytest

from tests.service.conftest import build_canvas, snapshot

#: (path, a valid body) for every route that takes a JSON body.
BODIES = [
    ("/v1/tokens", {"principal": "card:c1"}),
    ("/v1/workspaces", {"id": "w2", "folder": "/tmp"}),
    ("/v1/workspaces/w1/nodes", {"id": "n2", "type": "note"}),
    ("/v1/workspaces/w1/arrows", {"id": "e9", "from": "c2", "to": "a1"}),
    ("/v1/packages", {"manifest": {"name": "x.y", "version": "1.0.0", "permissions": {}}}),
    ("/v1/packages/acme.standup/install", {"grant": "all"}),
    ("/v1/packages/acme.standup/grant", {"permission": "clipboard.write"}),
    ("/v1/packages/acme.standup/revoke", {"permission": "agents.prompt"}),
    ("/v1/packages/acme.standup/approve", {"review_hash": "sha256:x"}),
    ("/v1/calls", {"card": "c1", "call": "agents.prompt", "target": "a1",
                   "args": {"text": "x"}}),
    ("/v1/calls:batch", {"calls": [{"card": "c1", "call": "agents.prompt", "target": "a1",
                                    "args": {"text": "x"}}]}),
    ("/v1/emit", {"card": "c1", "port": "out", "data": 1}),
    ("/v1/holds/p1/approve", {"text_sha256": "0" * 64}),
]

WRONG_TYPES = {
    "/v1/tokens": {"principal": 1},
    "/v1/workspaces": {"id": ["w2"], "folder": "/tmp"},
    "/v1/workspaces/w1/nodes": {"id": "n2", "type": "note", "text": 5},
    "/v1/workspaces/w1/arrows": {"id": "e9", "from": "c2", "to": None},
    "/v1/packages": {"manifest": "acme"},
    "/v1/packages/acme.standup/install": {"grant": 3},
    "/v1/packages/acme.standup/grant": {"permission": True},
    "/v1/packages/acme.standup/revoke": {"permission": {"a": 1}},
    "/v1/packages/acme.standup/approve": {"review_hash": 7},
    "/v1/calls": {"card": "c1", "call": "agents.prompt", "target": "a1", "args": "text"},
    "/v1/calls:batch": {"calls": {"card": "c1"}},
    "/v1/emit": {"card": 1, "port": "out"},
    "/v1/holds/p1/approve": {"text_sha256": "short"},
}


@pytest.fixture
def canvas(unix_server, tmp_path):
    """A server with the test canvas and one held prompt (p1)."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                               "args": {"text": "held"}})
    return unix_server


def test_malformed_json_unknown_fields_wrong_types_change_nothing(canvas) -> None:
    """Every body route: malformed JSON, an unknown field, a wrong type → 400, no change."""
    op = canvas.client()
    before = snapshot(canvas.db)
    for path, body in BODIES:
        cases = [
            ("malformed-json", b'{"card": "c1",', None),
            ("unknown-field", None, {**body, "confirmed": True}),
            ("invalid", None, WRONG_TYPES[path]),
            ("invalid", b"[1, 2]", None),
            ("malformed-json", b'{"card": "\xda\xff"}', None),  # not UTF-8
            # Nested past what either reader takes (never a RecursionError, a 500):
            ("malformed-json", b'{"card": ' + b"[" * 5000 + b"]" * 5000 + b"}", None),
            # ... and with a run of 19 digits, which json reads again.
            ("malformed-json", b'{"card": ' + b"[" * 1000 + b"1234567890123456789"
             + b"]" * 1000 + b"}", None),
        ]
        for reason, raw, obj in cases:
            if raw is not None:
                r = op.post(path, content=raw, headers={"Content-Type": "application/json"})
            else:
                r = op.post(path, json=obj)
            assert r.status_code == 400, (path, reason, r.text)
            problem = r.json()
            assert r.headers["content-type"] == "application/problem+json"
            assert problem["code"] == "INVALID_ARGUMENT" and problem["reason"] == reason, \
                (path, problem)
            assert problem["status"] == 400 and problem["message"]
    assert snapshot(canvas.db) == before


def test_unknown_field_is_named(canvas) -> None:
    """The problem names the field that was wrong."""
    r = canvas.client().post("/v1/calls", json={"card": "c1", "call": "agents.list",
                                                 "confirmed": True})
    assert "confirmed" in r.json()["message"]


def test_oversized_bodies_are_413_and_change_nothing(serve_at, tmp_path) -> None:
    """Over the body limit: 413, whether the length is declared or the body is streamed."""
    server = serve_at(max_body=4096)
    op = server.client()
    build_canvas(op, tmp_path / "proj")
    before = snapshot(server.db)
    big = {"card": "c1", "call": "agents.prompt", "target": "a1", "args": {"text": "x" * 5000}}
    r = op.post("/v1/calls", json=big)
    assert r.status_code == 413 and r.json()["reason"] == "too-large"

    def chunks():
        yield b'{"card": "c1", "call": "agents.prompt", "target": "a1", "args": {"text": "'
        for _ in range(10):
            yield b"y" * 1000
        yield b'"}}'

    r = op.post("/v1/calls", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert snapshot(server.db) == before
    # and a body within the limit still works
    assert op.post("/v1/calls", json={**big, "args": {"text": "ok"}}).json()["outcome"] == \
        "queued"


def test_a_declared_length_with_a_chunked_body_is_refused(serve_at, tmp_path) -> None:
    """A body declared small (Content-Length) but sent chunked and larger never reaches a
    route: the body limit counts only bodies sent without a length, so it relies on this."""
    import socket

    server = serve_at(max_body=4096)
    op = server.client()
    build_canvas(op, tmp_path / "proj")
    before = snapshot(server.db)
    body = b'{"card": "c1", "call": "agents.prompt", "target": "a1", "args": {"text": "' + \
        b"z" * 5000 + b'"}}'
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)
    s.connect(server.address)
    try:
        s.sendall(b"POST /v1/calls HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " +
                  server.token.encode() + b"\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" +
                  f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
        answer = s.recv(200)
    finally:
        s.close()
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert snapshot(server.db) == before


def test_bad_query_and_header_values(canvas) -> None:
    """Bad query parameters and Last-Event-ID are 400 problems."""
    op = canvas.client()
    assert op.get("/v1/log", params={"limit": "many"}).status_code == 400
    assert op.get("/v1/log", params={"since": "nan"}).status_code == 400
    assert op.get("/v1/prompts/p1/wait", params={"timeout": -1}).status_code == 400
    r = op.get("/v1/events", params={"card": "c1"}, headers={"Last-Event-ID": "abc"})
    assert r.status_code == 400 and r.json()["reason"] == "last-event-id"
    assert op.get("/v1/events").status_code == 400  # the operator names the card


def test_engine_refusals_are_problems_and_change_nothing(canvas) -> None:
    """Well-formed but invalid: an arrow to a missing node, a bad node field, a bad manifest."""
    op = canvas.client()
    before = snapshot(canvas.db)
    r = op.post("/v1/workspaces/w1/arrows", json={"id": "e9", "from": "c1", "to": "ghost"})
    assert r.status_code in (400, 404) and r.json()["code"] in ("INVALID_ARROW", "NOT_FOUND")
    r = op.post("/v1/workspaces/w1/nodes", json={"id": "t9", "type": "terminal",
                                                 "shell": "zsh"})
    assert r.status_code == 400 and r.json()["code"] == "INVALID_NODE"
    after = snapshot(canvas.db)
    # a refused consent attempt is history; nothing else moved
    assert {k: v for k, v in after.items() if k != "consent"} == \
        {k: v for k, v in before.items() if k != "consent"}


def test_the_body_limit_hands_on_what_it_need_not_count() -> None:
    """A request with a declared length within the limit, or with no body at all (neither
    a length nor a transfer coding, RFC 9112 §6.3), goes to the app as the app's own
    awaitable, with the server's own ``receive``: no coroutine of the limit's own. A
    body sent chunked is counted as it arrives, and one past the limit refused."""
    import asyncio

    from engine.service.problems import BodyLimit

    seen: list[object] = []

    class Inner:
        """Stands for the app: what it was given, and an awaitable of its own."""

        def __call__(self, scope, receive, send):
            seen.append(receive)
            return self.run(receive, send)

        async def run(self, receive, send):
            while (await receive()).get("more_body"):
                pass
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})

    limit = BodyLimit(Inner(), limit=10)

    def scope(*headers: tuple[bytes, bytes]) -> dict[str, object]:
        return {"type": "http", "method": "POST", "path": "/v1/calls", "headers": list(headers)}

    async def run(s: dict[str, object], chunks: list[bytes]) -> tuple[object, list[dict]]:
        sent: list[dict] = []
        left = list(chunks)

        async def receive() -> dict:
            body = left.pop(0) if left else b""
            return {"type": "http.request", "body": body, "more_body": bool(left)}

        async def send(message: dict) -> None:
            sent.append(message)

        seen.clear()
        awaitable = limit(s, receive, send)
        handed_on = seen[0] if seen else None
        await awaitable
        assert sent[0]["status"] in (200, 413)
        # Handed on: the app's own coroutine, given the server's own receive.
        own = getattr(awaitable, "cr_code", None) is Inner.run.__code__
        return own and handed_on is receive, sent

    async def main() -> None:
        # Handed on as they are: the inner app's coroutine itself, the server's receive.
        for s, body in ((scope((b"content-length", b"4")), [b"1234"]), (scope(), []),
                        (scope((b"host", b"a")), [])):
            direct, sent = await run(s, body)
            assert direct and sent[0]["status"] == 200
        # Counted: a chunked body within the limit passes, one past it is refused.
        chunked = scope((b"transfer-encoding", b"chunked"))
        direct, sent = await run(chunked, [b"12345", b"678"])
        assert not direct and sent[0]["status"] == 200
        direct, sent = await run(chunked, [b"123456", b"789012"])
        assert not direct and sent[0]["status"] == 413
        # A declared length past the limit is refused at once.
        direct, sent = await run(scope((b"content-length", b"11")), [b"x" * 11])
        assert not direct and sent[0]["status"] == 413

    asyncio.run(main())
