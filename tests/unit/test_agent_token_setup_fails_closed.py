"""Setting an agent's MCP token up fails closed and one at a time: a token file that cannot
be read (to revoke the token it holds) stops the setup with an error naming the file and
mints nothing, and two setups of one agent at once still leave one live token.

(Found by the second review: a `PermissionError` or `IsADirectoryError` reading the old
token file escaped `MCPService.setup`, and two concurrent setups for one agent could both
find no previous token and each mint one, leaving two live.)
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from engine.effects.drivers import MCPService, TokenFileUnreadable


class _Minter:
    """A token store whose mint yields to the loop, as a real store's write may."""

    def __init__(self) -> None:
        self.live: dict[str, str] = {}  # token -> principal
        self.minted = 0

    async def mint(self, principal: str) -> tuple[str, str]:
        await asyncio.sleep(0)
        self.minted += 1
        token = f"tok{self.minted}"
        await asyncio.sleep(0)
        self.live[token] = principal
        return token, token

    async def revoke(self, token_id: str) -> bool:
        return self.live.pop(token_id, None) is not None

    def lookup(self, token: str) -> tuple[str, object] | None:
        principal = self.live.get(token)
        return (token, principal) if principal is not None else None


def _service(tmp_path: Path, minter: _Minter) -> MCPService:
    return MCPService(service="/run/ag/serve.sock", tokens=minter,
                      token_dir=tmp_path / "tokens", run_dir=tmp_path / "runs",
                      arrowgate="/opt/bin/arrowgate")


async def test_an_unreadable_token_file_stops_the_setup_naming_it(tmp_path: Path) -> None:
    """A token file that is a folder: a clear error naming it, and no token minted."""
    minter = _Minter()
    (tmp_path / "tokens" / "a1.token").mkdir(parents=True)
    with pytest.raises(TokenFileUnreadable, match="a1.token") as caught:
        await _service(tmp_path, minter).setup("a1", "claude-code", tmp_path / "ws")
    assert isinstance(caught.value, ValueError)  # `start_drivers` reports it: not started
    assert minter.minted == 0 and minter.live == {}


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of mode 000")
async def test_a_token_file_it_may_not_read_stops_the_setup(tmp_path: Path) -> None:
    """A token file of mode 000: a clear error naming it, the file left as it was."""
    minter = _Minter()
    service = _service(tmp_path, minter)
    await service.setup("a1", "claude-code", tmp_path / "ws")
    path = tmp_path / "tokens" / "a1.token"
    path.chmod(0)
    try:
        with pytest.raises(TokenFileUnreadable, match=str(path)):
            await service.setup("a1", "claude-code", tmp_path / "ws")
    finally:
        path.chmod(0o600)
    assert minter.minted == 1 and list(minter.live) == [path.read_text()]


async def test_two_setups_of_one_agent_at_once_leave_one_live_token(tmp_path: Path) -> None:
    """Setups of one agent take turns: the second revokes the token the first wrote."""
    minter = _Minter()
    service = _service(tmp_path, minter)
    await asyncio.gather(service.setup("a1", "claude-code", tmp_path / "ws"),
                         service.setup("a1", "claude-code", tmp_path / "ws"))
    assert list(minter.live) == [(tmp_path / "tokens" / "a1.token").read_text()], \
        f"live tokens: {minter.live}"
