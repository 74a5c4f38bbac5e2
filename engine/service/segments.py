"""A request whose path holds an encoded ``/`` (``%2F``) reaches no route (SPEC §10.1).

The server decodes a request's path before the routes match it, so ``%2F`` would
become a separator: ``GET /v1/tool-calls/tc1%2Fwait``, a question about the tool
call ``tc1/wait``, would be tc1's wait route. No id holds ``/``
(`engine.core.text.id_problem`; the engine makes the others), so such a request
names nothing that exists: it is answered 404, saying why, and no route sees it.
"""

from __future__ import annotations

import re

from starlette.responses import Response

from engine.core.errors import with_code
from engine.service.problems import problem

__all__ = ["encoded_slash"]

_SLASH = re.compile(rb"%2[fF]")


def encoded_slash(raw_path: bytes) -> Response | None:
    """The 404 answer to a request whose undecoded path is ``raw_path`` when it holds an
    encoded ``/``; else None."""
    if _SLASH.search(raw_path) is None:
        return None
    return problem(404, "NOT_FOUND", with_code("NOT_FOUND", (
        "no route takes a path holding an encoded '/' (%2F): an id is one path segment and "
        "holds no '/'")), reason="route")
