"""Generated call bodies are answered alike by every way in.

Three ways a ``POST /v1/calls`` / ``calls:batch`` body is answered: taken whole by
the lane (`FastLane.take`, the body in one read with a declared length), by the
lane in a task (`FastLane.__call__`: a chunked body), and by the documented
FastAPI route (the app without the lane in front). Bodies are generated with
odd ids and texts (escapes, a lone surrogate, NUL, lengths at the model's
bounds), duplicate keys, null against missing, extra fields, numbers json
and orjson read differently (``1e999``, ``-0``, ``NaN``, integers past 64 bits),
nesting, BOM, whitespace, trailing garbage, UTF-16, truncation.

Content types FastAPI reads as JSON and those it does not are drawn too (the
lane reads a body as JSON exactly when FastAPI's route does: test_lane_content_type).
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.service.conftest import Running, TwoApps, build_canvas, log_rows, mint, two_apps
from tests.service.test_fastlane import _read_answer

_ODD = st.sampled_from(["c1", "c2", "a1", "n1", "", "c1\x00", "\u00e9", "\ud800", "x" * 256,
                        "x" * 257, "x" * 128, "x" * 129, "agents.prompt", "agents.list",
                        "clipboard.write", "\u2028", "c1 ", "C1"])
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
    | st.floats(allow_nan=True) | st.text(max_size=5) | _ODD,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3) | _ODD,
                                                                inner, max_size=3),
    max_leaves=6)
_FIELD = st.one_of(_ODD, _JSON)
_CALL = st.fixed_dictionaries({}, optional={
    "card": _FIELD, "call": _FIELD, "target": _FIELD, "context": _FIELD, "confirmed": _JSON,
    "args": st.none() | st.dictionaries(st.text(max_size=4), _JSON, max_size=3) | _JSON})


@st.composite
def _bodies(draw: Any, batch: bool = True) -> tuple[str, bytes]:
    single = not batch or draw(st.booleans())
    data = draw(_CALL) if single else {"calls": draw(st.lists(_CALL, max_size=3))}
    text = json.dumps(data, ensure_ascii=draw(st.booleans()), allow_nan=True)
    raw = text.encode("utf-8", "surrogatepass")
    how = draw(st.sampled_from(["as-is", "bom", "space", "garbage", "dup", "utf16", "cut",
                                "bigint", "number", "empty"]))
    if how == "empty":
        raw = b""
    elif how == "bom":
        raw = b"\xef\xbb\xbf" + raw
    elif how == "space":
        raw = b" \n\t" + raw + b" \r\n"
    elif how == "garbage":
        raw += draw(st.sampled_from([b"x", b"\x00", b"{}", b"\xff"]))
    elif how == "dup" and raw.startswith(b"{") and len(raw) > 2:
        raw = b"{" + draw(st.sampled_from([b'"card": 1, ', b'"card": "c2", ', b'"call": null, ',
                                           b'"args": {}, '])) + raw[1:]
    elif how == "utf16":
        raw = text.encode("utf-16", "surrogatepass")
    elif how == "cut":
        raw = raw[:draw(st.integers(1, max(1, len(raw) - 1)))]
    elif how == "bigint":
        raw = raw.replace(b'"c1"', b"123456789012345678901234567890", 1)
    elif how == "number":
        raw = raw.replace(b'"c1"', draw(st.sampled_from([b"1e999", b"-0", b"NaN", b"-Infinity",
                                                         b"0.1e-400"])), 1)
    return ("/v1/calls" if single else "/v1/calls:batch"), raw


def _same(answer: Any) -> Any:
    """An answer without what differs from one call to the next (ids, clocks)."""
    if isinstance(answer, dict):
        if "decisions" in answer:
            return {"decisions": [_same(d) for d in answer["decisions"]]}
        return {k: v for k, v in answer.items()
                if k not in ("retry_after", "message", "prompt", "value", "instance")}
    return answer


MANIFEST = {"name": "acme.p", "version": "1.0.0",
            "permissions": {"agents.prompt": {}, "clipboard.write": {}}}


def test_generated_bodies_lane_and_fastapi_alike(tmp_path: Path) -> None:
    """The lane in its task and the FastAPI route: same status, type and answer."""
    loop = asyncio.new_event_loop()

    async def setup() -> tuple[TwoApps, dict[str, str]]:
        apps = await two_apps(tmp_path, [MANIFEST],
                              [{"id": "c1", "type": "card", "package": "acme.p"},
                               {"id": "c2", "type": "card", "package": "acme.p"},
                               {"id": "a1", "type": "agent"}], max_body=4096)
        return apps, {"op": apps.operator, "c1": (await apps.tokens.mint("card:c1"))[1]}

    apps, who = loop.run_until_complete(setup())

    async def both(path: str, raw: bytes, headers: dict[str, str]) -> list[Any]:
        out = []
        for app in (apps.lane, apps.fastapi):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                         base_url="http://x") as client:
                r = await client.post(path, content=raw, headers=headers)
            out.append((r.status_code, r.headers["content-type"], _same(r.json())))
        return out

    @settings(max_examples=300, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(_bodies(), st.sampled_from(["application/json", "application/json; charset=utf-8",
                                       "APPLICATION/JSON", "application/vnd.x+json",
                                       "text/plain", "", "text/x+json", "application/json/x",
                                       "application/ json"]),
           st.sampled_from(["op", "c1"]))
    def check(body: tuple[str, bytes], content_type: str, token: str) -> None:
        path, raw = body
        lane, fastapi = loop.run_until_complete(both(path, raw, {
            "Authorization": f"Bearer {who[token]}", "Content-Type": content_type}))
        assert lane == fastapi, (path, raw)

    try:
        check()
    finally:
        apps.close()
        loop.close()


def test_generated_bodies_taken_and_in_a_task_alike(unix_server: Running,
                                                         tmp_path: Path) -> None:
    """On a real server: a body taken whole (`FastLane.take`) and the same body chunked
    (the lane in its task): same status, answer and number of log rows written."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    tokens = {"op": unix_server.token, "c1": mint(op, "card:c1")}

    def send(sock: socket.socket, stream: Any, token: str, raw: bytes,
             chunked: bool) -> tuple[Any, ...]:
        head = (f"POST /v1/calls HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                "Content-Type: application/json\r\n").encode()
        if chunked:
            chunk = b"%x\r\n%b\r\n" % (len(raw), raw) if raw else b""
            data = head + b"Transfer-Encoding: chunked\r\n\r\n" + chunk + b"0\r\n\r\n"
        else:
            data = head + b"Content-Length: %d\r\n\r\n%b" % (len(raw), raw)
        before = log_rows(unix_server.db)
        sock.sendall(data)
        status, headers, body = _read_answer(stream)
        return status, headers["content-type"], _same(json.loads(body)), \
            log_rows(unix_server.db) - before

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(unix_server.address)
        with sock.makefile("rb") as stream:
            # Calls that are decided alike each time they are made (no prompts: their
            # rate limit would tell the second from the first).
            @settings(max_examples=45, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))
            @given(_bodies(batch=False), st.sampled_from(["op", "c1"]))
            def check(body: tuple[str, bytes], token: str) -> None:
                raw = body[1].replace(b"agents.prompt", b"agents.list")
                taken = send(sock, stream, tokens[token], raw, False)
                in_task = send(sock, stream, tokens[token], raw, True)
                assert taken == in_task, raw

            check()
