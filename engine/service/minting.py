"""Minting a card's or an agent's token for a node on the canvas (SPEC §10.1).

One rule, wherever a token is minted by name: ``POST /v1/tokens`` and ``arrowgate
token mint`` (on the database, or through the service). The node must be on a canvas
now and of the principal's kind; and it must still be the same node once the token is
written, else the token is revoked at once: removing a node revokes the tokens it
finds in the store, not one still being written, so a node removed meanwhile (here or
by another engine on the store), and perhaps made again under its id, would leave the
token standing for the next node given that id.

Who may mint is the caller's to decide first: the operator, from a person's process
(SPEC §4.5).

A card or an agent holds at most `MAX_LIVE_TOKENS` live tokens: each is a standing
credential for it, and a script minting in a loop would otherwise make them without
end. Past the bound a mint is refused, saying what to revoke; a revoked token no
longer counts. The count and the write are one transaction of the store
(`TokenStore.mint_within`), so servers on one store minting for the same node at the
same moment cannot pass it between them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.core.errors import InvalidArgument, NotFound
from engine.core.text import named

if TYPE_CHECKING:
    from engine.engine import Engine
    from engine.service.auth import TokenStore
    from engine.service.made import Made

__all__ = ["MAX_LIVE_TOKENS", "mint_node_token"]

#: The most live tokens one card or agent holds. A driver keeps one per agent (it
#: revokes the last before it mints), a person a few; 64 is past any use but a loop.
MAX_LIVE_TOKENS = 64


async def mint_node_token(engine: Engine, tokens: TokenStore, made: Made, kind: str,
                          node_id: str) -> tuple[str, str]:
    """Mint a token for ``kind:node_id`` (``card`` or ``agent``); ``(id, token)``.

    Raises:
        NotFound: no node ``node_id`` of that kind on any canvas (reason
            ``missing-card`` or ``missing-agent``), now or once the token was written
            (then it is revoked).
        InvalidArgument: the node holds `MAX_LIVE_TOKENS` live tokens already
            (reason ``too-many-tokens``); nothing was minted.
        StoreFailed: the store cannot be read or written.
    """
    engine.catch_up()  # a node another engine just placed gets its token
    node = engine.state.canvas.node(node_id)
    if node is None or node.type != kind:
        raise NotFound(f"no {kind} {node_id!r} on any canvas", reason=f"missing-{kind}")
    principal = f"{kind}:{node_id}"
    since = made.since(node_id)
    minted = await tokens.mint_within(principal, MAX_LIVE_TOKENS)
    if isinstance(minted, int):
        raise InvalidArgument(
            f"{kind}:{named(node_id)} holds {minted} live tokens, the most a {kind} may hold "
            f"({MAX_LIVE_TOKENS}): revoke one it no longer uses (arrowgate token list, then "
            "token revoke ID; or DELETE /v1/tokens/ID), then mint again; nothing was minted",
            reason="too-many-tokens")
    token_id, token = minted
    engine.catch_up()
    node = engine.state.canvas.node(node_id)
    if node is None or node.type != kind or made.since(node_id) != since:
        await tokens.revoke(token_id)
        raise NotFound(f"no {kind} {node_id!r} on any canvas: it was removed while its "
                       "token was made (the token is revoked)", reason=f"missing-{kind}")
    return token_id, token
