"""One agent has one live MCP token: setting an agent up again, even after a restart of
the app (a new `MCPService`), revokes the token its token file held before writing the
new one.

(Found by a helper: `MCPService.setup` revoked only a token the same object had minted,
an in-memory dict, so every restart left one more live agent token in the store, usable
by any process of an earlier run that kept it.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.effects.drivers import MCPService
from engine.service.auth import TokenStore


async def test_a_restart_revokes_the_agent_token_its_file_held(tmp_path: Path,
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
        await service().setup("a2", "claude-code", tmp_path / "ws")   # another agent
        assert store.lookup(second) is not None, "another agent's setup revoked a1's token"
    finally:
        store.close()
