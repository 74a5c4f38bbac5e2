"""`MCPService` (what `Engine.start_drivers` is given) takes the service address by the
rule `arrowgate mcp` holds it to (`engine.core.serviceaddress`): an address its agents'
tokens must not go to is refused before any token is minted or configuration written.

(Found in round 29: ``MCPService(service="http://example.com:80")`` minted each agent a
token and wrote it into a configuration sending it there in clear.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.effects.drivers import MCPService


class _Minter:
    def __init__(self) -> None:
        self.minted = 0

    async def mint(self, principal: str) -> tuple[str, str]:
        self.minted += 1
        return "tok_1", "agt_1"

    async def revoke(self, token_id: str) -> bool:
        return False

    def lookup(self, token: str) -> tuple[str, object] | None:
        return None


@pytest.mark.parametrize("address", ["http://example.com:80", "http://u:p@127.0.0.1:8123",
                                     "http://127.0.0.1:8123/?q"])
async def test_an_address_off_this_machine_mints_nothing(tmp_path: Path, address: str) -> None:
    minter = _Minter()
    service = MCPService(service=address, tokens=minter, token_dir=tmp_path / "tokens",
                         run_dir=tmp_path / "runs", arrowgate="/opt/bin/arrowgate")
    with pytest.raises(ValueError, match="the service address"):
        await service.setup("a1", "claude-code", tmp_path / "ws")
    assert minter.minted == 0 and not (tmp_path / "tokens").exists()


async def test_the_socket_and_loopback_are_taken(tmp_path: Path) -> None:
    for address in ("/run/ag/serve.sock", "http://127.0.0.1:8123", "https://ag.example.com"):
        minter = _Minter()
        service = MCPService(service=address, tokens=minter, token_dir=tmp_path / "tokens",
                             run_dir=tmp_path / "runs", arrowgate="/opt/bin/arrowgate")
        setup = await service.setup("a1", "claude-code", tmp_path / "ws")
        assert setup.service == address and minter.minted == 1
