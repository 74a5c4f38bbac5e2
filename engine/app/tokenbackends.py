"""What ``arrowgate token mint|revoke|list`` work on: the store itself (``--db`` or
``--store``), or a running ``arrowgate serve`` (``--service``).

Either way a token is minted by one rule (`engine.service.minting.mint_node_token`
on the engine, ``POST /v1/tokens`` through the service, which calls it) and kept
hashed in the store, so every server on it accepts the token at once; a revocation
through the store is on its change feed, so every server refuses the token at its
next request. ``token list`` reads the store: the service has no route that lists
tokens (SPEC §10.1), and none is added for it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from engine.app.serviceclient import ServiceBackend, _seg, service_token
from engine.app.writefailure import USAGE, Failure
from engine.core.errors import NotFound

if TYPE_CHECKING:
    from engine.engine import Engine
    from engine.store.base import TokenRow
    from engine.store.pg.store import PGStore

__all__ = ["LocalTokens", "ServiceTokens", "Tokens", "listing", "open_tokens"]


class Tokens(Protocol):
    """What the token verbs need, from the engine or from the service."""

    async def check_principal(self, kind: str, node: str, workspace: str | None) -> list[str]:
        """Refuse a principal whose node is not there (`NotFound`); the folders of the
        workspaces known here, inside which a token file must not be written."""
        ...

    async def mint_token(self, kind: str, node: str) -> tuple[str, str]:
        """A new token for ``kind:node``: ``(id, token)``."""
        ...

    async def revoke_token(self, token_id: str) -> None:
        """Revoke a live token (`NotFound` when none has that id)."""
        ...

    async def aclose(self) -> None:
        """Close what was opened."""
        ...


def _path(args: argparse.Namespace, *, writes: bool) -> Path:
    """The database ``--db`` names, checked as every write verb's is."""
    from engine.app.common import CliError, db_path

    try:
        return db_path(args, writes=writes)
    except CliError as exc:
        message = exc.message if args.db else f"{exc.message} (or give --db, --store or --service)"
        raise Failure(USAGE, message) from exc


def _one_place(args: argparse.Namespace) -> None:
    """Refuse a verb told to work in two places at once."""
    if args.store and (args.db or args.service):
        raise Failure(USAGE, f"give --store or {'--db' if args.db else '--service'}, not both")


def _pg_store(args: argparse.Namespace) -> PGStore:
    """The PostgreSQL store ``--store`` names, never made here: a database without
    arrowgate's schema has no node to mint for, nor tokens to list."""
    from engine.store.pg.store import PGStore, is_postgres_url

    if not is_postgres_url(args.store):
        raise Failure(USAGE, "--store takes a postgresql:// URL")
    return PGStore.open(args.store, existing=True)


def open_tokens(args: argparse.Namespace) -> Tokens:
    """The tokens of the store ``--db``/``--store`` names, or of the service at ``--service``."""
    _one_place(args)
    if args.service:
        return ServiceTokens(args.service, service_token(args))
    from engine.engine import Engine

    if args.store:
        return LocalTokens(Engine.open(store=_pg_store(args)))
    return LocalTokens(Engine.open(_path(args, writes=True)))


class LocalTokens:
    """The store's token table, beside the engine on it (the canvas the principal names)."""

    def __init__(self, engine: Engine) -> None:
        from engine.service.auth import TokenStore
        from engine.service.made import Made

        self.engine = engine
        try:
            self.tokens = TokenStore(engine.store.tokens())
        except BaseException:
            engine.close()
            raise
        self.made = Made(engine)

    async def check_principal(self, kind: str, node: str, workspace: str | None) -> list[str]:
        """The node is on a canvas (in ``workspace``, when given) and of that kind; every
        workspace's folder."""
        state = self.engine.state
        if workspace is not None and workspace not in state.workspaces:
            raise NotFound(f"no workspace {workspace!r}", reason="missing-workspace")
        found = state.canvas.node(node)
        if found is None or found.type != kind:
            raise NotFound(f"no {kind} {node!r} on any canvas", reason=f"missing-{kind}")
        if workspace is not None and found.workspace != workspace:
            raise NotFound(f"no {kind} {node!r} in workspace {workspace!r} (it is in "
                           f"{found.workspace!r})", reason=f"missing-{kind}")
        return [ws.folder for ws in state.workspaces.values()]

    async def mint_token(self, kind: str, node: str) -> tuple[str, str]:
        """Mint as ``POST /v1/tokens`` does (`mint_node_token`)."""
        from engine.service.minting import mint_node_token

        return await mint_node_token(self.engine, self.tokens, self.made, kind, node)

    async def revoke_token(self, token_id: str) -> None:
        """Revoke a live token; on the store's change feed for every server on it."""
        if not await self.tokens.revoke(token_id):
            raise NotFound(f"no live token {token_id!r}", reason="missing-token")

    async def aclose(self) -> None:
        """Close the token table and the engine."""
        try:
            self.tokens.close()
        finally:
            self.engine.close()


class ServiceTokens(ServiceBackend):
    """A running ``arrowgate serve``'s tokens (``POST /v1/tokens``, ``DELETE
    /v1/tokens/{id}``), with the operator's token."""

    async def check_principal(self, kind: str, node: str, workspace: str | None) -> list[str]:
        """With ``workspace``: it exists, and the node is in it (its folder is answered);
        else ``POST /v1/tokens`` checks the node itself (no folder is known)."""
        if workspace is None:
            return []
        seg = _seg(workspace)
        folder = (await self._request("GET", f"/v1/workspaces/{seg}")).get("folder")
        nodes = await self._request("GET", f"/v1/workspaces/{seg}/nodes")
        if not any(isinstance(n, dict) and n.get("id") == node and n.get("type") == kind
                   for n in nodes):
            raise NotFound(f"no {kind} {node!r} in workspace {workspace!r}",
                           reason=f"missing-{kind}")
        return [folder] if isinstance(folder, str) else []

    async def mint_token(self, kind: str, node: str) -> tuple[str, str]:
        """``POST /v1/tokens``."""
        answer: Any = await self._request("POST", "/v1/tokens", {"principal": f"{kind}:{node}"})
        token_id = answer.get("id") if isinstance(answer, dict) else None
        token = answer.get("token") if isinstance(answer, dict) else None
        if not isinstance(token_id, str) or not isinstance(token, str):
            raise Failure(USAGE, f"the service at {self.address} answered no token: "
                                 f"{str(answer)[:200]}")
        return token_id, token

    async def revoke_token(self, token_id: str) -> None:
        """``DELETE /v1/tokens/{id}``."""
        await self._request("DELETE", f"/v1/tokens/{_seg(token_id)}")


def listing(args: argparse.Namespace, *, live_only: bool) -> list[TokenRow]:
    """The tokens of the store ``--db`` (read as it stands, nothing written) or ``--store``
    names; through ``--service``, refused: the service has no route that lists them.

    Raises:
        Failure: ``--service``, or a store that cannot be used as named.
        StoreFailed: the store cannot be read.
    """
    _one_place(args)
    if args.service:
        raise Failure(USAGE, "token list reads the store: give --db or --store (the service "
                             "has no route that lists tokens; the ids a mint printed revoke "
                             "through --service)")
    if args.store:
        store = _pg_store(args)
        try:
            table = store.tokens()
            try:
                return table.listing(live_only=live_only)
            finally:
                table.close()
        finally:
            store.close()
    import sqlite3

    from engine.store.tokens import token_rows
    from engine.store.view import StoreView

    try:
        view = StoreView(_path(args, writes=False))
    except sqlite3.DatabaseError as exc:
        raise Failure(USAGE, f"the database cannot be used: {exc}") from exc
    with view:
        return token_rows(view.db.conn, live_only=live_only)
