"""A decision's answer as bytes, written as the FastAPI routes write it, for the lane.

`FastLane` answers the hot routes without FastAPI, and `engine.service.turns`
answers the calls it takes without a task; both write what the routes would
(`tests/service/test_fastlane.py` holds them to it), from these.
"""

from __future__ import annotations

import json
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import orjson

from engine.service.context import decision_json

if TYPE_CHECKING:
    from starlette.types import Send

    from engine.core.decision import Decision

__all__ = ["JSON_HEAD", "decision_bytes", "decisions_bytes", "encode", "encode_tool_call",
           "send_bytes"]

#: A JSON answer's header lines, its length to fill in.
JSON_HEAD = b"content-type: application/json\r\ncontent-length: %d\r\n"

#: Types orjson writes exactly as ``json.dumps`` reads them back (a float may be NaN,
#: which json writes and orjson does not; anything else goes through `json.dumps`).
_SIMPLE = frozenset({str, int, bool, type(None)})


def encode(data: dict[str, Any]) -> bytes:
    """An answer's JSON as the FastAPI routes write it (`json_response`).

    A decision's fields are strings, numbers and null but for ``value``, the
    call's own result; when every value is simple, orjson writes it (several
    times faster), else ``json.dumps`` with ``default=str`` as the routes do.
    """
    decisions = data["decisions"] if "decisions" in data else (data,)
    # Anything else (a tool call and its card's answer) is written json's way.
    if all("value" in d and type(d["value"]) in _SIMPLE for d in decisions):
        try:
            return orjson.dumps(data)
        except orjson.JSONEncodeError:
            pass  # a string with a lone surrogate, an integer past 64 bits: json's way
    return json.dumps(data, default=str, separators=(",", ":")).encode()


def encode_tool_call(data: dict[str, Any]) -> bytes:
    """A tool-call route's answer as JSON that reads back as the FastAPI route's.

    Its values are ids, states, codes, texts and the call's arguments and
    result, which the engine checked as JSON (`engine.core.manifest.check_json`:
    text keys, no NaN or infinity), so orjson writes them as ``json.dumps``
    reads them back (texts as UTF-8 rather than escaped), several times faster;
    what orjson refuses goes ``json.dumps``'s way, as `encode`'s does.
    """
    try:
        return orjson.dumps(data)
    except orjson.JSONEncodeError:
        return json.dumps(data, default=str, separators=(",", ":")).encode()


#: The fields of a decision's JSON (`decision_json`), read at once. `decision_bytes`
#: adds the types of the two that may be numbers or booleans to its key: they compare
#: equal across types (``True == 1 == 1.0``) but are written differently.
_DECISION_KEY = attrgetter("outcome", "call", "card", "package", "target", "permission", "code",
                           "reason", "arrow", "message", "retry_after", "prompt", "value")
#: A decision's JSON by its fields: a pure function of them (nothing in it can go stale),
#: kept for the decisions that repeat (the same card's same refusal, in a batch and
#: from call to call). Bounded: emptied when full.
_DECISION_BYTES: dict[tuple[Any, ...], bytes] = {}
_DECISION_BYTES_MAX = 4096


#: The same bytes by the Decision itself, for the decisions answered lately: the checks
#: hand back the very same Decision for a card's repeated refusal (they remember it), and
#: its bytes are then found without reading its thirteen fields for the key above: 1.0 k
#: instructions a call instead of 8.1 k (callgrind, in process, measured while every read
#: of a Decision still went through a ``__getattr__`` hook, which round 7's lazy
#: ``message`` descriptor removed: the fields are cheaper to read now). A Decision is
#: frozen and the fields its JSON is made of are immutable values (a ``value`` that is
#: not one of `_SIMPLE` is never kept), so its bytes cannot change. Each entry holds its
#: Decision, so no other object takes its id while it is kept. Bounded: emptied when full.
_BY_DECISION: dict[int, tuple[Decision, bytes]] = {}
_BY_DECISION_MAX = 256


def decision_bytes(d: Decision) -> bytes | None:
    """The decision's JSON as `encode` writes it, or None when only json's way will do."""
    kept = _BY_DECISION.get(id(d))
    if kept is not None and kept[0] is d:
        return kept[1]
    value, retry_after = d.value, d.retry_after
    if type(value) not in _SIMPLE:
        return None
    key = (*_DECISION_KEY(d), type(value), type(retry_after))
    data = _DECISION_BYTES.get(key)
    if data is None:
        try:
            data = orjson.dumps(decision_json(d))
        except orjson.JSONEncodeError:
            return None  # a string with a lone surrogate, an integer past 64 bits
        if len(_DECISION_BYTES) >= _DECISION_BYTES_MAX:
            _DECISION_BYTES.clear()
        _DECISION_BYTES[key] = data
    if len(_BY_DECISION) >= _BY_DECISION_MAX:
        _BY_DECISION.clear()
    _BY_DECISION[id(d)] = (d, data)
    return data


def decisions_bytes(decisions: list[Decision], batch: bool) -> bytes:
    """The answer to a call (one decision) or a batch, as bytes, written as `encode` would."""
    parts = []
    # A batch's refusals are often the very same Decision (the checks remember a
    # card's refusal): its bytes once per object. By identity, while ``decisions``
    # keeps every one alive (an id is not reused meanwhile); a Decision is frozen.
    seen: dict[int, bytes] = {}
    for d in decisions:
        data = seen.get(id(d))
        if data is None:
            data = decision_bytes(d)
            if data is None:
                answer = [decision_json(d) for d in decisions]
                return encode({"decisions": answer} if batch else answer[0])
            seen[id(d)] = data
        parts.append(data)
    return b'{"decisions":[' + b",".join(parts) + b"]}" if batch else parts[0]


async def send_bytes(send: Send, status: int, body: bytes) -> None:
    """Send a whole JSON answer through ASGI's ``send``."""
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
