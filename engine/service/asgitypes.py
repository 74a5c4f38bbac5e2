"""The ASGI interface's types as the service's modules write them: a scope and a message
are mappings, an application a coroutine of scope, receive and send (the ASGI
specification, version 3).

A module of their own so that any module of the service can name them without
importing another that may import it (`engine.service.methods`, which
`engine.service.problems` imports, names them)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["ASGIApp", "Message", "Receive", "Scope", "Send"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
