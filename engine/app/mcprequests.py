"""A client's request that the MCP SDK would refuse, refused by ``arrowgate mcp`` naming why.

The SDK's server session reads each request as one of MCP's (``ClientRequest``) and,
before ``initialize``, refuses all but ``ping``; either way it answers -32602 "Invalid
request parameters" with empty data, whatever was wrong: a method MCP does not have
(JSON-RPC's -32601 "Method not found"), params MCP does not take, a request that is
only early. And a request refused for being early stays in the session's table of
requests in flight for good (it is entered there before the check, and only an answer
through a handler takes it out), so a client could grow the bridge without bound.

`RequestCheck` sees every request the SDK is about to be given, in order, and answers
those the SDK would refuse itself, saying why; the SDK only ever gets requests it serves.
"""

from __future__ import annotations

import json
import typing
from typing import Any

__all__ = ["RequestCheck"]

#: Requests the SDK serves before ``initialize`` (as its session does).
_BEFORE_INITIALIZE = frozenset({"initialize", "ping"})


def _requests() -> dict[str, Any]:
    """MCP's client requests, by method: the model the SDK reads each one as."""
    from mcp import types

    by_method: dict[str, Any] = {}
    for model in typing.get_args(types.ClientRequest.model_fields["root"].annotation):
        for method in typing.get_args(model.model_fields["method"].annotation):
            by_method[method] = model
    return by_method


def _error(rid: int | str, code: int, message: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": code,
                                                              "message": message}},
                      separators=(",", ":")).encode() + b"\n"


class RequestCheck:
    """Whether the SDK would serve a request; the error response naming why not.

    Follows the SDK session's own state: initialized once it has read a valid
    ``initialize`` request or ``notifications/initialized`` (`seen`).
    """

    def __init__(self) -> None:
        self._requests = _requests()
        #: The SDK's session is initialized (it serves every request).
        self.initialized = False

    def seen(self, method: str, message: dict[str, Any]) -> None:
        """A notification the SDK is given (``message`` as JSON)."""
        if method == "notifications/initialized" and not self.initialized:
            from mcp import types

            try:
                types.InitializedNotification.model_validate(message)
            except ValueError:
                return  # the SDK does not read it either: still not initialized
            self.initialized = True

    def refusal(self, rid: int | str, method: str, message: dict[str, Any]) -> bytes | None:
        """The error response to request ``rid`` (``message`` as JSON) when the SDK would
        refuse it, naming why; None when the SDK serves it.

        A method MCP does not have is -32601; params MCP does not take -32602, naming the
        first field wrong and how; a request before ``initialize`` (but ``ping``) -32600.
        """
        model = self._requests.get(method)
        if model is None:
            return _error(rid, -32601, f"Method not found: MCP has no method {method!r}")
        try:
            model.model_validate(message)
        except ValueError as exc:
            return _error(rid, -32602, f"Invalid params for {method}: {_first_error(exc)}")
        if not self.initialized:
            if method not in _BEFORE_INITIALIZE:
                return _error(rid, -32600, f"{method} before initialize: a client sends "
                                           "initialize first (MCP's handshake), then its "
                                           "requests")
            if method == "initialize":
                self.initialized = True  # the SDK's session is, once it has answered it
        return None


def _first_error(exc: ValueError) -> str:
    """The first error of a pydantic validation: where (``params.name``) and what."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return str(exc).splitlines()[0][:300]
    first = errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "the request"
    return f"{where}: {first.get('msg', 'not valid')}"[:300]
