"""A card or an agent holds at most `MAX_LIVE_TOKENS` live service tokens: a mint past
them is refused, INVALID_ARGUMENT reason ``too-many-tokens``, naming the principal, the
bound and what to do, and mints nothing; a revoked token no longer counts, and each node
has a bound of its own (SPEC §10.1; hostile input never floods the engine).

Found in round 32 (bounds32; earlier rounds left it: "only a person mints"): a script
minting in a loop, by ``POST /v1/tokens`` or ``arrowgate token mint``, made live tokens
for one card without end, each a standing credential for it kept in the store.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.service.conftest import build_canvas
from tests.service.test_card_reads_only_its_own_past import _served

#: The bound, as the code under test has it (64 when it had none, to show the flood).
try:
    from engine.service.minting import MAX_LIVE_TOKENS
except ImportError:
    MAX_LIVE_TOKENS = 64


def _mint(op: Any, principal: str) -> Any:
    return op.post("/v1/tokens", json={"principal": principal})


@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_card_mints_at_most_its_bound_of_live_tokens(
        store: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The bound's worth of mints stand; the next is refused naming it; one revoked makes
    room for one; another card mints as ever."""
    with _served(store, tmp_path, request) as client:
        op = client(None)
        build_canvas(op, tmp_path / "proj")
        # GIVEN a card with as many live tokens as it may hold
        minted = []
        for _ in range(MAX_LIVE_TOKENS):
            r = _mint(op, "card:c1")
            assert r.status_code == 201, r.text
            minted.append(r.json())
        # WHEN another is minted for it
        r = _mint(op, "card:c1")
        # THEN it is refused, naming the card, the bound and what to do
        assert r.status_code == 400, (r.status_code, r.text[:300])
        problem = r.json()
        assert problem["code"] == "INVALID_ARGUMENT" and problem["reason"] == "too-many-tokens"
        assert "card:c1" in problem["message"] and f"{MAX_LIVE_TOKENS}" in problem["message"]
        assert "revoke" in problem["message"], problem["message"]
        # AND the tokens it has still act for it
        assert client(minted[-1]["token"]).get("/v1/log").status_code == 200
        # AND another card mints as ever; one revoked makes room for exactly one
        assert _mint(op, "card:c2").status_code == 201
        assert op.delete(f"/v1/tokens/{minted[0]['id']}").status_code == 204
        assert _mint(op, "card:c1").status_code == 201
        assert _mint(op, "card:c1").status_code == 400
