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
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.core.errors import NotFound

if TYPE_CHECKING:
    from engine.engine import Engine
    from engine.service.auth import TokenStore
    from engine.service.made import Made

__all__ = ["mint_node_token"]


async def mint_node_token(engine: Engine, tokens: TokenStore, made: Made, kind: str,
                          node_id: str) -> tuple[str, str]:
    """Mint a token for ``kind:node_id`` (``card`` or ``agent``); ``(id, token)``.

    Raises:
        NotFound: no node ``node_id`` of that kind on any canvas (reason
            ``missing-card`` or ``missing-agent``), now or once the token was written
            (then it is revoked).
        StoreFailed: the store cannot be read or written.
    """
    engine.catch_up()  # a node another engine just placed gets its token
    node = engine.state.canvas.node(node_id)
    if node is None or node.type != kind:
        raise NotFound(f"no {kind} {node_id!r} on any canvas", reason=f"missing-{kind}")
    since = made.since(node_id)
    token_id, token = await tokens.mint(f"{kind}:{node_id}")
    engine.catch_up()
    node = engine.state.canvas.node(node_id)
    if node is None or node.type != kind or made.since(node_id) != since:
        await tokens.revoke(token_id)
        raise NotFound(f"no {kind} {node_id!r} on any canvas: it was removed while its "
                       "token was made (the token is revoked)", reason=f"missing-{kind}")
    return token_id, token
