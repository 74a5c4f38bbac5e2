"""k16: an agent's token from before a restart stays valid for good.

`MCPService.setup` revokes the token it replaces only when the *same object* minted
it (`minted`, an in-memory dict). Each start of the app builds a new `MCPService`,
mints the agent a new token and overwrites its token file, and the previous token —
whose file was "its only copy, so nothing legitimate still uses it" — is never
revoked: every restart leaves one more live agent token in the store, usable by any
process of an earlier run that kept it (an `arrowgate mcp` left over, a detached
child of the agent).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.effects.drivers import MCPService
from engine.service.auth import TokenStore


async def test_a_restart_revokes_the_agent_token_it_replaces(tmp_path: Path,
                                                             make_engine: Any) -> None:
    make_engine()  # the database and its token table
    store = TokenStore(tmp_path / "arrowgate.db")
    try:
        def service() -> MCPService:
            return MCPService(service="/run/ag/serve.sock", tokens=store,
                              token_dir=tmp_path / "tokens", run_dir=tmp_path / "runs",
                              arrowgate="/opt/bin/arrowgate")

        await service().setup("a1", "claude-code", tmp_path / "ws")   # first run
        first = (tmp_path / "tokens" / "a1.token").read_text()
        await service().setup("a1", "claude-code", tmp_path / "ws")   # after a restart
        second = (tmp_path / "tokens" / "a1.token").read_text()
        assert second != first and store.lookup(second) is not None
        assert store.lookup(first) is None, "the replaced agent token is still accepted"
    finally:
        store.close()
