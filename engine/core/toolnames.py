"""The name an agent calls a card's tool by (SPEC §10.2): ``<card>__<tool>``, as its
clients take names.

A tool's name is ``[a-z][a-z0-9_]{0,63}`` (SPEC §2), but a node's id is free printable
text, and the engine names a card's own copy ``<card>.self<n>`` (``canvas.spawn``). The
model APIs behind the agents refuse a tool name outside ``[A-Za-z0-9_-]`` (OpenAI's:
``^[a-zA-Z0-9_-]+$``; Anthropic's: ``^[a-zA-Z0-9_-]{1,128}$`` for the name Claude Code
makes of it, ``{1,64}`` in Claude Desktop) with an error for the whole request: one such
name in an agent's list stops the agent from working at all. So a name that would not
fit `CLIENT_NAME` is written so that it does: the card's id with every other character
as ``-``, cut to fit, and a tag of `TAG` hexadecimal digits of the SHA-256 of the card's
id and the tool's name (`agent_tool_name`), which keeps it apart from the names of other
cards' tools. Who calls by it is told the card and the tool too, so nothing is read
back out of the name; a name two tools share is left out by its lister.

The tag is 128 bits: card ids are anyone's text, and with 32 (round 25) two ids
written alike and tagged alike were found in a second, so a card placed beside
another hid that card's tool (the lister leaves out both). Two ids sharing 128 bits
is a search of 2**64 hashes. A written name never is another tool's plain name, nor
reads as one: it ends in ``-`` and hexadecimal digits, where ``<card>__<tool>``
ends in a tool's name, which holds no ``-``.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["CLIENT_NAME", "MAX_NAME", "TAG", "agent_tool_name"]

#: The longest tool name given to an agent: the strictest bound of its clients
#: (Claude Desktop), which leaves room for the prefix a client adds (Claude Code's
#: ``mcp__<server>__`` within the API's 128).
MAX_NAME = 64
#: A tool name every agent client takes.
CLIENT_NAME = re.compile(r"[A-Za-z0-9_-]{1,%d}" % MAX_NAME)
#: What `CLIENT_NAME` does not take.
_OTHER = re.compile(r"[^A-Za-z0-9_-]")
#: Hexadecimal digits of the tag of a written name (128 bits of a SHA-256).
TAG = 32


def agent_tool_name(card: str, tool: str) -> str:
    """The name card ``card``'s tool ``tool`` is given to agents.

    ``<card>__<tool>`` when that fits `CLIENT_NAME`; else that with every character
    `CLIENT_NAME` does not take written ``-``, cut to leave room for ``-`` and a tag of
    `TAG` hexadecimal digits of the SHA-256 of ``<card>`` NUL ``<tool>``, which follow it.
    """
    name = f"{card}__{tool}"
    if CLIENT_NAME.fullmatch(name):
        return name
    tag = hashlib.sha256(f"{card}\0{tool}".encode("utf-8", "surrogatepass")).hexdigest()[:TAG]
    return f"{_OTHER.sub('-', name)[:MAX_NAME - TAG - 1]}-{tag}"
