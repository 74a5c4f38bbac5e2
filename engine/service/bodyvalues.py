"""The bound on the JSON values of a request body, told before the body is read; and
the route class that holds a request to it and its query to the route's parameters.

The body limit (`engine.service.problems.BodyLimit`) bounds a body's bytes; a
body within it can still build many times its size once read: 8 MiB of empty
objects is 2.8 million of them, some 300 MB. So a body is counted first
(`engine.core.jsoncount`, at the cost of its length) and one of more than
`MAX_BODY_VALUES` values is 413 ``too-large``, unread, wherever it would be
read: by the lane (`engine.service.fastlane`) and by FastAPI's routes, whose
reading `BoundedRoute` puts behind the count. `BoundedRoute` also refuses a
query parameter the route does not take (`engine.service.queryparams`), once
who calls is known and before the rest of the request is read.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException

from engine.core.jsoncount import holds_more_values
from engine.service.queryparams import QueryParameters, query_checked

__all__ = ["MAX_BODY_VALUES", "BoundedRoute", "TooManyBodyValues", "too_many_values"]

#: The most JSON values a request body may hold. The largest bodies a client sends
#: are a package's (at most 10,000 files and a manifest of at most 512 KiB as compact
#: JSON) and data within a workspace's ``max_payload`` (256 KiB by default): tens of
#: thousands of values. Read, a body at the bound holds at most some 30 MB.
MAX_BODY_VALUES = 1 << 18


class TooManyBodyValues(StarletteHTTPException):
    """A body of more than `MAX_BODY_VALUES` values: 413, reason ``too-large``.

    An HTTPException, so that FastAPI, which turns any other error met while
    reading a body into a 400, lets it through to the service's handlers.
    """

    def __init__(self) -> None:
        super().__init__(413, f"the request body holds more than {MAX_BODY_VALUES:,} JSON "
                              "values (its commas and brackets counted); it was not read")


def too_many_values(raw: bytes | bytearray) -> bool:
    """Whether a body holds more than `MAX_BODY_VALUES` values, told before it is read."""
    return holds_more_values(raw, MAX_BODY_VALUES)


class _BoundedRequest(Request):
    """A request whose JSON body is counted before it is read, then read as Starlette's
    `Request.json` reads it (json's reader: FastAPI's errors stay its own)."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            body = await self.body()
            if too_many_values(body):
                raise TooManyBodyValues()
            self._json = _read_json_body(body)
        return self._json


def _read_json_body(body: bytes) -> Any:
    """``json.loads(body)``, where each way a body is not JSON the service reads is a
    `json.JSONDecodeError` that says which.

    FastAPI makes a `json.JSONDecodeError` a 400 naming its message; any other error
    of a reader it words "There was an error parsing the body", naming nothing: a
    body nested past Python's recursion limit, an integer of more digits than Python
    converts, bytes that are not UTF-8 (or UTF-16, UTF-32).
    """
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", "", 0) from None
    except UnicodeDecodeError as exc:
        raise json.JSONDecodeError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                                   "", 0) from None
    except ValueError as exc:
        if "integer string conversion" not in str(exc):
            raise
        most = sys.get_int_max_str_digits()
        raise json.JSONDecodeError(f"holds a number of more than {most:,} digits", "",
                                   0) from None


class BoundedRoute(APIRoute):
    """A FastAPI route whose request body is held to `MAX_BODY_VALUES` before it is read,
    and whose query holds only the parameters it declares, each once (else a 400,
    `QueryParameters.refusal`, once every dependency of the route is solved)."""

    #: The query parameters the route takes: its own declaration's.
    query: QueryParameters

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, query_checked(endpoint, lambda: self.query), **kwargs)
        self.query = QueryParameters.of(f"{'/'.join(sorted(self.methods or ()))} {self.path}",
                                        self.dependant)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def bounded(request: Request) -> Response:
            return await handler(_BoundedRequest(request.scope, request.receive))

        return bounded
