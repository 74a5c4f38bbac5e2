"""Service tokens other connections revoked, as the store's catch-up finds them.

Every server on one store keeps a cache of the tokens it has checked
(`engine.service.auth.TokenStore`). A revocation through another server (or
the removal of a token's node) is a change of ``service_tokens``, and the
store's change feed names the token (kind ``token``, its id: SQLite's triggers
of migration m018; on PostgreSQL the revocation's own change, or the removal's
batch). The store's catch-up with other connections (`Store.sync`, or a batch's
opening) hands what it read here, and each listener drops those tokens.

When the catch-up cannot tell what changed (the store reloaded the whole
state: too far behind, or an unreadable change), listeners are told that any
token may have changed (None), and drop everything they keep (fail closed).
"""

from __future__ import annotations

from collections.abc import Callable, Collection

__all__ = ["TokenFeed", "TokenListener"]

#: Told the ids of tokens revoked (or deleted) elsewhere, or None: any may have been.
TokenListener = Callable[[Collection[str] | None], None]


class TokenFeed:
    """Where one store's catch-up tells who listens which tokens changed elsewhere."""

    __slots__ = ("_listeners",)

    def __init__(self) -> None:
        self._listeners: list[TokenListener] = []

    def listen(self, listener: TokenListener) -> None:
        """Tell ``listener`` of every token change the store's catch-up reads from now on."""
        self._listeners.append(listener)

    def unlisten(self, listener: TokenListener) -> None:
        """Stop telling ``listener`` (a token cache being closed); unknown: nothing."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def changed(self, ids: Collection[str] | None) -> None:
        """The catch-up read that these tokens changed (None: it cannot tell which)."""
        for listener in list(self._listeners):
            listener(ids)
